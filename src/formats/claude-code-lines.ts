/**
 * A Claude Code file's lines, one at a time, into what the reader (claude-code.ts) builds while
 * reading: the parent chain's links (claude-code-chain.ts), each billed call (claude-code-spend.ts)
 * and each user or assistant line's message (handed to `onChat`). A line comes as JSON.parse's
 * value (`value`), or already read by the WebAssembly scanner (`scannedChat`, `scannedLink`:
 * claude-code-scanned.ts), and either way goes the same way from here on.
 */
import * as z from 'zod';
import { InputError } from '../errors.js';
import type { ContentBlock, Diagnostic } from '../session/model.js';
import { anthropicBlocks, anthropicContentSchema, anthropicUsageSchema, isNullishBoolean, isNullishString, isPlainContent, isPlainRecord, isPlainUsage } from './anthropic-content.js';
import type { CallKeys } from './claude-code-call-keys.js';
import type { ChatFacts, RareFacts, ScannedIds } from './claude-code-chain.js';
import { ChainLines } from './claude-code-chain.js';
import type { ChatLine } from './claude-code-messages.js';
import type { BilledLine, SessionSpend } from './claude-code-spend.js';
import { billedRecord, forkedFromSchema, responseKeyOf, SYNTHETIC_MODEL } from './claude-code-spend.js';
import { asRecord, lineId, parseLine, partsText } from './convert.js';
import { jsonKind } from './json/jsonl-lines.js';

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
 * parseChatLine only reads fields, so nothing needs copying; zod copies every
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

/** A user or assistant line, parsed: its message's line, and how it links into the chain. */
export interface ParsedChat {
  readonly chat: ChatLine;
  readonly uuid: string | null;
  readonly parent: string | null;
  readonly sidechain: boolean;
}

