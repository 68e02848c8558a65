/**
 * The Codex reader's lines from the WebAssembly scanner (src/scan/, assembly/codex.ts), for a
 * read that only measures text (ReadOptions.textLengthsOnly) of a plain file large enough to pay
 * for loading it (claude-code-scanned.ts scannedFile). The scanner reads the lines that hold most
 * of a rollout's bytes and lines (tool outputs and calls, reasoning items, messages, session_meta
 * with the agent's instructions, token counts, turn contexts, the events the reader ignores) and writes
 * what the reader takes of each; here each record becomes the line's type, time and payload as
 * the reader (codex.ts readItem) would get them from JSON.parse and its schema, the payload
 * trimmed to the keys it reads, a text it only measures a stand-in of the same UTF-16 length.
 * Lines the scanner leaves to JavaScript are parsed as the JavaScript reader parses them, with
 * its errors and warnings, at their place among the others.
 */
import * as layout from '../scan/codex-layout.js';
import type { ClaudeScanner, ScanResult } from '../scan/scanner.js';
import type { Diagnostic } from '../session/model.js';
import { measuredText } from './json/json-walk.js';
import type { RawScannedLine } from './json/scanned-lines.js';
import { scanFileLines } from './json/scanned-lines.js';

/** A string of the record (its slot's two words), or undefined when absent. */
function stringAt(chunk: Buffer, words: Int32Array, at: number): string | undefined {
  const offset = words[at]!;
  const length = words[at + 1]!;
  if (length === -1) return undefined;
  const bytes = length & layout.CODEX_STRING_BYTES;
  // An escaped text is parsed with its quotes, which sit on either side of it in the chunk.
  if ((length & layout.CODEX_STRING_ESCAPED) !== 0) return JSON.parse(chunk.toString('utf8', offset - 1, offset + bytes + 1)) as string;
  return chunk.toString((length & layout.CODEX_STRING_WIDE) !== 0 ? 'utf8' : 'latin1', offset, offset + bytes);
}

/** Spaces to cut stand-ins from: a slice of one string is made at once. */
const SPACES = ' '.repeat(1 << 16);

/** A text of `units` spaces (json-walk.ts measuredText's stand-in). */
function standIn(units: number): string {
  return units <= SPACES.length ? SPACES.slice(0, units) : measuredText(units);
}

const OUTPUT_TYPES: Record<number, string> = {
  [layout.CODEX_OUTPUT_FUNCTION]: 'function_call_output',
  [layout.CODEX_OUTPUT_CUSTOM]: 'custom_tool_call_output',
  [layout.CODEX_OUTPUT_SHELL]: 'local_shell_call_output',
};

/** A count of the record (two words, low first). */
function countAt(words: Int32Array, at: number): number {
  return words[at + 1]! * 0x100000000 + (words[at]! >>> 0);
}

/** codex.ts totalsKey's counts, in the order the scanner writes them. */
const USAGE_KEYS = ['input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_output_tokens'] as const;

/** A token_count's usage object: the counts its bits say are there, from word `from`. */
function usageAt(words: Int32Array, from: number, bits: number, first: number): Record<string, number> {
  const usage: Record<string, number> = {};
  for (let index = 0; index < USAGE_KEYS.length; index++) if ((bits & (1 << (first + index))) !== 0) usage[USAGE_KEYS[index]!] = countAt(words, from + 2 * index);
  return usage;
}

/** A token_count's `info`, when it was an object. */
function infoAt(words: Int32Array, at: number): Record<string, unknown> | undefined {
  const bits = words[at + layout.CODEX_COUNT_BITS]!;
  if ((bits & layout.CODEX_HAS_INFO) === 0) return undefined;
  const info: Record<string, unknown> = {};
  if ((bits & layout.CODEX_HAS_LAST) !== 0) info['last_token_usage'] = usageAt(words, at + layout.CODEX_LAST, bits, layout.CODEX_LAST_BIT);
  if ((bits & layout.CODEX_HAS_TOTAL) !== 0) info['total_token_usage'] = usageAt(words, at + layout.CODEX_TOTAL, bits, layout.CODEX_TOTAL_BIT);
  if ((bits & layout.CODEX_HAS_WINDOW) !== 0) info['model_context_window'] = countAt(words, at + layout.CODEX_WINDOW);
  return info;
}

/** Where scanned lines go: codex.ts's reader. */
export interface ScannedRollout {
  /** A line the scanner left to JavaScript, as JSON.parse gives it. */
  value(value: unknown, line: number): void;
  /** A scanned line: its type and time, and its payload as far as the reader reads it (schema checked by the scanner). */
  item(type: string, payload: Record<string, unknown>, timestamp: string | undefined, line: number): void;
}

