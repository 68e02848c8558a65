/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`). See README
 * "Formats" for what is read and skipped. The traps handled here:
 *
 * - one API response is split over several lines (one content block a line) sharing
 *   `message.id` and `requestId`: merged into one assistant message, usage taken once, output
 *   tokens from the line with a `stop_reason` (else the largest partial count); the messages are
 *   built while reading (claude-code-messages.ts), and the chain (claude-code-chain.ts, kept in
 *   columns) plans which lines make each message;
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
 *   file-history-snapshot lines; a line this reader reads nothing of and that is no link of the
 *   chain (a snapshot, a queue operation, a summary) is not parsed at all when its bytes prove it.
 */
import { z } from '../lazy-zod.js';
import { InputError } from '../errors.js';
import type { AnyMessage, ContentBlock, Diagnostic, Message, RecordedCompaction, Session } from '../session/model.js';
import { anthropicBlocks, anthropicContentSchema, anthropicUsageSchema, isNullishBoolean, isNullishString, isPlainContent, isPlainRecord, isPlainUsage, unknownTypesWarning } from './anthropic-content.js';
import { CallKeys } from './claude-code-call-keys.js';
import type { ChatLine } from './claude-code-messages.js';
import { MessageAssembler, rebuildMessages } from './claude-code-messages.js';
import type { BilledLine } from './claude-code-spend.js';
import { billedRecord, forkedFromSchema, responseKeyOf, SessionSpend, SYNTHETIC_MODEL } from './claude-code-spend.js';
import { subagentTranscriptsOf, transcriptCause } from './claude-code-subagents.js';
import { asRecord, keepEach, lastModel, lineId, parseLine, partsText, withUniqueIds } from './convert.js';
import type { ChatFacts, Plan, RareFacts } from './claude-code-chain.js';
import { ChainLines } from './claude-code-chain.js';
import type { LineCutter } from './json-cut.js';
import { KeyCutter } from './json-cut.js';
import { MeasuringCutter } from './claude-code-lengths.js';
import { forEachJsonLine, jsonKind } from './jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

export const chatLineSchema = z.looseObject({
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

type ChatLineData = z.infer<typeof chatLineSchema>;

/**
 * The line itself when it certainly passes chatLineSchema, else null (the schema decides, and
 * gives the error). A loose object's schema passes its input through with the same values, and
 * parseChatLine only reads fields, so nothing needs copying; zod's plain check copied every
 * object of every chat line, its blocks included. `forkedFrom` must be absent, null or valid
 * here: the schema replaces anything else with null.
 */
export function plainChatLine(value: Record<string, unknown>): ChatLineData | null {
  if (!isPlainRecord(value)) return null;
  const type = value['type'];
  if (type !== 'user' && type !== 'assistant') return null;
  const uuid = value['uuid'];
  if (!(uuid === undefined || uuid === null || (typeof uuid === 'string' && uuid !== ''))) return null;
  if (!isNullishString(value['parentUuid']) || !isNullishString(value['timestamp']) || !isNullishString(value['requestId'])) return null;
  if (!isNullishBoolean(value['isSidechain']) || !isNullishBoolean(value['isCompactSummary'])) return null;
  const forkedFrom = value['forkedFrom'];
  if (!(forkedFrom === undefined || forkedFrom === null || (isPlainRecord(forkedFrom) && typeof forkedFrom['sessionId'] === 'string' && forkedFrom['sessionId'] !== ''))) return null;
  const message = value['message'];
  if (!isPlainRecord(message) || !isPlainContent(message['content'])) return null;
  if (!isNullishString(message['id']) || !isNullishString(message['model']) || !isNullishString(message['stop_reason'])) return null;
  if (!isPlainUsage(message['usage'])) return null;
  return value as ChatLineData;
}

interface ParsedChat {
  readonly chat: ChatLine;
  readonly uuid: string | null;
  readonly parent: string | null;
  readonly sidechain: boolean;
}

function parseChatLine(value: Record<string, unknown>, file: string, line: number): ParsedChat {
  const data = plainChatLine(value) ?? parseLine(chatLineSchema, value, file, line, { label: `${String(value['type'])} line` });
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

const NONE: readonly string[] = [];

/**
 * The ids of a line's tool calls (`tool_request`), or of the calls its results answer
 * (`tool_result`); most lines have none: one shared empty list. A plain loop: a `flatMap` with a
 * callback, twice a chat line, was 1-3% of a worker's samples over the 1 GB Claude Code corpus.
 */
function toolIds(blocks: readonly ContentBlock[], type: 'tool_request' | 'tool_result'): readonly string[] {
  let ids: string[] | null = null;
  for (const block of blocks) {
    if (block.type === 'tool_request' && type === 'tool_request') (ids ??= []).push(block.id);
    else if (block.type === 'tool_result' && type === 'tool_result') (ids ??= []).push(block.tool_request_id);
  }
  return ids ?? NONE;
}

/** What the chain keeps of a parsed chat line (the blocks go to the assembler). */
function chatFacts(chat: ChatLine): ChatFacts {
  return {
    role: chat.role,
    responseKey: chat.responseKey,
    synthetic: chat.model === SYNTHETIC_MODEL,
    ...(chat.compactSummary ? { summary: summaryText(chat.blocks) } : {}),
    unknownTypes: chat.unknownTypes.length > 0 ? chat.unknownTypes : NONE,
    calls: toolIds(chat.blocks, 'tool_request'),
    answers: toolIds(chat.blocks, 'tool_result'),
  };
}

/** A compact boundary: a link, with what it says about the compaction. */
function addBoundary(value: Record<string, unknown>, line: number, lines: ChainLines): void {
  const metadata = asRecord(value['compactMetadata']);
  const preTokens = metadata?.['preTokens'];
  const head = asRecord(metadata?.['preservedSegment'])?.['headUuid'];
  const logicalParent = value['logicalParentUuid'];
  addLink(value, line, lines, {
    ...(typeof logicalParent === 'string' ? { logicalParent } : {}),
    boundary: {
      ...(typeof preTokens === 'number' && preTokens > 0 ? { preTokens } : {}),
      ...(typeof head === 'string' ? { preservedHead: head } : {}),
    },
  });
}

/** The keys that link a line into the parent chain. */
const LINK_KEYS = ['uuid', 'parentUuid', 'logicalParentUuid'] as const;

/**
 * Top-level values this reader never reads, cut before parsing (json-cut.ts): the tool output's
 * duplicate, and the bodies of progress, attachment and file-history-snapshot lines. Lines that
 * carry no usage and no context and are no link of the chain (snapshots, queue operations,
 * summaries, last prompts without a uuid or parent) are not parsed at all: their bytes prove it.
 * Nor are those that are links (progress lines, attachments): readLines reads nothing of them
 * but their type and link keys, which are taken from their bytes when these can be followed.
 */
const UNREAD_VALUES = new KeyCutter(
  {
    user: 'toolUseResult',
    progress: 'data',
    attachment: 'attachment',
    'file-history-snapshot': 'snapshot',
  },
  // parentUuid first: a linked line names it first, so a line that is no skip is known at once.
  { types: ['file-history-snapshot', 'queue-operation', 'summary', 'last-prompt', 'progress'], unlessKeys: ['parentUuid', 'uuid', 'logicalParentUuid'] },
  // What readLines reads of a line that is neither a message nor a system line.
  { types: ['progress', 'attachment', 'file-history-snapshot', 'queue-operation', 'summary', 'last-prompt'], keys: [...LINK_KEYS, 'isSidechain'] },
);

/** For a read that only measures text (ReadOptions.textLengthsOnly): long texts are sized from their bytes. */
const MEASURED_VALUES = new MeasuringCutter(UNREAD_VALUES);

function cutterFor(options: ReadOptions | undefined): LineCutter {
  return options?.textLengthsOnly === true && options.keep !== undefined ? MEASURED_VALUES : UNREAD_VALUES;
}

/**
 * Every line of the file that can be a link in the parent chain, in file order; each user and
 * assistant line also goes to `onChat` as it is read, and each call to `spend`. Once the file has
 * a main-chain message, sidechain messages can no longer be part of the session and are kept as
 * links only (their calls are read for the spend).
 */
async function readLines(
  file: string,
  keys: CallKeys,
  spend: SessionSpend,
  cutter: LineCutter,
  onChat: (parsed: ParsedChat, line: number) => void,
): Promise<{ lines: ChainLines; warnings: Diagnostic[] }> {
  const lines = new ChainLines(keys);
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
        const sidechain = record['isSidechain'] === true;
        const billed = mainChat && sidechain ? sidechainLink(record, line, lines) : addChat(record, file, line, lines, onChat);
        if (billed) spend.add(billed, { file, line, cause: null, sidechain });
        mainChat ||= !sidechain;
      } else if (type === 'system' && record['subtype'] === 'compact_boundary') addBoundary(record, line, lines);
      // progress, attachment, other system lines: not context, but the chain runs through them.
      else if (typeof record['uuid'] === 'string') addLink(record, line, lines);
    },
    cutter,
  );
  return { lines, warnings: [...warnings, ...linkWarnings] };
}

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A line the chain runs through (no message of its own), or a message line that failed to parse. */
function addLink(record: Record<string, unknown>, line: number, lines: ChainLines, rare: RareFacts | null = null): void {
  lines.addLink(stringOrNull(record['uuid']), stringOrNull(record['parentUuid']), line, record['isSidechain'] === true, rare);
}

/** A sidechain line once the main chain has begun: a link, and its call for the spend. */
function sidechainLink(record: Record<string, unknown>, line: number, lines: ChainLines): BilledLine | null {
  addLink(record, line, lines);
  return billedRecord(record);
}

/**
 * A user or assistant line: a link of the chain, its message to `onChat`; a malformed one is
 * kept as a link and fails only if it is read. Returns its call (assistant lines), for the spend.
 */
function addChat(record: Record<string, unknown>, file: string, line: number, lines: ChainLines, onChat: (parsed: ParsedChat, line: number) => void): BilledLine | null {
  let parsed: ParsedChat;
  try {
    parsed = parseChatLine(record, file, line);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    addLink(record, line, lines, { invalid: error });
    return billedRecord(record);
  }
  onChat(parsed, line);
  const { chat } = parsed;
  lines.addChat(parsed.uuid, parsed.parent, line, parsed.sidechain, chatFacts(chat));
  return chat.role === 'assistant' && chat.model !== SYNTHETIC_MODEL ? chat : null;
}

function summaryText(blocks: readonly ContentBlock[]): string {
  return partsText(blocks.filter((block) => block.type === 'text'));
}

/** The planned messages parsed again, when those built while reading do not fit the chain. */
async function rebuild(file: string, plan: Plan, cutter: LineCutter): Promise<Message[]> {
  const wanted = new Set(plan.messages.all());
  const chats = new Map<number, ChatLine>();
  await forEachJsonLine(
    file,
    (value, line) => {
      const record = asRecord(value);
      if (record && wanted.has(line)) chats.set(line, parseChatLine(record, file, line).chat);
    },
    cutter,
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

/**
 * The index of the message with each of `ids` (the ids are unique), from one pass over the
 * messages: a table of every message's id (about 100,000 in a 1 GB session) cost 10 MB or more
 * while the whole read was still held, for the few heads of preserved segments it was asked for.
 */
function indexesOf(ids: readonly string[], messages: readonly AnyMessage[]): ReadonlyMap<string, number> {
  const found = new Map<string, number>();
  if (ids.length === 0) return found;
  const wanted = new Set(ids);
  for (let index = 0; index < messages.length && found.size < wanted.size; index++) {
    const { id } = messages[index]!;
    if (wanted.has(id)) found.set(id, index);
  }
  return found;
}

export async function readClaudeCode(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const assembler = new MessageAssembler(options?.keep);
  const keys = new CallKeys();
  const spend = new SessionSpend(keys);
  const cutter = cutterFor(options);
  const { lines, warnings } = await readLines(file, keys, spend, cutter, ({ chat, sidechain }, line) => {
    if (chat.model !== SYNTHETIC_MODEL) assembler.add(chat, line, sidechain);
  });
  assembler.finish();
  const chain = lines.currentChain(file, warnings);
  const plan = lines.plan(chain.chain, file);
  const built = assembler.pick(plan.messages);
  // Built messages already went through `keep`; rebuilt ones go through it here. Ids the chain
  // knows to be unique need no table of them to be checked (100,000 in a 1 GB session).
  const unique = <M extends AnyMessage>(messages: M[]): M[] => (lines.uniqueIds ? messages : withUniqueIds(messages));
  const messages = built ? unique(built) : keepEach(unique(await rebuild(file, plan, cutter)), options);
  const preservedAt = indexesOf(
    plan.compactions.flatMap(({ boundary }) => boundary?.preservedHead ?? []),
    messages,
  );
  const recordedCompactions: RecordedCompaction[] = plan.compactions.map(({ boundary, atIndex, line }) => {
    // Newer versions keep a preserved segment from before the boundary in the new context.
    const head = boundary?.preservedHead;
    const preserved = head === undefined ? undefined : preservedAt.get(head);
    const preTokens = boundary?.preTokens;
    return {
      firstKeptIndex: preserved !== undefined && preserved < atIndex ? preserved : atIndex,
      atIndex,
      summary: plan.summaries.get(atIndex) ?? '',
      line,
      ...(preTokens !== undefined ? { tokensBefore: preTokens } : {}),
    };
  });

  const unknown = unknownTypesWarning(plan.unknownTypes);
  if (unknown) warnings.push({ file, message: unknown });
  for (const transcript of subagentTranscriptsOf(file)) warnings.push(...(await readTranscriptSpend(transcript, spend)));
  // Calls on the other side of the file than the conversation are its subagents'.
  const offContext = spend.offContext(plan.inContext, (sidechain) => (sidechain === chain.sidechain ? 'abandoned-branch' : 'subagent'));
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
