/**
 * Slim messages cannot pass for full ones: a slim tool result has no output, and what reads text
 * refuses a slim message at compile time (the `@ts-expect-error` lines fail `npm run typecheck`
 * the day the types allow them).
 */
import { describe, expect, it } from 'vitest';
import type { CompactionRun, RunnableSubject } from '../../src/compaction/compact.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { slimMessage } from '../../src/read/slim.js';
import type { LeanReplayInput } from '../../src/replay/simulate.js';
import type { Message } from '../../src/session/model.js';
import { isSlim } from '../../src/session/model.js';
import { createExtractStrategy } from '../../src/strategies/extract.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';

const call: Message = { id: 'a1', role: 'assistant', content: [{ type: 'tool_request', id: 't1', name: 'Read', arguments: { file_path: 'a.ts' } }], line: 1 };
const result: Message = { id: 'u1', role: 'user', content: [{ type: 'tool_result', tool_request_id: 't1', output: 'export const a = 1;', is_error: false }], line: 2 };

describe('slim messages by type', () => {
  it('keep a tool result without its output', () => {
    const slim = slimMessage(result);
    const block = slim.content[0]!;
    expect(isSlim(slim)).toBe(true);
    expect(block).toEqual({ type: 'tool_result', tool_request_id: 't1', is_error: false });
    // @ts-expect-error: a slim tool result has no output to read
    expect(block.type === 'tool_result' && block.output).toBeUndefined();
  });

  it('are refused where text is read', () => {
    const messages = [slimMessage(call), slimMessage(result)];
    const common = { sessionName: 's', tokens: [1, 1], previous: null, prefixHashes: { at: () => 'x' } };
    // @ts-expect-error: a runnable subject holds its span's text, a lean read's does not
    const runnable: RunnableSubject = { ...common, messages };
    // @ts-expect-error: a strategy that reads text never meets a lean read's subject
    const textOnLean: CompactionRun = { reads: 'structure', subject: { ...common, messages }, strategy: createExtractStrategy() };
    const structureOnLean: CompactionRun = { reads: 'structure', subject: { ...common, messages }, strategy: truncateStrategy };
    // @ts-expect-error: a lean replay takes only a strategy that reads structure
    const leanExtract: LeanReplayInput = { read: 'lean', sessionName: 's', messages, tokens: [1, 1], policy: DEFAULT_POLICY, strategy: createExtractStrategy() };
    expect([runnable, textOnLean, structureOnLean, leanExtract].every((value) => typeof value === 'object')).toBe(true);
  });
});
