/**
 * The Claude Code reader's lines from the WebAssembly scanner (src/scan/, assembly/claude.ts),
 * for a read that only measures text (ReadOptions.textLengthsOnly) of a plain file large enough
 * to pay for loading it. The scanner reads each line's bytes and writes what the reader needs of
 * it (links, billing fields, blocks with their texts' lengths); nothing of a line is decoded but
 * its ids, model and timestamps and its tool calls' input. Lines the scanner leaves to JavaScript
 * (anything it is not certain of) are parsed as the JavaScript reader parses them, with its
 * errors and warnings, at their place among the others.
 *
 * Texts are not decoded: a block holds a stand-in of its text's UTF-16 length (tokens/estimate.ts
 * reads only that on such a read). A response split over lines is merged by comparing its
 * blocks (claude-code-messages.ts), so on an assistant line a stand-in also carries a hash of its
 * text's units (the scanner's, or `hashedStandIn` for a line parsed here): two blocks compare
 * equal exactly when their texts do (up to a 64-bit hash). A text under four units is itself.
 */
import * as layout from '../scan/claude-layout.js';
import type { ScanResult } from '../scan/scanner.js';
import type { ClaudeScanner } from '../scan/scanner.js';
import { scannerReady } from '../scan/scanner.js';
import type { ContentBlock, Diagnostic } from '../session/model.js';
import type { AnthropicUsage } from './anthropic-content.js';
import type { ScannedIds } from './claude-code-chain.js';
import type { ScannedChat } from './claude-code-lines.js';
import type { ChatLine } from './claude-code-messages.js';
import type { BilledLine } from './claude-code-spend.js';
import { responseKeyOf, SYNTHETIC_MODEL } from './claude-code-spend.js';
import { lineId } from './convert.js';
import { inputShape } from './json/input-source.js';
import type { LineCutter } from './json/json-cut.js';
import type { RawScannedLine } from './json/scanned-lines.js';
import { scanFileLines } from './json/scanned-lines.js';
import { measuredText } from './json/json-walk.js';

/**
 * A file this large is read with the scanner, which is loaded for it if this thread has none yet:
 * loading it (compiling the module, mapping its memory) costs about what reading this much
 * faster saves. A smaller file is read with it when it is loaded already (`scannerReady`), or
 * when this thread's reads have come to SCANNED_BYTES already (a batch of small sessions: the
 * loading is paid once for all the files still to come), down to READY_BYTES, under which
 * starting a scan costs more than it saves.
 */
export const SCANNED_BYTES = 256 << 10;
export const READY_BYTES = 8 << 10;

/** The bytes of the files this thread asked scannedFile about: what its reads have come to. */
let bytesAsked = 0;

/** Whether the file is read with the scanner (see SCANNED_BYTES): a plain file, large enough; `loaded`: a scanner is at hand. */
export function scannedFile(file: string, loaded = scannerReady()): boolean {
  const { plain } = inputShape(file);
  if (plain === null) return false;
  bytesAsked += plain.size;
  return plain.size >= SCANNED_BYTES || (plain.size >= READY_BYTES && (loaded || bytesAsked >= SCANNED_BYTES));
}

/** A string of the record: its place in the chunk and its length word (-1: absent or null). */
function stringAt(chunk: Buffer, offset: number, length: number): string | null {
  if (length === -1) return null;
  const bytes = length & layout.STRING_BYTES;
  // An escaped text is parsed with its quotes, which sit on either side of it in the chunk.
  if ((length & layout.STRING_ESCAPED) !== 0) return JSON.parse(chunk.toString('utf8', offset - 1, offset + bytes + 1)) as string;
  return chunk.toString((length & layout.STRING_WIDE) !== 0 ? 'utf8' : 'latin1', offset, offset + bytes);
}

/** Spaces to cut stand-ins from: a slice of one string is made at once, where repeat builds one up. */
const SPACES = ' '.repeat(1 << 16);

/** A text of `units` spaces (json-walk.ts measuredText's stand-in). */
function spaces(units: number): string {
  return units <= SPACES.length ? SPACES.slice(0, units) : measuredText(units);
}

