/**
 * Streams a JSONL file line by line with 1-based line numbers. Handles a byte-order mark, CRLF,
 * blank lines, and a truncated last line (a session still being written: a warning, not an
 * error). Any other line that is not JSON is an InputError naming file and line.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { InputError } from '../errors.js';
import type { Diagnostic } from '../session/model.js';

const NEWLINE = 0x0a;
const CHUNK_BYTES = 1 << 20;

export type LineVisitor = (value: unknown, line: number) => void;

function parseLine(raw: string, file: string, line: number): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new InputError(`invalid JSON: ${(error as Error).message}`, file, line);
  }
}

function decode(bytes: Buffer, line: number): string {
  let text = bytes.toString('utf8');
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text;
}

/** Calls `visit` for every JSON line of the file; returns warnings for skipped lines. */
export async function forEachJsonLine(file: string, visit: LineVisitor): Promise<Diagnostic[]> {
  const warnings: Diagnostic[] = [];
  // Pieces of a line that spans chunks, joined once its newline arrives (a 50 MB line stays linear).
  let carry: Buffer[] = [];
  let line = 0;
  const handle = (bytes: Buffer) => {
    line++;
    const text = decode(bytes, line);
    if (text.trim() === '') return;
    visit(parseLine(text, file, line), line);
  };
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      let from = 0;
      for (let newline = chunk.indexOf(NEWLINE); newline >= 0; newline = chunk.indexOf(NEWLINE, from)) {
        const piece = chunk.subarray(from, newline);
        handle(carry.length > 0 ? Buffer.concat([...carry, piece]) : piece);
        carry = [];
        from = newline + 1;
      }
      if (from < chunk.length) carry.push(chunk.subarray(from));
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read: ${(error as Error).message}`, file);
  }
  if (carry.length > 0) {
    line++;
    const text = decode(Buffer.concat(carry), line);
    if (text.trim() !== '') {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        warnings.push({ file, line, message: 'last line is incomplete (file still being written?); skipped' });
        return warnings;
      }
      visit(value, line);
    }
  }
  return warnings;
}

/** The first `count` JSON values of a file, for format detection. Unparseable lines are skipped. */
export async function peekJsonLines(file: string, count: number, maxBytes = 4 << 20): Promise<unknown[]> {
  const handle = await open(file, 'r').catch((error: Error) => {
    throw new InputError(`cannot read: ${error.message}`, file);
  });
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    const values: unknown[] = [];
    let from = 0;
    let line = 0;
    while (from < bytesRead && values.length < count) {
      let end = buffer.indexOf(NEWLINE, from);
      if (end < 0 || end > bytesRead) end = bytesRead;
      line++;
      const text = decode(buffer.subarray(from, end), line);
      from = end + 1;
      if (text.trim() === '') continue;
      try {
        values.push(JSON.parse(text));
      } catch {
        // A line cut by maxBytes or a bad line: detection works on what parses.
      }
    }
    return values;
  } finally {
    await handle.close();
  }
}
