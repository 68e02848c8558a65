/**
 * Format detection's look at the start of a file, reading only as much as it needs.
 *
 * jsonl-lines.ts's peekJsonLines allocates and zero-fills its whole 4 MB window for every file;
 * over 10,000 small sessions that was most of `compact`'s time (2 GB of buffers to clear and
 * collect; see README "Performance"). This reads 64 KB, then doubles, until it has `count`
 * complete lines, the file ends, or `maxBytes` is reached, and returns the same values. Reads
 * are synchronous: a session is read by one thread at a time, and a thread-pool round trip per
 * small file cost more than the read.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { InputError } from '../errors.js';
import { decode } from './jsonl-lines.js';

const NEWLINE = 0x0a;

function openForReading(file: string): number {
  try {
    return openSync(file, 'r');
  } catch (error) {
    throw new InputError(`cannot read: ${(error as Error).message}`, file);
  }
}
const FIRST_READ = 64 << 10;

/** The first `count` JSON values of a file, for format detection. Unparseable lines are skipped. */
export async function peekJsonValues(file: string, count: number, maxBytes = 4 << 20): Promise<unknown[]> {
  const fd = openForReading(file);
  try {
    let buffer = Buffer.allocUnsafe(Math.min(FIRST_READ, maxBytes));
    let filled = 0;
    let ended = false;
    // Read until `count` newlines are in, the file ends, or the window is full.
    for (;;) {
      const bytesRead = readSync(fd, buffer, filled, buffer.length - filled, filled);
      filled += bytesRead;
      if (bytesRead === 0) ended = true;
      if (ended || filled >= maxBytes || countNewlines(buffer, filled) >= count) break;
      if (filled === buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes));
        buffer.copy(grown, 0, 0, filled);
        buffer = grown;
      }
    }
    return parseLines(buffer.subarray(0, filled), count);
  } finally {
    closeSync(fd);
  }
}

function countNewlines(buffer: Buffer, end: number): number {
  let lines = 0;
  for (let at = buffer.indexOf(NEWLINE); at >= 0 && at < end; at = buffer.indexOf(NEWLINE, at + 1)) lines++;
  return lines;
}

function parseLines(bytes: Buffer, count: number): unknown[] {
  const values: unknown[] = [];
  let from = 0;
  let line = 0;
  while (from < bytes.length && values.length < count) {
    let end = bytes.indexOf(NEWLINE, from);
    if (end < 0) end = bytes.length;
    line++;
    const text = decode(bytes.subarray(from, end), line);
    from = end + 1;
    if (text.trim() === '') continue;
    try {
      values.push(JSON.parse(text));
    } catch {
      // A line cut by maxBytes or a bad line: detection works on what parses.
    }
  }
  return values;
}

/** Reads at most this much at a time; a longer line grows the buffer to fit it. */
const CHUNK_BYTES = 1 << 20;

/**
 * The engine behind jsonl-lines.ts's forEachJsonLine (same contract: 1-based line numbers,
 * BOM, CRLF, blank lines skipped, a cut-off last line a warning, any other bad line an
 * InputError). One buffer per file, sized to the file up to 1 MB and reused for every chunk,
 * read with synchronous calls: the stream it replaces allocated a fresh 1 MB buffer per chunk
 * and per file and paid a thread-pool round trip per read, which dominated over many small
 * sessions (README "Performance"). Sessions run one per thread, so blocking reads cost nothing.
 */
export async function scanJsonLines(
  file: string,
  visit: (value: unknown, line: number) => void,
  parse: (text: string, line: number) => unknown,
): Promise<{ line: number; text: string } | null> {
  const fd = openForReading(file);
  try {
    const size = fstatSync(fd).size;
    let buffer = Buffer.allocUnsafe(Math.max(1, Math.min(size + 1, CHUNK_BYTES)));
    let filled = 0;
    let position = 0;
    let line = 0;
    for (;;) {
      if (filled === buffer.length) {
        // A line longer than the buffer: grow it (doubling keeps a 50 MB line linear).
        const grown = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(grown, 0, 0, filled);
        buffer = grown;
      }
      let bytesRead: number;
      try {
        bytesRead = readSync(fd, buffer, filled, buffer.length - filled, position);
      } catch (error) {
        throw new InputError(`cannot read: ${(error as Error).message}`, file);
      }
      if (bytesRead === 0) break;
      position += bytesRead;
      const end = filled + bytesRead;
      let from = 0;
      for (let newline = buffer.indexOf(NEWLINE, filled); newline >= 0 && newline < end; newline = buffer.indexOf(NEWLINE, from)) {
        line++;
        const text = decode(buffer.subarray(from, newline), line);
        from = newline + 1;
        if (text.trim() !== '') visit(parse(text, line), line);
        if (from >= end) break;
      }
      // Keep the unfinished line at the start of the buffer for the next read.
      buffer.copy(buffer, 0, from, end);
      filled = end - from;
    }
    if (filled === 0) return null;
    line++;
    return { line, text: decode(buffer.subarray(0, filled), line) };
  } finally {
    closeSync(fd);
  }
}
