/**
 * Formats stored as ONE JSON document (Gemini CLI's chat files) rather than one JSON value a
 * line: reading such a document one element of its big array at a time, and recognising one
 * from the head of a file. What the elements mean is left to the format's reader.
 *
 * The document's structure is walked over its bytes without building it (strings and nesting
 * only); each element of the array, and each other member, is then parsed on its own. So a large
 * document costs its bytes plus one element at a time, not a decoded copy plus its whole tree,
 * and an error names the line where it is.
 */
import { isUtf8 } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { describeFsError, InputError } from '../../errors.js';
import type { Diagnostic } from '../../session/model.js';
import { CLOSE_BRACE, CLOSE_BRACKET, nestedValueEnd, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-bytes.js';
import { heldBytes, holdInput } from './input-source.js';
import { peekBytes } from './line-scan.js';

/** Bytes of a file's head read to tell a document from JSON lines. */
const HEAD_BYTES = 64 << 10;

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const COLON = 0x3a;

// The walk reads bytes, not a decoded string (json-bytes.ts): a large document then costs its
// bytes once (a decoded string of non-Latin-1 text would cost twice as much again).

function isSpace(code: number | undefined): boolean {
  return code === 0x20 || code === NEWLINE || code === 0x0d || code === 0x09;
}

function skipSpace(bytes: Buffer, at: number): number {
  while (at < bytes.length && isSpace(bytes[at])) at++;
  return at;
}

/**
 * Where the value starting at `at` ends, or -1 if the bytes end first. Only strings and nesting
 * are followed: what is inside is checked when the value is parsed.
 */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE || first === OPEN_BRACE || first === OPEN_BRACKET) return nestedValueEnd(bytes, at);
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  while (i < bytes.length) {
    const code = bytes[i];
    if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isSpace(code)) break;
    i++;
  }
  return i === at || i === bytes.length ? -1 : i;
}

/** One member of the top-level object: its key and its value's byte range (`end` -1: the bytes end inside it). */
interface Member {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

/** Thrown where the structure is broken; `at` is the byte offset. */
class StructureError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/**
 * The members of the top-level object, in order. Given `head`, the bytes are a file's head: the
 * walk stops where they end (setting `head.cut`), and the last member may be cut (`end` -1);
 * without it, a document that ends early is an error.
 */
function* topLevelMembers(bytes: Buffer, head?: { cut: boolean }): Generator<Member> {
  const ended = (at: number) => {
    if (head) return (head.cut = true);
    throw new StructureError('it ends before its closing "}" (truncated, or still being written?)', at);
  };
  let at = skipSpace(bytes, bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0);
  if (bytes[at] !== OPEN_BRACE) throw new StructureError('expected one JSON object', at);
  at = skipSpace(bytes, at + 1);
  if (bytes[at] === CLOSE_BRACE) return;
  for (;;) {
    if (at >= bytes.length && ended(at)) return;
    if (bytes[at] !== QUOTE) throw new StructureError('expected a member name in quotes', at);
    const keyEnd = stringEnd(bytes, at);
    if (keyEnd < 0 && ended(at)) return;
    const key = JSON.parse(bytes.toString('utf8', at, keyEnd)) as string;
    at = skipSpace(bytes, keyEnd);
    if (at >= bytes.length && ended(at)) return;
    if (bytes[at] !== COLON) throw new StructureError(`expected ":" after ${JSON.stringify(key)}`, at);
    const start = skipSpace(bytes, at + 1);
    if (start >= bytes.length && ended(start)) return;
    const end = valueEnd(bytes, start);
    if (end < 0) {
      if (ended(bytes.length)) yield { key, start, end: -1 };
      return;
    }
    yield { key, start, end };
    at = skipSpace(bytes, end);
    const next = bytes[at];
    if (next === COMMA) at = skipSpace(bytes, at + 1);
    else if (next === CLOSE_BRACE) break;
    else if (at >= bytes.length) {
      if (ended(at)) return;
    } else throw new StructureError(`expected "," or "}" after the value of ${JSON.stringify(key)}`, at);
  }
  const after = skipSpace(bytes, at + 1);
  if (!head && after < bytes.length) throw new StructureError('text after the end of the document', after);
}

/** The elements of the array whose bytes are `[start, end)`, as byte ranges. */
function* arrayElements(bytes: Buffer, start: number, end: number): Generator<{ start: number; end: number }> {
  let at = skipSpace(bytes, start + 1);
  if (bytes[at] === CLOSE_BRACKET) return;
  while (at < end) {
    const elementEnd = valueEnd(bytes, at);
    if (elementEnd < 0 || elementEnd > end) throw new StructureError('the array ends inside an element', at);
    yield { start: at, end: elementEnd };
    at = skipSpace(bytes, elementEnd);
    const next = bytes[at];
    if (next === CLOSE_BRACKET) return;
    if (next !== COMMA) throw new StructureError('expected "," or "]" after an element', at);
    at = skipSpace(bytes, at + 1);
  }
}

/** Line numbers of byte offsets, counting newlines once for offsets met in increasing order. */
class LineCounter {
  private at = 0;
  private line = 1;

  constructor(private readonly bytes: Buffer) {}

