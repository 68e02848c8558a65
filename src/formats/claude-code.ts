/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`). See README
 * "Formats" for what is read and skipped. The traps handled here:
 *
 * - one API response is split over several lines (one content block a line) sharing
 *   `message.id` and `requestId`: merged into one assistant message, usage taken once, output
 *   tokens from the line with a `stop_reason` (else the largest partial count);
 * - lines are ordered by the parent chain from the newest main-chain line, not by time, and
 *   the chain is followed through non-message lines (progress, attachments, system lines);
 *   abandoned branches are left out;
 * - sidechains (subagents written inline by 1.0.x) are left out of the main session; a file
 *   holding nothing but a sidechain (a 2.x subagent transcript) is read as its own session;
 * - `compact_boundary` + the `isCompactSummary` line = a compaction Claude Code recorded;
 * - `<synthetic>` messages (locally generated, zero usage) are not provider calls: left out;
 * - `toolUseResult` duplicates a tool's output and is never sent to the model: ignored.
 */
import { z } from 'zod';
import { InputError } from '../errors.js';
import type { ContentBlock, Diagnostic, Message, RecordedCompaction, Session, Usage } from '../session/model.js';
import type { AnthropicUsage } from './anthropic-content.js';
import { anthropicBlocks, anthropicContentSchema, anthropicUsage, anthropicUsageSchema, unknownTypesWarning } from './anthropic-content.js';
import { asRecord, keepEach, lastModel, lineId, nonZeroUsage, parseLine, partsText, withUniqueIds } from './convert.js';
import { KeyCutter } from './json-cut.js';
import { forEachJsonLine } from './jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

const SYNTHETIC_MODEL = '<synthetic>';

const chatLineSchema = z.looseObject({
  type: z.enum(['user', 'assistant']),
  uuid: z.string().min(1).nullish(),
  parentUuid: z.string().nullish(),
  isSidechain: z.boolean().nullish(),
  isCompactSummary: z.boolean().nullish(),
  timestamp: z.string().nullish(),
  requestId: z.string().nullish(),
  message: z.looseObject({
    content: anthropicContentSchema,
    id: z.string().nullish(),
    model: z.string().nullish(),
    stop_reason: z.string().nullish(),
    usage: anthropicUsageSchema.nullish(),
  }),
});

/** A line that takes part in the parent chain. */
interface ChainNode {
  readonly uuid: string | null;
  readonly parent: string | null;
  /** Set on compact boundaries: the message before the boundary (their `parentUuid` is null). */
  readonly logicalParent: string | null;
  readonly line: number;
  readonly sidechain: boolean;
  readonly chat?: ChatLine;
  /** A message line that failed to parse: an error only if it is part of the current chain. */
  readonly invalid?: InputError;
  readonly boundary?: { readonly preTokens?: number; readonly preservedHead?: string };
}

interface ChatLine {
  readonly role: 'user' | 'assistant';
  readonly uuid: string;
  readonly blocks: ContentBlock[];
  /** `message.id` + `requestId`: the response this line is one block of. */
  readonly responseKey: string | null;
  readonly model: string | null;
  readonly usage: AnthropicUsage | null;
  readonly final: boolean;
  readonly compactSummary: boolean;
  readonly timestamp: string | null;
  /** Block types this reader does not know, reported if the line is read. */
  readonly unknownTypes: readonly string[];
}

function parseChatLine(value: Record<string, unknown>, file: string, line: number): ChainNode {
  const data = parseLine(chatLineSchema, value, file, line, { label: `${String(value['type'])} line` });
  const { blocks, unknownTypes } = anthropicBlocks(data.message.content, file, line);
  const uuid = data.uuid ?? lineId(line);
  const messageId = data.message.id;
  return {
    uuid: data.uuid ?? null,
    parent: data.parentUuid ?? null,
    logicalParent: null,
    line,
    sidechain: data.isSidechain === true,
    chat: {
      role: data.type,
      uuid,
      blocks,
      responseKey: data.type === 'assistant' && messageId ? `${messageId}\u0000${data.requestId ?? ''}` : null,
      model: data.message.model ?? null,
      usage: data.message.usage ?? null,
      final: data.message.stop_reason !== null && data.message.stop_reason !== undefined,
      compactSummary: data.isCompactSummary === true,
      timestamp: data.timestamp ?? null,
      unknownTypes,
    },
  };
}

function parseBoundary(value: Record<string, unknown>, line: number): ChainNode {
  const metadata = asRecord(value['compactMetadata']);
  const preTokens = metadata?.['preTokens'];
  const head = asRecord(metadata?.['preservedSegment'])?.['headUuid'];
  return {
    uuid: typeof value['uuid'] === 'string' ? value['uuid'] : null,
    parent: typeof value['parentUuid'] === 'string' ? value['parentUuid'] : null,
    logicalParent: typeof value['logicalParentUuid'] === 'string' ? value['logicalParentUuid'] : null,
    line,
    sidechain: value['isSidechain'] === true,
    boundary: {
      ...(typeof preTokens === 'number' && preTokens > 0 ? { preTokens } : {}),
      ...(typeof head === 'string' ? { preservedHead: head } : {}),
    },
  };
}

/**
 * Top-level values this reader never reads, cut before parsing (json-cut.ts): the tool output's
 * duplicate, and the bodies of progress, attachment and file-history-snapshot lines.
 */
const UNREAD_VALUES = new KeyCutter({
  user: 'toolUseResult',
  progress: 'data',
  attachment: 'attachment',
  'file-history-snapshot': 'snapshot',
});

/** Every line of the file that can be a link in the parent chain, in file order. */
async function readNodes(file: string): Promise<{ nodes: ChainNode[]; warnings: Diagnostic[] }> {
  const nodes: ChainNode[] = [];
  const warnings = await forEachJsonLine(file, (value, line) => {
    const record = asRecord(value);
    if (!record) throw new InputError('expected a JSON object', file, line);
    const type = record['type'];
    if (type === 'user' || type === 'assistant') nodes.push(chatNode(record, file, line));
    else if (type === 'system' && record['subtype'] === 'compact_boundary') nodes.push(parseBoundary(record, line));
    // progress, attachment, other system lines: not context, but the chain runs through them.
    else if (typeof record['uuid'] === 'string') nodes.push(linkNode(record, line));
  }, UNREAD_VALUES);
  return { nodes, warnings };
}

function linkNode(record: Record<string, unknown>, line: number): ChainNode {
  return {
    uuid: typeof record['uuid'] === 'string' ? record['uuid'] : null,
    parent: typeof record['parentUuid'] === 'string' ? record['parentUuid'] : null,
    logicalParent: null,
    line,
    sidechain: record['isSidechain'] === true,
  };
}

/** A user or assistant line; a malformed one is kept as a link and fails only if it is read. */
function chatNode(record: Record<string, unknown>, file: string, line: number): ChainNode {
  try {
    return parseChatLine(record, file, line);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return { ...linkNode(record, line), invalid: error };
  }
}

/**
 * The lines of the current conversation, oldest first: from the newest main-chain message back
 * along `parentUuid` (across compact boundaries by `logicalParentUuid`). Files whose uuids are
 * not unique (hand-edited or trimmed fixtures) cannot be chained and keep their file order.
 */
function currentChain(nodes: readonly ChainNode[], file: string, warnings: Diagnostic[]): ChainNode[] {
  const chatNodes = nodes.filter((node) => node.chat || node.invalid);
  const leaf = chatNodes.filter((node) => !node.sidechain).at(-1) ?? chatNodes.at(-1);
  if (!leaf) return [];
  const byUuid = new Map<string, ChainNode>();
  let duplicates = 0;
  for (const node of nodes) {
    if (node.uuid === null) continue;
    if (byUuid.has(node.uuid)) duplicates++;
    else byUuid.set(node.uuid, node);
  }
  const sameSide = (node: ChainNode) => node.sidechain === leaf.sidechain && (node.chat || node.boundary || node.invalid);
  if (duplicates > 0) {
    warnings.push({ file, message: `${duplicates} lines repeat another line's uuid; messages kept in file order` });
    return nodes.filter(sameSide);
  }
  const chain: ChainNode[] = [];
  const seen = new Set<ChainNode>();
  for (let node: ChainNode | undefined = leaf; node && !seen.has(node); ) {
    seen.add(node);
    chain.push(node);
    const next: string | null = node.parent ?? node.logicalParent;
    node = next === null ? undefined : byUuid.get(next);
  }
  return chain.reverse().filter(sameSide);
}

