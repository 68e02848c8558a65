/**
 * Reads a JSONL session line by line with 1-based line numbers. Handles a byte-order mark, CRLF,
 * blank lines, invalid UTF-8 (replaced, with a warning) and a truncated last line (a session
 * still being written: a warning, not an error). A line that is not JSON, that holds binary data,
 * that is not text, or that is many lines ended by CRs only is an InputError naming file and
 * line. What a line means is left to the format readers; reading the bytes is line-scan.ts's
 * (regular files) and input-source.ts's (stdin, pipes, compressed files: read once, held).
 */
import { isUtf8 } from 'node:buffer';
import { InputError } from '../../errors.js';
import type { Diagnostic } from '../../session/model.js';
import { holdInput } from './input-source.js';
import type { LineCutter } from './json-cut.js';
import type { Peek, PeekSettled, RawLine } from './line-scan.js';
import { lineText, peekJsonValues, scanLines } from './line-scan.js';

const NUL = 0x00;
const CR = '\r';
/** Error messages quote at most this much of a line, so a 50 MB line still gives one short line. */
const MAX_MESSAGE_CHARS = 160;

export type LineVisitor = (value: unknown, line: number) => void;

export interface JsonLine {
  readonly line: number;
  readonly value: unknown;
}

/** V8's "in JSON at position N" as a column of the line, and never more than a short line. */
function jsonErrorMessage(error: unknown): string {
  const message = ((error as Error).message ?? String(error)).replace(/ in JSON at position (\d+)/, (_, position: string) => ` at column ${Number(position) + 1}`);
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
}

/** Bytes whose only invalid UTF-8 is a character cut off at their end (at most its first 3 bytes). */
function endsInCutCharacter(bytes: Uint8Array): boolean {
  for (let cut = 1; cut <= 3 && cut < bytes.length; cut++) if (isUtf8(bytes.subarray(0, bytes.length - cut))) return true;
  return false;
}

/**
 * One raw line parsed: its value, or null for a blank line or a cut-off last line (warned). A bad
 * line throws; invalid UTF-8 is replaced, with a warning. `cutter` drops values the reader never
 * reads before parsing, and stands in for lines it reads nothing of (json-cut.ts); a line whose
 * cut text does not parse is parsed whole, for its own error. The WebAssembly scanner's readers
 * hand it the lines they leave to JavaScript (formats/claude-code-scanned.ts).
 */
export function parseRawLine(raw: RawLine, file: string, warn: (diagnostic: Diagnostic) => void, cutter?: LineCutter): JsonLine | null {
  const { bytes, line } = raw;
  if (bytes.includes(NUL)) throw new InputError('binary data (a NUL byte), not a JSONL session', file, line);
  const utf8 = isUtf8(bytes);
  if (!utf8) warn({ file, line, message: 'invalid UTF-8; the bad bytes were replaced with U+FFFD' });
  // A line the reader reads nothing of but its type, proven from its bytes: never decoded.
  const skipped = cutter?.skip(bytes, utf8);
  if (skipped) return { line, value: skipped };
  const cut = cutter?.cut(bytes, utf8);
  if (cut) {
    let value: unknown;
    try {
      value = JSON.parse(typeof cut === 'string' ? cut : cut.text);
    } catch {
      // Parsed whole below, so the message and column are the line's own.
    }
    if (value !== undefined) {
      if (typeof cut !== 'string') cut.restore(value);
      return { line, value };
    }
  }
  const text = lineText(bytes, line);
  if (text.trim() === '') return null;
  try {
    return { line, value: JSON.parse(text) };
  } catch (error) {
    // What the line is, when it is no JSON line at all: said before any "incomplete" guess (a
    // line being written starts as one, and may end in half a UTF-8 character).
    // A cut-off line may end in half a character, not hold bad bytes before (random bytes that start with `{`).
    if (!utf8 && (!/^\s*[[{]/.test(text) || (!raw.terminated && !endsInCutCharacter(bytes)))) throw new InputError('not text (invalid UTF-8), not a JSONL session', file, line);
    // JSON never holds a raw CR but as a blank, and a CRLF line's CR is gone: lines ended by CR only.
    if (text.includes(CR)) throw new InputError('lines end in CR only (classic Mac style); compactor reads LF or CRLF line ends', file, line);
    // Only the last line can lack its newline, so skipping it ends the file.
    if (!raw.terminated) {
      warn({ file, line, message: 'last line is incomplete (file still being written?); skipped' });
      return null;
    }
    throw new InputError(`invalid JSON: ${jsonErrorMessage(error)}`, file, line);
  }
}

function* scannedJsonLines(file: string, warn: (diagnostic: Diagnostic) => void, cutter?: LineCutter): Generator<JsonLine> {
  for (const raw of scanLines(file)) {
    const parsed = parseRawLine(raw, file, warn, cutter);
    if (parsed) yield parsed;
  }
}

/**
 * The parsed lines of a file. A bad line throws; recoverable oddities (invalid UTF-8, a cut-off
 * last line) go to `warn`. An input that is not a plain file is held in memory meanwhile
 * (input-source.ts): a caller that reads it again holds it around both reads.
 */
export async function* readJsonLines(file: string, warn: (diagnostic: Diagnostic) => void, cutter?: LineCutter): AsyncGenerator<JsonLine> {
  const release = await holdInput(file);
  try {
    yield* scannedJsonLines(file, warn, cutter);
  } finally {
    release();
  }
}

/**
 * Calls `visit` for every JSON line of the file; returns warnings for what was skipped or
 * replaced. A file with no JSON line at all is an InputError ("empty file"). Lines are read
 * without a promise per line (the hot loop of a bulk run). With a
 * `cutter`, the values of the top-level keys it names are left out of every value (json-cut.ts).
 */
export async function forEachJsonLine(file: string, visit: LineVisitor, cutter?: LineCutter): Promise<Diagnostic[]> {
  const warnings: Diagnostic[] = [];
  const warn = (warning: Diagnostic) => warnings.push(warning);
  let visited = 0;
  const onLine = ({ value, line }: JsonLine) => {
    visited++;
    visit(value, line);
  };
  const release = await holdInput(file);
  try {
    for (const line of scannedJsonLines(file, warn, cutter)) onLine(line);
  } finally {
    release();
  }
  if (visited === 0 && warnings.length === 0) throw new InputError('empty file: no JSON lines to read', file);
  return warnings;
}

/**
 * The first `count` JSON values among the first `maxBytes` of a file, for sniffing what a file
 * is without reading all of it (line-scan.ts reads only what it needs).
 */
export function peekJsonLines(file: string, count: number, maxBytes = 4 << 20, settled?: PeekSettled): Peek {
  return peekJsonValues(file, count, maxBytes, settled);
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
