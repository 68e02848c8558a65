/**
 * Streams a JSONL file line by line with 1-based line numbers. Handles a byte-order mark, CRLF,
 * blank lines, invalid UTF-8 (replaced, with a warning) and a truncated last line (a session
 * still being written: a warning, not an error). A line that is not JSON, or that holds binary
 * data, is an InputError naming file and line. What a line means is left to the format readers.
 */
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { describeFsError, InputError } from '../errors.js';
import type { Diagnostic } from '../session/model.js';

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

/** A line's raw bytes, and whether a newline ended it (only the last line of a file may lack one). */
interface RawLine {
  readonly bytes: Buffer;
  readonly line: number;
  readonly terminated: boolean;
}

async function* rawLines(file: string): AsyncGenerator<RawLine> {
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

/** V8's "in JSON at position N" as a column of the line, and never more than a short line. */
function jsonErrorMessage(error: unknown): string {
  const message = ((error as Error).message ?? String(error)).replace(/ in JSON at position (\d+)/, (_, position: string) => ` at column ${Number(position) + 1}`);
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
}

/** A line's text without a byte-order mark (first line) or a CR (CRLF files). */
function lineText(bytes: Buffer, line: number): string {
  let text = bytes.toString('utf8');
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text;
}

function decode(raw: RawLine, file: string, warn: (diagnostic: Diagnostic) => void): string {
  const { bytes, line } = raw;
  if (bytes.includes(NUL)) throw new InputError('binary data (a NUL byte), not a JSONL session', file, line);
  if (!isUtf8(bytes)) warn({ file, line, message: 'invalid UTF-8; the bad bytes were replaced with U+FFFD' });
  return lineText(bytes, line);
}

/**
 * The parsed lines of a file. A bad line throws; recoverable oddities (invalid UTF-8, a cut-off
 * last line) go to `warn`.
 */
export async function* readJsonLines(file: string, warn: (diagnostic: Diagnostic) => void): AsyncGenerator<JsonLine> {
  for await (const raw of rawLines(file)) {
    const text = decode(raw, file, warn);
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!raw.terminated) {
        warn({ file, line: raw.line, message: 'last line is incomplete (file still being written?); skipped' });
        return;
      }
      throw new InputError(`invalid JSON: ${jsonErrorMessage(error)}`, file, raw.line);
    }
    yield { line: raw.line, value };
  }
}

/**
 * Calls `visit` for every JSON line of the file; returns warnings for what was skipped or
 * replaced. A file with no JSON line at all is an InputError ("empty file").
 */
export async function forEachJsonLine(file: string, visit: LineVisitor): Promise<Diagnostic[]> {
  const warnings: Diagnostic[] = [];
  let visited = 0;
  for await (const { value, line } of readJsonLines(file, (warning) => warnings.push(warning))) {
    visited++;
    visit(value, line);
  }
  if (visited === 0 && warnings.length === 0) throw new InputError('empty file: no JSON lines to read', file);
  return warnings;
}

/**
 * The first `count` JSON values among the first `maxBytes` of a file, for sniffing what a file
 * is without reading all of it. Lines that do not parse (or are cut by `maxBytes`) are skipped.
 */
export async function peekJsonLines(file: string, count: number, maxBytes = 4 << 20): Promise<unknown[]> {
  const handle = await open(file, 'r').catch((error: unknown) => {
    throw new InputError(`cannot read: ${describeFsError(error)}`, file);
  });
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    const values: unknown[] = [];
    let line = 0;
    for (let from = 0; from < bytesRead && values.length < count; ) {
      let end = buffer.indexOf(NEWLINE, from);
      if (end < 0 || end > bytesRead) end = bytesRead;
      const text = lineText(buffer.subarray(from, end), ++line);
      from = end + 1;
      if (text.trim() === '') continue;
      try {
        values.push(JSON.parse(text));
      } catch {
        // A bad line, or one cut by maxBytes: sniffing works on what parses.
      }
    }
    return values;
  } finally {
    await handle.close();
  }
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