interface Draft {
  id: string;
  role: 'user' | 'assistant';
  blocks: ContentBlock[];
  line: number;
  model: string | null;
  usage: AnthropicUsage | null;
  final: boolean;
  timestamp: string | null;
}

/** A later line of the same response: its new blocks join, its usage replaces a partial one. */
function mergeInto(draft: Draft, chat: ChatLine): void {
  const known = new Set(draft.blocks.map((block) => JSON.stringify(block)));
  for (const block of chat.blocks) if (!known.has(JSON.stringify(block))) draft.blocks.push(block);
  if (draft.final) return;
  const better = chat.final || (chat.usage?.output_tokens ?? 0) >= (draft.usage?.output_tokens ?? 0);
  if (chat.usage && better) draft.usage = chat.usage;
  draft.final = chat.final;
  draft.model ??= chat.model;
}

function toMessage(draft: Draft): Message {
  const usage: Usage | undefined = draft.usage ? nonZeroUsage(anthropicUsage(draft.usage)) : undefined;
  return {
    id: draft.id,
    role: draft.role,
    content: draft.blocks,
    line: draft.line,
    ...(usage ? { usage } : {}),
    ...(draft.model ? { model: draft.model } : {}),
    ...(draft.timestamp ? { timestamp: draft.timestamp } : {}),
  };
}