/** The line a record stands for, as much of it as the reader reads (see the header), to `reader`. */
function readRecord(words: Int32Array, at: number, chunk: Buffer, reader: ScannedRollout, line: number): void {
  const { type, payload } = recordItem(words, at, chunk);
  reader.item(type, payload, stringAt(chunk, words, at + layout.CODEX_TIMESTAMP), line);
}

/** The line's type and payload a record stands for. */
function recordItem(words: Int32Array, at: number, chunk: Buffer): { type: string; payload: Record<string, unknown> } {
  const head = words[at]!;
  switch (head & 0xff) {
    case layout.CODEX_KIND_OUTPUT: {
      const payload = { type: OUTPUT_TYPES[head & layout.CODEX_OUTPUT_KIND], call_id: stringAt(chunk, words, at + layout.CODEX_CALL_ID), output: standIn(words[at + layout.CODEX_UNITS]!) };
      return { type: 'response_item', payload };
    }
    case layout.CODEX_KIND_TOKENS: {
      const info = infoAt(words, at);
      return { type: 'event_msg', payload: info === undefined ? { type: 'token_count' } : { type: 'token_count', info } };
    }
    case layout.CODEX_KIND_CONTEXT: {
      const payload: Record<string, unknown> = {};
      const model = stringAt(chunk, words, at + layout.CODEX_MODEL);
      if (model !== undefined) payload['model'] = model;
      if ((words[at + layout.CODEX_COUNT_BITS]! & layout.CODEX_HAS_WINDOW) !== 0) payload['model_context_window'] = countAt(words, at + layout.CODEX_WINDOW);
      return { type: 'turn_context', payload };
    }
    case layout.CODEX_KIND_CALL: {
      const payload = { type: 'function_call', call_id: stringAt(chunk, words, at + layout.CODEX_CALL_ID), name: stringAt(chunk, words, at + layout.CODEX_NAME), arguments: stringAt(chunk, words, at + layout.CODEX_ARGUMENTS) };
      return { type: 'response_item', payload };
    }
    case layout.CODEX_KIND_MESSAGE: {
      const role = stringAt(chunk, words, at + layout.CODEX_ROLE);
      const content = standIn(words[at + layout.CODEX_UNITS]!);
      return { type: 'response_item', payload: role === undefined ? { type: 'message', content } : { type: 'message', role, content } };
    }
    case layout.CODEX_KIND_REASONING:
      return { type: 'response_item', payload: { type: 'reasoning', summary: standIn(words[at + layout.CODEX_UNITS]!) } };
    case layout.CODEX_KIND_META: {
      const payload: Record<string, string> = {};
      const id = stringAt(chunk, words, at + layout.CODEX_ID);
      const cwd = stringAt(chunk, words, at + layout.CODEX_CWD);
      const parent = stringAt(chunk, words, at + layout.CODEX_FORKED_FROM);
      if (id !== undefined) payload['id'] = id;
      if (cwd !== undefined) payload['cwd'] = cwd;
      if (parent !== undefined) payload['forked_from_id'] = parent;
      return { type: 'session_meta', payload };
    }
    default:
      // A line the reader only notes the time of: an event without a type it reads.
      return { type: 'event_msg', payload: {} };
  }
}

/**
 * Every line of a plain file to `reader`, scanned (json/scanned-lines.ts, with this format's
 * scan and records); returns the warnings of the lines parsed in JavaScript.
 */
export function scanCodexLines(file: string, scanner: ClaudeScanner, reader: ScannedRollout): Diagnostic[] {
  return scanFileLines(file, scanner, {
    scan: (from, to, final, lines) => scanner.scanCodex(from, to, final, lines),
    records: (scan, raw) => readRecords(scan, reader, raw),
    value: (value, line) => reader.value(value, line),
  });
}

/** The records of one scan, to `reader` in line order; raw lines to `raw`. */
function readRecords(scan: ScanResult, reader: ScannedRollout, raw: RawScannedLine): void {
  const { words, chunk } = scan;
  for (let at = 0; at < words.length; at += words[at + layout.CODEX_WORD_LENGTH]!) {
    const head = words[at]!;
    const line = words[at + layout.CODEX_WORD_LINE]!;
    if ((head & 0xff) === layout.CODEX_KIND_RAW) {
      const offset = words[at + layout.CODEX_RAW_OFFSET]!;
      raw(chunk.subarray(offset, offset + words[at + layout.CODEX_RAW_BYTES]!), line, (head & layout.CODEX_TERMINATED) !== 0);
    } else readRecord(words, at, chunk, reader, line);
  }
}
