/**
 * Streams a JSONL file line by line with 1-based line numbers. Handles a byte-order mark, CRLF,
 * blank lines, and a truncated last line (a session still being written: a warning, not an
 * error). Any other line that is not JSON is an InputError naming file and line.
 */
import { InputError } from '../errors.js';
import type { Diagnostic } from '../session/model.js';
import { peekJsonValues, scanJsonLines } from './line-scan.js';

export type LineVisitor = (value: unknown, line: number) => void;

function parseLine(raw: string, file: string, line: number): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new InputError(`invalid JSON: ${(error as Error).message}`, file, line);
  }
}

export function decode(bytes: Buffer, line: number): string {
  let text = bytes.toString('utf8');
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text;
}

/**
 * Calls `visit` for every JSON line of the file; returns warnings for skipped lines. The reading
 * itself is line-scan.ts's (one reused buffer per file, see there).
 */
export async function forEachJsonLine(file: string, visit: LineVisitor): Promise<Diagnostic[]> {
  const warnings: Diagnostic[] = [];
  const last = await scanJsonLines(file, visit, (text, line) => parseLine(text, file, line));
  if (last && last.text.trim() !== '') {
    let value: unknown;
    try {
      value = JSON.parse(last.text);
    } catch {
      warnings.push({ file, line: last.line, message: 'last line is incomplete (file still being written?); skipped' });
      return warnings;
    }
    visit(value, last.line);
  }
  return warnings;
}

/** The first `count` JSON values of a file, for format detection (line-scan.ts reads them). */
export function peekJsonLines(file: string, count: number, maxBytes = 4 << 20): Promise<unknown[]> {
  return peekJsonValues(file, count, maxBytes);
}