function summaryText(blocks: readonly ContentBlock[]): string {
  return partsText(blocks.filter((block) => block.type === 'text'));
}

export async function readClaudeCode(file: string, options?: ReadOptions): Promise<Session> {
  const unknownTypes: string[] = [];
  const { nodes, warnings } = await readNodes(file);
  const chain = currentChain(nodes, file, warnings);

  const drafts: Draft[] = [];
  const byResponse = new Map<string, Draft>();
  const compactions: { boundary: ChainNode; atIndex: number }[] = [];
  const summaries = new Map<number, string>();
  for (const node of chain) {
    if (node.boundary) {
      compactions.push({ boundary: node, atIndex: drafts.length });
      continue;
    }
    if (node.invalid) throw node.invalid;
    const chat = node.chat!;
    if (chat.model === SYNTHETIC_MODEL) continue;
    unknownTypes.push(...chat.unknownTypes);
    const earlier = chat.responseKey ? byResponse.get(chat.responseKey) : undefined;
    if (earlier) {
      mergeInto(earlier, chat);
      continue;
    }
    if (chat.compactSummary) {
      summaries.set(drafts.length, summaryText(chat.blocks));
      // A summary with no boundary before it (1.0.x starts a new file with one) is a compaction too.
      if (compactions.at(-1)?.atIndex !== drafts.length) compactions.push({ boundary: node, atIndex: drafts.length });
    }
    const draft: Draft = {
      id: chat.uuid,
      role: chat.role,
      blocks: [...chat.blocks],
      line: node.line,
      model: chat.model,
      usage: chat.usage,
      final: chat.final,
      timestamp: chat.timestamp,
    };
    drafts.push(draft);
    if (chat.responseKey) byResponse.set(chat.responseKey, draft);
  }

  const messages = withUniqueIds(drafts.map(toMessage));
  const indexById = new Map(messages.map((message, index) => [message.id, index]));
  const recordedCompactions: RecordedCompaction[] = compactions.map(({ boundary, atIndex }) => {
    // Newer versions keep a preserved segment from before the boundary in the new context.
    const head = boundary.boundary?.preservedHead;
    const preserved = head === undefined ? undefined : indexById.get(head);
    const preTokens = boundary.boundary?.preTokens;
    return {
      firstKeptIndex: preserved !== undefined && preserved < atIndex ? preserved : atIndex,
      atIndex,
      summary: summaries.get(atIndex) ?? '',
      line: boundary.line,
      ...(preTokens !== undefined ? { tokensBefore: preTokens } : {}),
    };
  });

  const unknown = unknownTypesWarning(unknownTypes);
  if (unknown) warnings.push({ file, message: unknown });
  const model = lastModel(messages);
  return {
    path: file,
    format: 'claude-code',
    messages: keepEach(messages, options),
    recordedCompactions,
    warnings,
    ...(model ? { model } : {}),
  };
}

/** Line types only Claude Code writes, recognizable without a message. */
const CLAUDE_ONLY_TYPES = new Set(['summary', 'file-history-snapshot', 'queue-operation', 'progress', 'attachment', 'last-prompt']);

function isClaudeLine(value: unknown): boolean {
  const record = asRecord(value);
  if (!record || typeof record['type'] !== 'string') return false;
  if (typeof record['sessionId'] === 'string') return true;
  if ('parentUuid' in record && typeof record['uuid'] === 'string') return true;
  return CLAUDE_ONLY_TYPES.has(record['type']) && !('payload' in record) && !('message' in record && 'id' in record);
}

/**
 * A subagent's own transcript (2.x writes them as `agent-*.jsonl`): every chat line among the
 * first ones is on a sidechain. Directory walks skip these; named explicitly they are read.
 */
export function looksLikeSubagentTranscript(firstLines: readonly unknown[]): boolean {
  const chat = firstLines.map(asRecord).filter((line) => line?.['type'] === 'user' || line?.['type'] === 'assistant');
  return chat.length > 0 && chat.every((line) => line?.['isSidechain'] === true);
}

export const claudeCodeReader: FormatReader = {
  name: 'claude-code',
  detect: (firstLines) => firstLines.some(isClaudeLine),
  read: readClaudeCode,
};
