/**
 * Which messages one compaction reads the text of, so `compact` can hold only those in full and
 * slim copies of the rest (handed as plain data to read/index.ts readAgainInPart, which reads
 * the file again for them). Pure: it looks at the plan and the messages' structure, which slim
 * messages keep.
 *
 * What runCompaction (compact.ts) reads of the text:
 * - the span [start, cut): the strategy summarizes it, or prunes its outputs;
 * - for a summary, also every message after the span: the relevance filter drops a read that a
 *   later successful read of the same file supersedes, anywhere in the session, and whether that
 *   later read failed is in its output (the kept part is bounded by the keep budget);
 * - the tool calls before the span that results in it answer: the filter and prune name the
 *   tool, and prune's placeholder prints its arguments, which slim messages keep only for paths.
 * The rest (the part an earlier compaction already summarized) is read only for its structure:
 * ids, roles, usage, tool pairing and file paths; estimates and the prefix hash a sidecar
 * stores are taken while reading (read/index.ts).
 */
import type { AnyMessage } from '../session/model.js';
import type { CompactionStrategy } from './strategy.js';
import type { CompactionPlan, CompactionSubject } from './compact.js';
import { subjectEnd } from './compact.js';

export interface TextReads {
  /** Messages [from, to) are read in full. */
  readonly from: number;
  readonly to: number;
  /** And these, before `from`: calls answered by results in [from, to). */
  readonly calls: ReadonlySet<number>;
}

export function textReads(
  subject: CompactionSubject<AnyMessage>,
  plan: Extract<CompactionPlan, { kind: 'compact' }>,
  strategy: CompactionStrategy,
): TextReads {
  const { messages } = subject;
  const from = plan.start;
  // Prune reads no further than its span: its calls come before the cut, its savings are the span's.
  const to = strategy.kind === 'prune' ? plan.cut.index : subjectEnd(subject);
  const answered = new Set<string>();
  for (let index = from; index < to; index++) {
    for (const block of messages[index]!.content) if (block.type === 'tool_result') answered.add(block.tool_request_id);
  }
  const calls = new Set<number>();
  // Every earlier call with an answered id, not only the latest: ids may repeat, and a superset is safe.
  for (let index = 0; index < from && answered.size > 0; index++) {
    if (messages[index]!.content.some((block) => block.type === 'tool_request' && answered.has(block.id))) calls.add(index);
  }
  return { from, to, calls };
}
