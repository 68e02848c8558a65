/**
 * Streams a JSONL file line by line with 1-based line numbers. Handles a byte-order mark, CRLF,
 * blank lines, invalid UTF-8 (replaced, with a warning) and a truncated last line (a session
 * still being written: a warning, not an error). A line that is not JSON, or that holds binary
 * data, is an InputError naming file and line. What a line means is left to the format readers;
 * reading the bytes of a regular file is line-scan.ts's.
 */
import { isUtf8 } from 'node:buffer';
import { createReadStream, statSync } from 'node:fs';
import { describeFsError, InputError } from '../errors.js';
import type { Diagnostic } from '../session/model.js';
import type { KeyCutter } from './json-cut.js';
import type { Peek, RawLine } from './line-scan.js';
import { lineText, peekJsonValues, scanLines } from './line-scan.js';

const NEWLINE = 0x0a;
const NUL = 0x00;
const CHUNK_BYTES = 1 << 20;
/** Error messages quote at most this much of a line, so a 50 MB line still gives one short line. */
const MAX_MESSAGE_CHARS = 160;

export type LineVisitor = (value: unknown, line: number) => void;

export interface JsonLine {
  readonly line: number;
  readonly value: unknown;
}

/** Lines of what is not a regular file (a named pipe): streamed, so the thread never blocks on it. */
async function* streamedLines(file: string): AsyncGenerator<RawLine> {
  // Pieces of a line that spans chunks, joined once its newline arrives (a 50 MB line stays linear).
  let carry: Buffer[] = [];
  let line = 0;
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      let from = 0;
      for (let newline = chunk.indexOf(NEWLINE); newline >= 0; newline = chunk.indexOf(NEWLINE, from)) {
        const piece = chunk.subarray(from, newline);
        yield { bytes: carry.length > 0 ? Buffer.concat([...carry, piece]) : piece, line: ++line, terminated: true };
        carry = [];
        from = newline + 1;
      }
      if (from < chunk.length) carry.push(chunk.subarray(from));
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read: ${describeFsError(error)}`, file);
  }
  if (carry.length > 0) yield { bytes: Buffer.concat(carry), line: ++line, terminated: false };
}

/** Regular files are read by line-scan.ts; anything else (or what cannot be stat'ed) is streamed. */
function isRegularFile(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

/** V8's "in JSON at position N" as a column of the line, and never more than a short line. */
function jsonErrorMessage(error: unknown): string {
  const message = ((error as Error).message ?? String(error)).replace(/ in JSON at position (\d+)/, (_, position: string) => ` at column ${Number(position) + 1}`);
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
}

/**
 * One raw line parsed: its value, or null for a blank line or a cut-off last line (warned). A bad
 * line throws; invalid UTF-8 is replaced, with a warning. `cutter` drops values the reader never
 * reads before parsing; a line whose cut text does not parse is parsed whole, for its own error.
 */
function parseRawLine(raw: RawLine, file: string, warn: (diagnostic: Diagnostic) => void, cutter?: KeyCutter): JsonLine | null {
  const { bytes, line } = raw;
  if (bytes.includes(NUL)) throw new InputError('binary data (a NUL byte), not a JSONL session', file, line);
  if (!isUtf8(bytes)) warn({ file, line, message: 'invalid UTF-8; the bad bytes were replaced with U+FFFD' });
  const cut = cutter?.cut(bytes);
  if (cut) {
    try {
      return { line, value: JSON.parse(cut) };
    } catch {
      // Parsed whole below, so the message and column are the line's own.
    }
  }
  const text = lineText(bytes, line);
  if (text.trim() === '') return null;
  try {
    return { line, value: JSON.parse(text) };
  } catch (error) {
    // Only the last line can lack its newline, so skipping it ends the file.
    if (!raw.terminated) {
      warn({ file, line, message: 'last line is incomplete (file still being written?); skipped' });
      return null;
    }
    throw new InputError(`invalid JSON: ${jsonErrorMessage(error)}`, file, line);
  }
}

function* scannedJsonLines(file: string, warn: (diagnostic: Diagnostic) => void, cutter?: KeyCutter): Generator<JsonLine> {
  for (const raw of scanLines(file)) {
    const parsed = parseRawLine(raw, file, warn, cutter);
    if (parsed) yield parsed;
  }
}

/**
 * The parsed lines of a file. A bad line throws; recoverable oddities (invalid UTF-8, a cut-off
 * last line) go to `warn`.
 */
export async function* readJsonLines(file: string, warn: (diagnostic: Diagnostic) => void, cutter?: KeyCutter): AsyncGenerator<JsonLine> {
  if (isRegularFile(file)) {
    yield* scannedJsonLines(file, warn, cutter);
    return;
  }
  for await (const raw of streamedLines(file)) {
    const parsed = parseRawLine(raw, file, warn, cutter);
    if (parsed) yield parsed;
  }
}

/**
 * Calls `visit` for every JSON line of the file; returns warnings for what was skipped or
 * replaced. A file with no JSON line at all is an InputError ("empty file"). A regular file is
 * read without a promise per line (the common case, and the hot loop of a bulk run). With a
 * `cutter`, the values of the top-level keys it names are left out of every value (json-cut.ts).
 */
export async function forEachJsonLine(file: string, visit: LineVisitor, cutter?: KeyCutter): Promise<Diagnostic[]> {
  const warnings: Diagnostic[] = [];
  const warn = (warning: Diagnostic) => warnings.push(warning);
  let visited = 0;
  const onLine = ({ value, line }: JsonLine) => {
    visited++;
    visit(value, line);
  };
  if (isRegularFile(file)) for (const line of scannedJsonLines(file, warn, cutter)) onLine(line);
  else for await (const line of readJsonLines(file, warn, cutter)) onLine(line);
  if (visited === 0 && warnings.length === 0) throw new InputError('empty file: no JSON lines to read', file);
  return warnings;
}

/**
 * The first `count` JSON values among the first `maxBytes` of a file, for sniffing what a file
 * is without reading all of it (line-scan.ts reads only what it needs).
 */
export function peekJsonLines(file: string, count: number, maxBytes = 4 << 20): Peek {
  return peekJsonValues(file, count, maxBytes);
}

/** `object`, `array`, `string`… as a message says it. */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