export function parseChatLine(value: Record<string, unknown>, file: string, line: number): ParsedChat {
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

function summaryText(blocks: readonly ContentBlock[]): string {
  return partsText(blocks.filter((block) => block.type === 'text'));
}

/** What the chain keeps of a parsed chat line (the blocks go to the assembler). */
function chatFacts(chat: ChatLine): ChatFacts {
  const role = chat.role;
  const responseKey = chat.responseKey;
  const synthetic = chat.model === SYNTHETIC_MODEL;
  const unknownTypes = chat.unknownTypes.length > 0 ? chat.unknownTypes : NONE;
  const calls = toolIds(chat.blocks, 'tool_request');
  const answers = toolIds(chat.blocks, 'tool_result');
  // Two literals, not a spread of the rare summary: a spread made each line's facts a copy.
  if (chat.compactSummary) return { role, responseKey, synthetic, summary: summaryText(chat.blocks), unknownTypes, calls, answers };
  return { role, responseKey, synthetic, unknownTypes, calls, answers };
}

/** A chat line's call, for the spend: an assistant line's, unless synthetic. */
const billedOf = (chat: ChatLine): BilledLine | null => (chat.role === 'assistant' && chat.model !== SYNTHETIC_MODEL ? chat : null);

/** The keys that link a line into the parent chain. */
const LINK_KEYS = ['uuid', 'parentUuid', 'logicalParentUuid'] as const;

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * A user or assistant line the scanner read: how it links (its ids as the scanner gives them), and
 * its message or (a sidechain line once the main chain began, read for its call only) its billing
 * fields, each made when asked.
 */
export interface ScannedChat extends ScannedIds {
  readonly sidechain: boolean;
  /** The line's message, as parseChatLine's `chat`. */
  readonly message: () => ChatLine;
  readonly billed: () => BilledLine | null;
}

/**
 * Every line of a file that can be a link in the parent chain, in file order; each user and
 * assistant line also goes to `onChat` as it is read, and each call to `spend`. Once the file has
 * a main-chain message, sidechain messages can no longer be part of the session and are kept as
 * links only (their calls are read for the spend).
 */
export class ClaudeLineReader {
  readonly lines: ChainLines;
  /** Links that are no strings, said where they are (after the read's own warnings). */
  readonly linkWarnings: Diagnostic[] = [];
  private mainChat = false;

  constructor(
    private readonly file: string,
    keys: CallKeys,
    private readonly spend: SessionSpend,
    private readonly onChat: (chat: ChatLine, line: number, sidechain: boolean) => void,
    /** What a line parsed here becomes before it goes on (a scanned read's stand-ins: claude-code-scanned.ts). */
    private readonly parsedAs: (chat: ChatLine) => ChatLine = (chat) => chat,
  ) {
    this.lines = new ChainLines(keys);
  }

  /** A line as JSON.parse gives it. */
  value(value: unknown, line: number): void {
    const { file, lines } = this;
    const record = asRecord(value);
    if (!record) throw new InputError('expected a JSON object', file, line);
    // A link that is no string breaks the chain there: said, not silently dropped.
    for (const key of LINK_KEYS) {
      const link = record[key];
      if (link !== undefined && link !== null && typeof link !== 'string') {
        this.linkWarnings.push({ file, line, message: `${key}: expected a string, got ${jsonKind(link)}; the line is not linked into the conversation` });
      }
    }
    const type = record['type'];
    if (type === 'user' || type === 'assistant') {
      const sidechain = record['isSidechain'] === true;
      const billed = this.mainChat && sidechain ? this.sidechainLink(record, line) : this.addChat(record, line);
      this.bill(billed, line, sidechain);
    } else if (type === 'system' && record['subtype'] === 'compact_boundary') this.addBoundary(record, line);
    // progress, attachment, other system lines: not context, but the chain runs through them.
    else if (typeof record['uuid'] === 'string') this.addLink(record, line);
  }

  /** A user or assistant line the scanner read (it reads only what `value` would read without a warning or an error). */
  scannedChat(scanned: ScannedChat, line: number): void {
    const { sidechain } = scanned;
    let billed: BilledLine | null;
    if (this.mainChat && sidechain) {
      this.lines.addScannedLink(scanned, line, true);
      billed = scanned.billed();
    } else {
      const chat = scanned.message();
      this.onChat(chat, line, sidechain);
      this.lines.addScannedChat(scanned, line, sidechain, chatFacts(chat));
      billed = billedOf(chat);
    }
    this.bill(billed, line, sidechain);
  }

  /** Any other line the scanner read that has a uuid. */
  scannedLink(ids: ScannedIds, line: number, sidechain: boolean): void {
    this.lines.addScannedLink(ids, line, sidechain);
  }

  private bill(billed: BilledLine | null, line: number, sidechain: boolean): void {
    if (billed) this.spend.add(billed, { file: this.file, line, cause: null, sidechain });
    this.mainChat ||= !sidechain;
  }

  /** A compact boundary: a link, with what it says about the compaction. */
  private addBoundary(value: Record<string, unknown>, line: number): void {
    const metadata = asRecord(value['compactMetadata']);
    const preTokens = metadata?.['preTokens'];
    const head = asRecord(metadata?.['preservedSegment'])?.['headUuid'];
    const logicalParent = value['logicalParentUuid'];
    this.addLink(value, line, {
      ...(typeof logicalParent === 'string' ? { logicalParent } : {}),
      boundary: {
        ...(typeof preTokens === 'number' && preTokens > 0 ? { preTokens } : {}),
        ...(typeof head === 'string' ? { preservedHead: head } : {}),
      },
    });
  }

  /** A line the chain runs through (no message of its own), or a message line that failed to parse. */
  private addLink(record: Record<string, unknown>, line: number, rare: RareFacts | null = null): void {
    this.lines.addLink(stringOrNull(record['uuid']), stringOrNull(record['parentUuid']), line, record['isSidechain'] === true, rare);
  }

  /** A sidechain line once the main chain has begun: a link, and its call for the spend. */
  private sidechainLink(record: Record<string, unknown>, line: number): BilledLine | null {
    this.addLink(record, line);
    return billedRecord(record);
  }

  /**
   * A user or assistant line: a link of the chain, its message to `onChat`; a malformed one is
   * kept as a link and fails only if it is read. Returns its call (assistant lines), for the spend.
   */
  private addChat(record: Record<string, unknown>, line: number): BilledLine | null {
    let parsed: ParsedChat;
    try {
      parsed = parseChatLine(record, this.file, line);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      this.addLink(record, line, { invalid: error });
      return billedRecord(record);
    }
    return this.chat({ ...parsed, chat: this.parsedAs(parsed.chat) }, line);
  }

  private chat(parsed: ParsedChat, line: number): BilledLine | null {
    const { chat } = parsed;
    this.onChat(chat, line, parsed.sidechain);
    this.lines.addChat(parsed.uuid, parsed.parent, line, parsed.sidechain, chatFacts(chat));
    return billedOf(chat);
  }
}
