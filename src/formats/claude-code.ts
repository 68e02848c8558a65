/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`). See README
 * "Formats" for what is read and skipped. The traps handled here:
 *
 * - one API response is split over several lines (one content block a line) sharing
 *   `message.id` and `requestId`: merged into one assistant message, usage taken once, output
 *   tokens from the line with a `stop_reason` (else the largest partial count); the messages are
 *   built while reading (claude-code-messages.ts), and this file plans from the chain which
 *   lines make each message;
 * - lines are ordered by the parent chain from the newest main-chain line, not by time, and
 *   the chain is followed through non-message lines (progress, attachments, system lines);
 * - parallel tool calls: each result hangs off its own call's line, so the chain passes through
 *   the last result only; the others join it after their response;
 * - abandoned branches (a prompt edited and sent again) and sidechains (subagents written inline
 *   by 1.0.x) are left out of the context, their calls kept as the session's off-context spend;
 *   a file holding nothing but a sidechain (a 2.x subagent transcript) is read as its own session;
 * - the subagent transcripts beside the session (claude-code-subagents.ts) are read for their
 *   calls only, which are spend too; every call counts once by `message.id` + `requestId`
 *   (claude-code-spend.ts);
 * - a conversation branched from another session copies its lines with `forkedFrom`: their calls
 *   were billed there, so they are context here, not spend (Message.copiedFrom);
 * - `compact_boundary` + the `isCompactSummary` line = a compaction Claude Code recorded;
 * - `<synthetic>` messages (locally generated, zero usage) are not provider calls: left out;
 * - `toolUseResult` duplicates a tool's output and is never sent to the model: cut out of the
 *   line before it is parsed (json-cut.ts), as are the bodies of progress, attachment and
 *   file-history-snapshot lines.
 */
import { z } from 'zod';
import { InputError } from '../errors.js';
import type { AnyMessage, ContentBlock, Diagnostic, Message, RecordedCompaction, Session } from '../session/model.js';
import { anthropicBlocks, anthropicContentSchema, anthropicUsageSchema, unknownTypesWarning } from './anthropic-content.js';
import type { ChatLine } from './claude-code-messages.js';
import { MessageAssembler, pickBuilt, rebuildMessages } from './claude-code-messages.js';
import type { BilledLine } from './claude-code-spend.js';
import { billedRecord, callKey, forkedFromSchema, responseKeyOf, SessionSpend, SYNTHETIC_MODEL } from './claude-code-spend.js';
import { subagentTranscriptsOf, transcriptCause } from './claude-code-subagents.js';
import { asRecord, keepEach, lastModel, lineId, parseLine, partsText, withUniqueIds } from './convert.js';
import { KeyCutter } from './json-cut.js';
import { forEachJsonLine, jsonKind } from './jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

const chatLineSchema = z.looseObject({
  type: z.enum(['user', 'assistant']),
  uuid: z.string().min(1).nullish(),
  parentUuid: z.string().nullish(),
  isSidechain: z.boolean().nullish(),
  isCompactSummary: z.boolean().nullish(),
  timestamp: z.string().nullish(),
  requestId: z.string().nullish(),
  forkedFrom: forkedFromSchema,
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
  /** A user or assistant line: what the chain needs of it (its message is built as it is read). */
  readonly chat?: ChatLink;
  /** A message line that failed to parse: an error only if it is part of the current chain. */
  readonly invalid?: InputError;
  readonly boundary?: { readonly preTokens?: number; readonly preservedHead?: string };
}

interface ChatLink {
  readonly role: 'user' | 'assistant';
  readonly responseKey: string | null;
  readonly synthetic: boolean;
  /** The summary's text, on an `isCompactSummary` line. */
  readonly summary?: string;
  readonly unknownTypes: readonly string[];
  /** The ids of the tool calls an assistant line makes. */
  readonly calls: readonly string[];
  /** The ids of the tool calls a user line's results answer. */
  readonly answers: readonly string[];
}

const NONE: readonly string[] = [];

interface ParsedChat {
  readonly chat: ChatLine;
  readonly uuid: string | null;
  readonly parent: string | null;
  readonly sidechain: boolean;
}

function parseChatLine(value: Record<string, unknown>, file: string, line: number): ParsedChat {
  const data = parseLine(chatLineSchema, value, file, line, { label: `${String(value['type'])} line` });
  const { blocks, unknownTypes } = anthropicBlocks(data.message.content, file, line);
  const messageId = data.message.id;
  return {
    uuid: data.uuid ?? null,
    parent: data.parentUuid ?? null,
    sidechain: data.isSidechain === true,
    chat: {
      role: data.type,
      uuid: data.uuid ?? lineId(line),
      blocks,
      responseKey: data.type === 'assistant' ? responseKeyOf(messageId, data.requestId) : null,
      model: data.message.model ?? null,
      usage: data.message.usage ?? null,
      final: data.message.stop_reason !== null && data.message.stop_reason !== undefined,
      compactSummary: data.isCompactSummary === true,
      timestamp: data.timestamp ?? null,
      copiedFrom: data.forkedFrom?.sessionId ?? null,
      unknownTypes,
    },
  };
}

/** The ids of a line's tool calls, or of the calls its results answer (most lines have none: one shared empty list). */
function toolIds(blocks: readonly ContentBlock[], id: (block: ContentBlock) => string | undefined): readonly string[] {
  const ids = blocks.flatMap((block) => id(block) ?? []);
  return ids.length > 0 ? ids : NONE;
}

/** The chain's record of a parsed chat line (the blocks go to the assembler). */
function chatLinkNode({ chat, uuid, parent, sidechain }: ParsedChat, line: number): ChainNode {
  return {
    uuid,
    parent,
    logicalParent: null,
    line,
    sidechain,
    chat: {
      role: chat.role,
      responseKey: chat.responseKey,
      synthetic: chat.model === SYNTHETIC_MODEL,
      ...(chat.compactSummary ? { summary: summaryText(chat.blocks) } : {}),
      unknownTypes: chat.unknownTypes.length > 0 ? chat.unknownTypes : NONE,
      calls: toolIds(chat.blocks, (block) => (block.type === 'tool_request' ? block.id : undefined)),
      answers: toolIds(chat.blocks, (block) => (block.type === 'tool_result' ? block.tool_request_id : undefined)),
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

/**
 * Every line of the file that can be a link in the parent chain, in file order; each user and
 * assistant line also goes to `onChat` as it is read, and each call to `spend`. Once the file has
 * a main-chain message, sidechain messages can no longer be part of the session and are kept as
 * links only (their calls are read for the spend).
 */
async function readNodes(
  file: string,
  spend: SessionSpend,
  onChat: (parsed: ParsedChat, line: number) => void,
): Promise<{ nodes: ChainNode[]; warnings: Diagnostic[] }> {
  const nodes: ChainNode[] = [];
  const linkWarnings: Diagnostic[] = [];
  let mainChat = false;
  const warnings = await forEachJsonLine(
    file,
    (value, line) => {
      const record = asRecord(value);
      if (!record) throw new InputError('expected a JSON object', file, line);
      // A link that is no string breaks the chain there: said, not silently dropped.
      for (const key of LINK_KEYS) {
        const link = record[key];
        if (link !== undefined && link !== null && typeof link !== 'string') {
          linkWarnings.push({ file, line, message: `${key}: expected a string, got ${jsonKind(link)}; the line is not linked into the conversation` });
        }
      }
      const type = record['type'];
      if (type === 'user' || type === 'assistant') {
        const { node, billed } = mainChat && record['isSidechain'] === true ? sidechainLink(record, line) : chatNode(record, file, line, onChat);
        if (billed) spend.add(billed, { file, line, cause: null, sidechain: node.sidechain });
        mainChat ||= !node.sidechain;
        nodes.push(node);
      } else if (type === 'system' && record['subtype'] === 'compact_boundary') nodes.push(parseBoundary(record, line));
      // progress, attachment, other system lines: not context, but the chain runs through them.
      else if (typeof record['uuid'] === 'string') nodes.push(linkNode(record, line));
    },
    UNREAD_VALUES,
  );
  return { nodes, warnings: [...warnings, ...linkWarnings] };
}

/** The keys that link a line into the parent chain. */
const LINK_KEYS = ['uuid', 'parentUuid', 'logicalParentUuid'] as const;

function linkNode(record: Record<string, unknown>, line: number): ChainNode {
  return {
    uuid: typeof record['uuid'] === 'string' ? record['uuid'] : null,
    parent: typeof record['parentUuid'] === 'string' ? record['parentUuid'] : null,
    logicalParent: null,
    line,
    sidechain: record['isSidechain'] === true,
  };
}

/** A chat line as the chain keeps it, and the call it is part of (assistant lines). */
interface ReadChat {
  readonly node: ChainNode;
  readonly billed: BilledLine | null;
}

/** A sidechain line once the main chain has begun: a link, and its call for the spend. */
function sidechainLink(record: Record<string, unknown>, line: number): ReadChat {
  return { node: linkNode(record, line), billed: billedRecord(record) };
}

/** A user or assistant line; a malformed one is kept as a link and fails only if it is read. */
function chatNode(record: Record<string, unknown>, file: string, line: number, onChat: (parsed: ParsedChat, line: number) => void): ReadChat {
  let parsed: ParsedChat;
  try {
    parsed = parseChatLine(record, file, line);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return { node: { ...linkNode(record, line), invalid: error }, billed: billedRecord(record) };
  }
  onChat(parsed, line);
  const { chat } = parsed;
  return { node: chatLinkNode(parsed, line), billed: chat.role === 'assistant' && chat.model !== SYNTHETIC_MODEL ? chat : null };
}

/** The current conversation's lines, and the side (main chain or sidechain) it is on. */
interface Chain {
  readonly nodes: readonly ChainNode[];
  readonly sidechain: boolean;
}

/**
 * The lines of the current conversation, oldest first: from the newest main-chain message back
 * along `parentUuid` (across compact boundaries by `logicalParentUuid`), with the results of
 * parallel tool calls it passes by. Files whose uuids are not unique (hand-edited or trimmed
 * fixtures) cannot be chained and keep their file order.
 */
function currentChain(nodes: readonly ChainNode[], file: string, warnings: Diagnostic[]): Chain {
  const chatNodes = nodes.filter((node) => node.chat || node.invalid);
  const leaf = chatNodes.filter((node) => !node.sidechain).at(-1) ?? chatNodes.at(-1);
  if (!leaf) return { nodes: [], sidechain: false };
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
    return { nodes: nodes.filter(sameSide), sidechain: leaf.sidechain };
  }
  const chain = walkBack(leaf, byUuid, nodes.length, file, warnings).reverse().filter(sameSide);
  return { nodes: withParallelResults(chain, nodes, byUuid, leaf.sidechain), sidechain: leaf.sidechain };
}

/** A response's identity: its key, or the line itself when it has no `message.id`. */
function responseOf(node: ChainNode): string | ChainNode {
  return node.chat?.responseKey ?? node;
}

/** The nearest user or assistant line up `node`'s parents, through progress and other non-message lines. */
function nearestChat(node: ChainNode, byUuid: ReadonlyMap<string, ChainNode>): ChainNode | undefined {
  let next = node.parent === null ? undefined : byUuid.get(node.parent);
  for (let steps = 0; next && !next.chat && steps < byUuid.size; steps++) next = next.parent === null ? undefined : byUuid.get(next.parent);
  return next?.chat ? next : undefined;
}

/**
 * The chain with the parts of parallel tool calls it passes by. One response with N tool calls
 * is N lines, and each result's parent is its own call's line, so the chain from the leaf goes
 * through the last result only; it can also pass by a call's line itself (when the next call's
 * line hangs off an earlier result). So every line of a response on the chain joins it, and a
 * user line off the chain joins when its results answer calls of one response on the chain that
 * nothing on the chain answers, and its parent (through non-message lines) is a line of that
 * response. What joins is placed after the response's last line on the chain, among the results
 * there before the next call, in file order (the order it was written).
 */
function withParallelResults(
  chain: readonly ChainNode[],
  nodes: readonly ChainNode[],
  byUuid: ReadonlyMap<string, ChainNode>,
  sidechain: boolean,
): ChainNode[] {
  const onChain = new Set(chain);
  /** The last index on the chain of each response's lines. */
  const responseEnd = new Map<string | ChainNode, number>();
  chain.forEach((node, index) => {
    if (node.chat?.role === 'assistant') responseEnd.set(responseOf(node), index);
  });
  /** What joins the chain, by the index it joins after. */
  const joining = new Map<number, ChainNode[]>();
  const join = (node: ChainNode, response: ChainNode | string) => {
    const end = responseEnd.get(response)!;
    const parts = joining.get(end);
    if (parts) parts.push(node);
    else joining.set(end, [node]);
    onChain.add(node);
  };
  const offChain = nodes.filter((node) => node.chat && node.sidechain === sidechain && !onChain.has(node));
  for (const node of offChain) {
    const key = node.chat!.role === 'assistant' ? node.chat!.responseKey : null;
    if (key !== null && responseEnd.has(key)) join(node, key);
  }
  const callers = new Map<string, ChainNode>();
  const answered = new Set<string>();
  for (const node of onChain) {
    for (const id of node.chat?.calls ?? NONE) callers.set(id, node);
    for (const id of node.chat?.answers ?? NONE) answered.add(id);
  }
  for (const node of offChain) {
    const answers = node.chat!.answers;
    const caller = answers.length > 0 ? callers.get(answers[0]!) : undefined;
    if (!caller) continue;
    const response = responseOf(caller);
    const answersOthers = (id: string) => {
      const other = callers.get(id);
      return answered.has(id) || !other || responseOf(other) !== response;
    };
    const parent = nearestChat(node, byUuid);
    if (answers.some(answersOthers) || !parent || responseOf(parent) !== response) continue;
    for (const id of answers) answered.add(id);
    join(node, response);
  }
  if (joining.size === 0) return [...chain];
  const joined: ChainNode[] = [];
  for (let index = 0; index < chain.length; index++) {
    joined.push(chain[index]!);
    const parts = joining.get(index);
    if (!parts) continue;
    let next = index + 1;
    while (next < chain.length && chain[next]!.chat?.role === 'user') next++;
    joined.push(...[...chain.slice(index + 1, next), ...parts].sort((a, b) => a.line - b.line));
    index = next - 1;
  }
  return joined;
}

/**
 * The nodes from `leaf` back to the root of its chain; a chain that loops stops before the first
 * node it meets again. A set of visited nodes took most of the chain's time over 200,000 lines,
 * so one is kept only once the walk is longer than the file (then it has met a loop).
 */
function walkBack(leaf: ChainNode, byUuid: ReadonlyMap<string, ChainNode>, lines: number, file: string, warnings: Diagnostic[]): ChainNode[] {
  const parentOf = (node: ChainNode): ChainNode | undefined => {
    const next = node.parent ?? node.logicalParent;
    return next === null ? undefined : byUuid.get(next);
  };
  const chain: ChainNode[] = [];
  for (let node: ChainNode | undefined = leaf; node && chain.length <= lines; node = parentOf(node)) chain.push(node);
  if (chain.length <= lines) return chain;
  const seen = new Set<ChainNode>();
  chain.length = 0;
  for (let node: ChainNode | undefined = leaf; node && !seen.has(node); node = parentOf(node)) {
    seen.add(node);
    chain.push(node);
  }
  // A boundary's logicalParentUuid may name a line later in a resumed file (real Claude Code
  // files do): that stop is expected. A loop of parentUuid links is a broken file: said.
  const last = chain.at(-1)!;
  if (last.parent !== null) warnings.push({ file, line: last.line, message: "parentUuid leads back to a later line of the conversation (a cycle); the conversation is read from this line on" });
  return chain;
}

function summaryText(blocks: readonly ContentBlock[]): string {
  return partsText(blocks.filter((block) => block.type === 'text'));
}

/** The session's shape, from the chain alone: which lines make each message, and the compactions. */
interface Plan {
  /** Each message's lines: the first one's, then the later lines of its response, in chain order. */
  readonly messages: readonly (readonly number[])[];
  readonly compactions: readonly { readonly boundary: ChainNode; readonly atIndex: number }[];
  readonly summaries: ReadonlyMap<number, string>;
  readonly unknownTypes: readonly string[];
  /** The calls (callKey) the messages stand for: the context's part of the spend. */
  readonly calls: ReadonlySet<string>;
}

function planMessages(chain: readonly ChainNode[], file: string): Plan {
  const messages: number[][] = [];
  const calls = new Set<string>();
  const byResponse = new Map<string, number[]>();
  const compactions: { boundary: ChainNode; atIndex: number }[] = [];
  const summaries = new Map<number, string>();
  const unknownTypes: string[] = [];
  for (const node of chain) {
    if (node.boundary) {
      compactions.push({ boundary: node, atIndex: messages.length });
      continue;
    }
    if (node.invalid) throw node.invalid;
    const chat = node.chat!;
    if (chat.synthetic) continue;
    if (chat.role === 'assistant') calls.add(callKey(chat.responseKey, file, node.line));
    unknownTypes.push(...chat.unknownTypes);
    const earlier = chat.responseKey ? byResponse.get(chat.responseKey) : undefined;
    if (earlier) {
      earlier.push(node.line);
      continue;
    }
    if (chat.summary !== undefined) {
      summaries.set(messages.length, chat.summary);
      // A summary with no boundary before it (1.0.x starts a new file with one) is a compaction too.
      if (compactions.at(-1)?.atIndex !== messages.length) compactions.push({ boundary: node, atIndex: messages.length });
    }
    const lines = [node.line];
    messages.push(lines);
    if (chat.responseKey) byResponse.set(chat.responseKey, lines);
  }
  // A response's lines in the order they were written, as they were merged while reading.
  for (const lines of byResponse.values()) lines.sort((a, b) => a - b);
  return { messages, compactions, summaries, unknownTypes, calls };
}

/** The planned messages parsed again, when those built while reading do not fit the chain. */
async function rebuild(file: string, plan: Plan): Promise<Message[]> {
  const wanted = new Set(plan.messages.flat());
  const chats = new Map<number, ChatLine>();
  await forEachJsonLine(
    file,
    (value, line) => {
      const record = asRecord(value);
      if (record && wanted.has(line)) chats.set(line, parseChatLine(record, file, line).chat);
    },
    UNREAD_VALUES,
  );
  if (chats.size !== wanted.size) throw new InputError('the file changed while it was read', file);
  return rebuildMessages(plan.messages, chats);
}

/**
 * Adds the calls of a subagent transcript beside the session to its spend. A transcript that
 * cannot be read is a warning, and none of its calls count: the session reads without them.
 */
async function readTranscriptSpend(path: string, spend: SessionSpend): Promise<Diagnostic[]> {
  const calls: { billed: BilledLine; line: number }[] = [];
  let warnings: Diagnostic[];
  try {
    warnings = await forEachJsonLine(
      path,
      (value, line) => {
        const record = asRecord(value);
        const billed = record ? billedRecord(record) : null;
        if (billed) calls.push({ billed, line });
      },
      UNREAD_VALUES,
    );
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return [{ file: path, ...(error.line === undefined ? {} : { line: error.line }), message: `subagent transcript left out of the spend: ${error.message}` }];
  }
  const cause = transcriptCause(path);
  for (const { billed, line } of calls) spend.add(billed, { file: path, line, cause, sidechain: true });
  return warnings;
}

export async function readClaudeCode(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const assembler = new MessageAssembler(options?.keep);
  const spend = new SessionSpend();
  const { nodes, warnings } = await readNodes(file, spend, ({ chat, sidechain }, line) => {
    if (chat.model !== SYNTHETIC_MODEL) assembler.add(chat, line, sidechain);
  });
  assembler.finish();
  const chain = currentChain(nodes, file, warnings);
  const plan = planMessages(chain.nodes, file);
  const built = pickBuilt(plan.messages, assembler.built);
  // Built messages already went through `keep`; rebuilt ones go through it here.
  const messages = built ? withUniqueIds(built) : keepEach(withUniqueIds(await rebuild(file, plan)), options);
  const indexById = new Map(messages.map((message, index) => [message.id, index]));
  const recordedCompactions: RecordedCompaction[] = plan.compactions.map(({ boundary, atIndex }) => {
    // Newer versions keep a preserved segment from before the boundary in the new context.
    const head = boundary.boundary?.preservedHead;
    const preserved = head === undefined ? undefined : indexById.get(head);
    const preTokens = boundary.boundary?.preTokens;
    return {
      firstKeptIndex: preserved !== undefined && preserved < atIndex ? preserved : atIndex,
      atIndex,
      summary: plan.summaries.get(atIndex) ?? '',
      line: boundary.line,
      ...(preTokens !== undefined ? { tokensBefore: preTokens } : {}),
    };
  });

  const unknown = unknownTypesWarning(plan.unknownTypes);
  if (unknown) warnings.push({ file, message: unknown });
  for (const transcript of subagentTranscriptsOf(file)) warnings.push(...(await readTranscriptSpend(transcript, spend)));
  // Calls on the other side of the file than the conversation are its subagents'.
  const offContext = spend.offContext(plan.calls, (sidechain) => (sidechain === chain.sidechain ? 'abandoned-branch' : 'subagent'));
  const model = lastModel(messages);
  return {
    path: file,
    format: 'claude-code',
    messages,
    recordedCompactions,
    offContext,
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

export const claudeCodeReader: FormatReader = {
  name: 'claude-code',
  detect: (firstLines) => firstLines.some(isClaudeLine),
  read: readClaudeCode,
};