/** Text of `units` UTF-16 units whose hash is `low`, `high`: its first four units carry the hash. */
function standIn(units: number, low: number, high: number): string {
  return String.fromCharCode(low & 0xffff, low >>> 16, high & 0xffff, high >>> 16) + spaces(units - 4);
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const WORD = 0xffffffffn;
const MASK = 0xffffffffffffffffn;

/**
 * The stand-in the scanner makes of an assistant line's text (assembly/json.ts: FNV-1a over its
 * UTF-16 units), for one parsed here: the rare assistant line the scanner leaves to JavaScript
 * must merge with the scanned lines of its response as the texts would.
 */
export function hashedStandIn(text: string): string {
  if (text.length < 4) return text;
  let hash = FNV_OFFSET;
  for (let index = 0; index < text.length; index++) hash = ((hash ^ BigInt(text.charCodeAt(index))) * FNV_PRIME) & MASK;
  return standIn(text.length, Number(hash & WORD), Number(hash >> 32n));
}

/** An assistant line parsed here, its texts as the scanner's stand-ins (see the header). */
export function withStandIns(chat: ChatLine): ChatLine {
  if (chat.role !== 'assistant' || chat.compactSummary) return chat;
  const blocks = chat.blocks.map((block): ContentBlock => {
    switch (block.type) {
      case 'text':
      case 'thinking':
        return { type: block.type, text: hashedStandIn(block.text) };
      case 'tool_result':
        return { type: 'tool_result', tool_request_id: block.tool_request_id, output: hashedStandIn(block.output), is_error: block.is_error };
      case 'tool_request':
        return block;
    }
  });
  return { ...chat, blocks };
}

/** A 64-bit count of the record (two words, low first). */
function countAt(words: Int32Array, at: number): number {
  return words[at + 1]! * 0x100000000 + (words[at]! >>> 0);
}

const COUNT_KEYS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;

/**
 * The chat record the reader is reading, read field by field as the line reader asks: one object
 * for the whole read, moved from record to record (its views are the scan's, valid until the next).
 */
class ChatRecord implements ScannedChat, ScannedIds {
  words: Int32Array = new Int32Array(0);
  chunk: Buffer = Buffer.alloc(0);
  at = 0;
  line = 0;

  private string(slot: number, from = this.at): string | null {
    const { words } = this;
    return stringAt(this.chunk, words[from + slot]!, words[from + slot + 1]!);
  }

  private get head(): number {
    return this.words[this.at]!;
  }

  get assistant(): boolean {
    return (this.head & layout.FLAG_ASSISTANT) !== 0;
  }

  get uuid(): string | null {
    return this.string(layout.STRING_UUID);
  }

  get parent(): string | null {
    return this.string(layout.STRING_PARENT);
  }

  get uuidAt(): number {
    return (this.head & layout.FLAG_UUID_WORDS) !== 0 ? this.at + layout.WORDS_UUID : -1;
  }

  get parentAt(): number {
    return (this.head & layout.FLAG_PARENT_WORDS) !== 0 ? this.at + layout.WORDS_PARENT : -1;
  }

  get sidechain(): boolean {
    return (this.head & layout.FLAG_SIDECHAIN) !== 0;
  }

  private usage(): AnthropicUsage | null {
    if ((this.head & layout.FLAG_USAGE) === 0) return null;
    const { words } = this;
    const bits = words[this.at + layout.WORD_USAGE_BITS]!;
    const counts = this.at + layout.WORD_USAGE_COUNTS;
    const usage: Record<string, unknown> = {};
    for (let index = 0; index < COUNT_KEYS.length; index++) if ((bits & (1 << index)) !== 0) usage[COUNT_KEYS[index]!] = countAt(words, counts + 2 * index);
    if ((bits & (1 << layout.USAGE_SPLIT)) !== 0) {
      const split: Record<string, number> = {};
      if ((bits & (1 << layout.USAGE_WRITE_5M)) !== 0) split['ephemeral_5m_input_tokens'] = countAt(words, counts + 2 * layout.USAGE_WRITE_5M);
      if ((bits & (1 << layout.USAGE_WRITE_1H)) !== 0) split['ephemeral_1h_input_tokens'] = countAt(words, counts + 2 * layout.USAGE_WRITE_1H);
      usage['cache_creation'] = split;
    }
    return usage as AnthropicUsage;
  }

  /** The billing fields (what billedRecord reads of the line). */
  billed(): BilledLine | null {
    const model = this.string(layout.STRING_MODEL);
    if (!this.assistant || model === SYNTHETIC_MODEL) return null;
    return {
      responseKey: responseKeyOf(this.string(layout.STRING_MESSAGE_ID), this.string(layout.STRING_REQUEST)),
      usage: this.usage(),
      final: (this.head & layout.FLAG_FINAL) !== 0,
      model,
      timestamp: this.string(layout.STRING_TIMESTAMP),
      copiedFrom: this.string(layout.STRING_FORKED_FROM),
    };
  }

  /** A compaction's summary: its texts are read whole (the JavaScript reader gives them no stand-ins). */
  private get compactSummary(): boolean {
    return (this.head & layout.FLAG_COMPACT_SUMMARY) !== 0;
  }

  /** A block's text: itself under four units or in a summary (decoded from the chunk), else a stand-in of its length. */
  private text(block: number): string {
    const { words } = this;
    const units = words[block + layout.BLOCK_UNITS]!;
    if (units === 0) return '';
    if (units < 4 || this.compactSummary) return stringAt(this.chunk, words[block + layout.BLOCK_TEXT_STRING]!, words[block + layout.BLOCK_TEXT_STRING + 1]!)!;
    return this.assistant ? standIn(units, words[block + layout.BLOCK_HASH]!, words[block + layout.BLOCK_HASH + 1]!) : spaces(units);
  }

  private blocks(): ContentBlock[] {
    const { words, at } = this;
    const count = words[at + layout.WORD_BLOCKS]!;
    const blocks: ContentBlock[] = [];
    for (let index = 0; index < count; index++) {
      const block = at + layout.CHAT_WORDS + index * layout.BLOCK_WORDS;
      const head = words[block]!;
      switch (head & 0xff) {
        case layout.BLOCK_TEXT:
          blocks.push({ type: 'text', text: this.text(block) });
          break;
        case layout.BLOCK_THINKING:
          blocks.push({ type: 'thinking', text: this.text(block) });
          break;
        case layout.BLOCK_TOOL_USE: {
          const from = words[block + layout.BLOCK_INPUT]!;
          const input: unknown = JSON.parse(this.chunk.toString('utf8', from, from + words[block + layout.BLOCK_INPUT + 1]!));
          const args = (head & layout.FLAG_INPUT_OBJECT) !== 0 ? (input as Record<string, unknown>) : { input };
          blocks.push({ type: 'tool_request', id: this.string(layout.BLOCK_ID, block)!, name: this.string(layout.BLOCK_NAME, block)!, arguments: args });
          break;
        }
        case layout.BLOCK_TOOL_RESULT:
          blocks.push({ type: 'tool_result', tool_request_id: this.string(layout.BLOCK_ID, block)!, output: this.text(block), is_error: (head & layout.FLAG_IS_ERROR) !== 0 });
          break;
      }
    }
    return blocks;
  }

  /** The line's message, as parseChatLine gives it. */
  message(): ChatLine {
    return {
      role: this.assistant ? 'assistant' : 'user',
      uuid: this.uuid ?? lineId(this.line),
      blocks: this.blocks(),
      responseKey: this.assistant ? responseKeyOf(this.string(layout.STRING_MESSAGE_ID), this.string(layout.STRING_REQUEST)) : null,
      model: this.string(layout.STRING_MODEL),
      usage: this.usage(),
      final: (this.head & layout.FLAG_FINAL) !== 0,
      compactSummary: this.compactSummary,
      timestamp: this.string(layout.STRING_TIMESTAMP),
      copiedFrom: this.string(layout.STRING_FORKED_FROM),
      unknownTypes: [],
    };
  }
}

/** Where scanned lines go: the session's line reader (claude-code-lines.ts), or a subagent transcript's calls. */
export interface ScannedLines {
  /** A line the scanner left to JavaScript, as JSON.parse gives it. */
  value(value: unknown, line: number): void;
  scannedChat(chat: ScannedChat, line: number): void;
  /** A link line (a uuid, not always in its usual spelling): `ids` is valid during the call only. */
  scannedLink(ids: ScannedIds, line: number, sidechain: boolean): void;
}

/** The records of one scan, to `reader` in line order; raw lines parsed here (`cutter`: the JavaScript reader's). */
function readRecords(scan: ScanResult, reader: ScannedLines, chat: ChatRecord, raw: RawScannedLine): void {
  const { words, chunk } = scan;
  chat.words = words;
  chat.chunk = chunk;
  for (let at = 0; at < words.length; at += words[at + layout.WORD_LENGTH]!) {
    const head = words[at]!;
    const line = words[at + layout.WORD_LINE]!;
    switch (head & 0xff) {
      case layout.KIND_LINK:
        // The chat record's view reads a link's ids too: they sit in the same words.
        chat.at = at;
        chat.line = line;
        reader.scannedLink(chat, line, (head & layout.FLAG_SIDECHAIN) !== 0);
        break;
      case layout.KIND_CHAT:
        chat.at = at;
        chat.line = line;
        reader.scannedChat(chat, line);
        break;
      case layout.KIND_RAW: {
        const from = words[at + layout.RAW_OFFSET]!;
        raw(chunk.subarray(from, from + words[at + layout.RAW_BYTES]!), line, (head & layout.FLAG_TERMINATED) !== 0);
        break;
      }
    }
  }
}

/**
 * Every line of a plain file to `reader`, scanned (json/scanned-lines.ts, with this format's
 * scan and records); returns the warnings of the lines parsed in JavaScript.
 */
export function scanClaudeLines(file: string, scanner: ClaudeScanner, reader: ScannedLines, cutter: LineCutter): Diagnostic[] {
  const chat = new ChatRecord();
  return scanFileLines(file, scanner, {
    scan: (from, to, final, lines) => scanner.scan(from, to, final, lines),
    records: (scan, raw) => readRecords(scan, reader, chat, raw),
    value: (value, line) => reader.value(value, line),
    cutter,
  });
}