  lineOf(offset: number): number {
    if (offset < this.at) {
      this.at = 0;
      this.line = 1;
    }
    for (let newline = this.bytes.indexOf(NEWLINE, this.at); newline >= 0 && newline < offset; newline = this.bytes.indexOf(NEWLINE, newline + 1)) this.line++;
    this.at = offset;
    return this.line;
  }
}

/** JSON.parse of a piece of the document; its error names the line (and column) in the file. */
function parsePiece(bytes: Buffer, start: number, end: number, file: string, lines: LineCounter): unknown {
  const text = bytes.toString('utf8', start, end);
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const at = position ? Number(position[1]) : text.length;
    // JSON.parse counts characters of the piece; the piece's own first line continues a line of the file.
    const before = text.slice(0, at);
    const newlines = before.split('\n').length - 1;
    const lineStart = bytes.lastIndexOf(NEWLINE, start - 1) + 1;
    const column = newlines > 0 ? at - before.lastIndexOf('\n') : bytes.toString('utf8', lineStart, start).length + at + 1;
    const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/^Unexpected end of JSON input$/, 'unexpected end of a value');
    throw new InputError(`invalid JSON: ${what} (column ${column})`, file, lines.lineOf(start) + newlines);
  }
}

export interface DocumentElement {
  readonly value: unknown;
  /** 1-based line where the element starts. */
  readonly line: number;
}

/** A document read member by member: its other members parsed, its big array handed out element by element. */
export interface JsonDocument {
  /** The top-level members other than the array, parsed. */
  readonly members: Readonly<Record<string, unknown>>;
  /** Whether the array member is there at all. */
  readonly hasArray: boolean;
  elements(): Generator<DocumentElement>;
  readonly warnings: readonly Diagnostic[];
}

/** The document's bytes: a plain file's, or those held for a pipe or a compressed file (input-source.ts). */
async function documentBytes(file: string): Promise<{ bytes: Buffer; warnings: Diagnostic[] }> {
  let bytes: Buffer;
  const release = await holdInput(file);
  try {
    bytes = heldBytes(file) ?? (await readFile(file));
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, file);
  } finally {
    release();
  }
  if (bytes.length === 0) throw new InputError('empty file: no JSON document to read', file);
  if (bytes.includes(0)) throw new InputError('binary data (a NUL byte), not a JSON document', file);
  const warnings: Diagnostic[] = isUtf8(bytes) ? [] : [{ file, message: 'invalid UTF-8; the bad bytes were replaced with U+FFFD' }];
  return { bytes, warnings };
}

/**
 * Reads a JSON document whose top-level object holds one big array under `arrayKey`. A broken
 * or cut-off document is an InputError naming the line where it breaks.
 */
export async function readJsonDocument(file: string, arrayKey: string): Promise<JsonDocument> {
  const { bytes, warnings } = await documentBytes(file);
  const lines = new LineCounter(bytes);
  const members: Record<string, unknown> = {};
  let array: Member | null = null;
  try {
    for (const member of topLevelMembers(bytes)) {
      if (member.key === arrayKey) array = member;
      else members[member.key] = parsePiece(bytes, member.start, member.end, file, lines);
    }
  } catch (error) {
    if (!(error instanceof StructureError)) throw error;
    throw new InputError(`invalid JSON document: ${error.message}`, file, lines.lineOf(Math.min(error.at, bytes.length)));
  }
  const found = array;
  if (found && bytes[found.start] !== OPEN_BRACKET) throw new InputError(`${arrayKey}: expected an array`, file, lines.lineOf(found.start));
  return {
    members,
    hasArray: found !== null,
    warnings,
    *elements() {
      if (!found) return;
      const counter = new LineCounter(bytes);
      try {
        for (const element of arrayElements(bytes, found.start, found.end)) {
          yield { value: parsePiece(bytes, element.start, element.end, file, counter), line: counter.lineOf(element.start) };
        }
      } catch (error) {
        if (!(error instanceof StructureError)) throw error;
        throw new InputError(`invalid JSON document: ${error.message}`, file, counter.lineOf(error.at));
      }
    },
  };
}

/** What the head of a file shows of a JSON document's top-level object. */
export interface DocumentHead {
  /** Members with a string, number, boolean or null value, parsed. */
  readonly scalars: Readonly<Record<string, unknown>>;
  /** Members whose value is an array or an object (not parsed: it may be cut, or large). */
  readonly containers: Readonly<Record<string, 'array' | 'object'>>;
  /** The head holds the whole top-level object. */
  readonly whole: boolean;
}

/**
 * The head of a JSON document, from a file's first bytes, or null when the file is not one: it
 * must open with `{` on a first line that is not itself a JSON value (JSON lines have one whole
 * value on their first line; a one-line document is read as a JSON line).
 */
export function documentHead(bytes: Buffer): DocumentHead | null {
  const start = skipSpace(bytes, bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0);
  if (bytes[start] !== OPEN_BRACE) return null;
  const newline = bytes.indexOf(NEWLINE, start);
  if (newline < 0) return null;
  try {
    JSON.parse(bytes.toString('utf8', start, newline));
    return null;
  } catch {
    // The first line is no value on its own: a document spread over lines.
  }
  const scalars: Record<string, unknown> = {};
  const containers: Record<string, 'array' | 'object'> = {};
  const head = { cut: false };
  try {
    for (const member of topLevelMembers(bytes, head)) {
      const first = bytes[member.start];
      if (first === OPEN_BRACKET || first === OPEN_BRACE) containers[member.key] = first === OPEN_BRACKET ? 'array' : 'object';
      else if (member.end >= 0) scalars[member.key] = JSON.parse(bytes.toString('utf8', member.start, member.end));
    }
  } catch {
    return null;
  }
  return { scalars, containers, whole: !head.cut };
}

/**
 * A file's document head (documentHead), reading only its first bytes (of a pipe: those held for
 * it). Unreadable files, and a pipe not held (reading it would take its head from the reader), give null.
 */
export function peekDocumentHead(file: string): DocumentHead | null {
  try {
    const head = peekBytes(file, HEAD_BYTES);
    return head ? documentHead(head) : null;
  } catch {
    return null;
  }
}
