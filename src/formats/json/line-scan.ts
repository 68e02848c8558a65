/**
 * Reading the raw lines of a session fast; what the bytes mean (UTF-8, JSON, warnings) is left
 * to jsonl-lines.ts.
 *
 * A stream allocates a fresh 1 MB buffer per chunk and per file and pays a thread-pool round
 * trip per read, which dominated over many small sessions (README "Performance"). These read
 * through one buffer per file, sized to the file up to 1 MB and reused for every chunk, with
 * synchronous calls: sessions are read one per thread (workers/), so blocking reads cost nothing
 * there. Only regular files are opened here (without blocking, and refused if they turn out to
 * be anything else): a named pipe could block the thread forever, and the main thread must stay
 * free to see SIGINT (pipeline/interrupt.ts). Pipes, stdin and compressed files are read once
 * into memory by input-source.ts, and their lines are taken from there.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { describeFsError, InputError } from '../../errors.js';
import { decompressedHead, heldBytes, isCompressedName } from './input-source.js';

const NEWLINE = 0x0a;
const NUL = 0x00;
/** Reads at most this much at a time; a longer line grows the buffer to fit it. */
const CHUNK_BYTES = 1 << 20;
/** Below this a file's buffer is cut from Node's shared pool (cheap), not lent (see borrowBuffer). */
const SMALL_FILE_BYTES = 64 << 10;
/** Detection's first read; doubled until it holds the lines asked for. */
const FIRST_PEEK = 64 << 10;

/**
 * The read buffer of the last scan on this thread, lent to the next one: a fresh 1 MB buffer per
 * file is memory the kernel must map and zero again on every first touch (page faults), and its
 * release is work for the garbage collector; over the 1 GB Claude Code corpus that made the file
 * read several times a plain loop's. Null while a scan holds it (two scans at once, e.g. two
 * async line generators, each get their own).
 */
let spareBuffer: Buffer | null = null;

/** `length` bytes (at most CHUNK_BYTES) of the spare buffer, or of a new one that will become it. */
function borrowBuffer(length: number): Buffer {
  const spare = spareBuffer ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
  spareBuffer = null;
  return spare.subarray(0, length);
}

/** Gives a lent buffer back once its scan is over (a buffer grown for a long line is a copy, and dropped). */
function returnBuffer(lent: Buffer): void {
  spareBuffer ??= Buffer.from(lent.buffer, lent.byteOffset, CHUNK_BYTES);
}

/** A line's raw bytes, and whether a newline ended it (only the last line of a file may lack one). */
export interface RawLine {
  readonly bytes: Buffer;
  readonly line: number;
  readonly terminated: boolean;
}

/** A line's text without a byte-order mark (first line) or a CR (CRLF files). */
export function lineText(bytes: Buffer, line: number): string {
  let text = bytes.toString('utf8');
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text;
}

/**
 * A regular file opened for reading (see the header: nothing else is opened here), with the
 * `fstat` that proved it one: its size and mtime serve the caller too, one call a file.
 */
function openForReading(file: string): { readonly fd: number; readonly size: number; readonly mtimeMs: number } {
  let fd: number;
  try {
    // Non-blocking: opening a named pipe would otherwise wait for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, file);
  }
  const info = fstatSync(fd);
  if (!info.isFile()) {
    closeSync(fd);
    throw new InputError('not a regular file (a pipe or a device): it is read whole, once, when its session is read', file);
  }
  return { fd, size: info.size, mtimeMs: info.mtimeMs };
}

function readAt(fd: number, file: string, buffer: Buffer, offset: number, position: number): number {
  try {
    return readSync(fd, buffer, offset, buffer.length - offset, position);
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, file);
  }
}

/** The raw lines of bytes held in memory (input-source.ts), 1-based. */
function* heldLines(bytes: Buffer): Generator<RawLine> {
  let line = 0;
  let from = 0;
  for (let newline = bytes.indexOf(NEWLINE); newline >= 0; newline = bytes.indexOf(NEWLINE, from)) {
    yield { bytes: bytes.subarray(from, newline), line: ++line, terminated: true };
    from = newline + 1;
  }
  if (from < bytes.length) yield { bytes: bytes.subarray(from), line: ++line, terminated: false };
}

/**
 * The raw lines of a regular file, or of an input held in memory, 1-based. A line's bytes are a
 * view of the reused buffer: valid only until the next line is asked for (callers decode before
 * that). A line that holds a NUL byte is handed over as soon as the NUL is seen, however long it
 * would run: binary data is an error, and a file of zeros must not fill the memory first.
 */
export function* scanLines(file: string): Generator<RawLine> {
  const held = heldBytes(file);
  if (held) {
    yield* heldLines(held);
    return;
  }
  const { fd, size } = openForReading(file);
  let lent: Buffer | null = null;
  try {
    const length = Math.max(1, Math.min(size + 1, CHUNK_BYTES));
    // Large enough reads lend the thread's spare buffer; a small file's own buffer comes from Node's pool.
    if (length >= SMALL_FILE_BYTES) lent = borrowBuffer(length);
    let buffer = lent ?? Buffer.allocUnsafe(length);
    let filled = 0;
    let position = 0;
    let line = 0;
    for (;;) {
      if (filled === buffer.length) {
        if (buffer.includes(NUL)) {
          yield { bytes: buffer, line: ++line, terminated: true };
          return;
        }
        // A line longer than the buffer: grow it (doubling keeps a 50 MB line linear).
        const grown = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(grown, 0, 0, filled);
        buffer = grown;
      }
      const asked = buffer.length - filled;
      const bytesRead = readAt(fd, file, buffer, filled, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      // A short read that reaches the size the file had when opened is its end: the read that
      // would only find nothing more is saved (one a small file). A file that grew since is read
      // on (its read was not short), as is one that says it is empty (some special files do).
      const atEnd = bytesRead < asked && size > 0 && position >= size;
      const end = filled + bytesRead;
      let from = 0;
      for (let newline = buffer.indexOf(NEWLINE, filled); newline >= 0 && newline < end; newline = buffer.indexOf(NEWLINE, from)) {
        yield { bytes: buffer.subarray(from, newline), line: ++line, terminated: true };
        from = newline + 1;
        if (from >= end) break;
      }
      // Keep the unfinished line at the start of the buffer for the next read.
      buffer.copy(buffer, 0, from, end);
      filled = end - from;
      if (atEnd) break;
    }
    if (filled > 0) yield { bytes: buffer.subarray(0, filled), line: ++line, terminated: false };
  } finally {
    closeSync(fd);
    // The lines handed out are dead once the scan ends or its caller stops asking.
    if (lent) returnBuffer(lent);
  }
}

/** Why a chunked read hands its visitor the bytes it holds: more follow, the file ended, or a full buffer holds a NUL. */
export type ChunkEnd = 'more' | 'end' | 'binary';

/** Where readChunks reads to: a buffer its owner may move when asked to grow it (WebAssembly memory). */
export interface ChunkRoom {
  readonly bytes: Buffer;
  /** Makes `bytes` at least `length` long, its first `kept` bytes kept. */
  grow(length: number, kept: number): void;
}

/**
 * A regular file read into `room` chunk after chunk, as scanLines reads it (the same reads, the
 * same rules for its end and for binary data), for a caller that finds the lines itself (the
 * WebAssembly scanner): `visit(filled, end)` gets the bytes [0, filled) and returns how many it
 * used (whole lines; at the end, all); the rest moves to the front for the next read. A buffer
 * filled by one line grows; one that fills with no newline and holds a NUL is handed over as
 * `binary`, and the read ends there (scanLines hands it over as a line).
 */
export function readChunks(file: string, room: ChunkRoom, visit: (filled: number, end: ChunkEnd) => number): void {
  const { fd, size } = openForReading(file);
  try {
    if (room.bytes.length < Math.min(size + 1, CHUNK_BYTES)) room.grow(Math.min(size + 1, CHUNK_BYTES), 0);
    let filled = 0;
    let position = 0;
    for (;;) {
      if (filled === room.bytes.length) {
        if (room.bytes.includes(NUL)) {
          visit(filled, 'binary');
          return;
        }
        room.grow(room.bytes.length * 2, filled);
      }
      const buffer = room.bytes;
      const asked = buffer.length - filled;
      const bytesRead = readAt(fd, file, buffer, filled, position);
      position += bytesRead;
      filled += bytesRead;
      // As scanLines: a short read that reaches the size the file had when opened is its end.
      const atEnd = bytesRead === 0 || (bytesRead < asked && size > 0 && position >= size);
      const used = visit(filled, atEnd ? 'end' : 'more');
      if (atEnd) return;
      room.bytes.copy(room.bytes, 0, used, filled);
      filled -= used;
    }
  } finally {
    closeSync(fd);
  }
}

/** The first `maxBytes` of a regular file (fewer if it is shorter). */
function peekRegularFile(file: string, maxBytes: number): Buffer {
  const { fd, size } = openForReading(file);
  try {
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes, size > 0 ? size : maxBytes));
    let filled = 0;
    while (filled < buffer.length) {
      const bytesRead = readAt(fd, file, buffer, filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

/** Compressed bytes read for a compressed file's head (JSON lines come out about ten times as long). */
const COMPRESSED_PEEK = 16 << 10;

/**
 * The first decompressed bytes of a compressed file, at most `maxBytes`, and whether they are
 * all of it; null when they cannot be had without reading it all (input-source.ts).
 */
function peekCompressedFile(file: string, maxBytes: number): { bytes: Buffer; atEnd: boolean } | null {
  const compressed = peekRegularFile(file, COMPRESSED_PEEK);
  const whole = compressed.length < COMPRESSED_PEEK;
  // Less of the input when what comes out of it would be more than maxBytes.
  for (let length = compressed.length; length >= 1 << 10 || length === compressed.length; length >>= 1) {
    const bytes = decompressedHead(compressed.subarray(0, length), maxBytes);
    if (bytes) return { bytes, atEnd: whole && length === compressed.length };
    if (length === 0) break;
  }
  return null;
}

/**
 * The first `maxBytes` of an input (fewer if it is shorter): of the bytes held for it, of a
 * regular file, or decompressed from a compressed one. Null for a compressed file whose head
 * cannot be had without reading it all. A pipe that is not held is refused (InputError).
 */
export function peekBytes(file: string, maxBytes: number): Buffer | null {
  const held = heldBytes(file);
  if (held) return held.subarray(0, maxBytes);
  if (isCompressedName(file)) return peekCompressedFile(file, maxBytes)?.bytes ?? null;
  return peekRegularFile(file, maxBytes);
}

function fstatOf(file: string): { size: number; mtimeMs: number } {
  const { fd, size, mtimeMs } = openForReading(file);
  closeSync(fd);
  return { size, mtimeMs };
}

function countNewlines(buffer: Buffer, end: number): number {
  let lines = 0;
  for (let at = buffer.indexOf(NEWLINE); at >= 0 && at < end; at = buffer.indexOf(NEWLINE, at + 1)) lines++;
  return lines;
}

/** What a sniff saw of a file's head, and which file it was (size and mtime: a later read can tell it changed). */
export interface Peek {
  readonly values: unknown[];
  /**
   * Every non-blank line among the first `count` (or up to the end of the file) parsed, and none
   * was cut by `maxBytes`: the values are exactly the first lines a full read would parse.
   */
  readonly whole: boolean;
  /** The peek stopped at values its `settled` accepted (PeekSettled): whole, with fewer values than asked for. */
  readonly settled: boolean;
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Asked after each value a peek parses, while every line so far parsed: true when the values
 * already settle what the caller wants to know, so the peek parses no further line (and is then
 * whole: its values are exactly the first lines a full read parses, though fewer than asked for).
 */
export type PeekSettled = (values: readonly unknown[]) => boolean;

/**
 * The first `count` JSON values among the first `maxBytes` of a file, for sniffing what a file
 * is. Reads 64 KB, then doubles, until it has `count` complete lines, the file ends, or
 * `maxBytes` is reached (zero-filling the whole window for every file was most of `compact`'s
 * time over 10,000 small sessions). Lines that do not parse (or are cut by `maxBytes`) are
 * skipped, and then the peek is not whole.
 */
export function peekJsonValues(file: string, count: number, maxBytes: number, settled?: PeekSettled): Peek {
  const held = heldBytes(file);
  if (held) return { ...parseLines(held.subarray(0, maxBytes), count, held.length <= maxBytes, settled), size: held.length, mtimeMs: 0 };
  if (isCompressedName(file)) {
    const { size, mtimeMs } = fstatOf(file);
    const head = peekCompressedFile(file, maxBytes);
    if (!head) throw new InputError('compressed, and its head cannot be read on its own', file);
    return { ...parseLines(head.bytes, count, head.atEnd, settled), size, mtimeMs };
  }
  const { fd, size, mtimeMs } = openForReading(file);
  // The thread's read buffer when the peek fits in it (a walk sniffs file after file, and a fresh
  // buffer each was garbage and page faults on the main thread while the workers wait): parsing
  // copies what it keeps, so nothing of it outlives the peek.
  const lent = maxBytes <= CHUNK_BYTES ? borrowBuffer(CHUNK_BYTES) : null;
  const room = (length: number) => (lent ? lent.subarray(0, length) : Buffer.allocUnsafe(length));
  try {
    // A small file gets a buffer of its size, not 64 KB (10,000 of them churned 640 MB).
    let buffer = room(Math.min(FIRST_PEEK, maxBytes, size > 0 ? size + 1 : FIRST_PEEK));
    let filled = 0;
    let atEnd = false;
    for (;;) {
      const bytesRead = readAt(fd, file, buffer, filled, filled);
      filled += bytesRead;
      // The size saves a read that would only find the end (one per small file); a file that
      // says it is empty (some special files do) is read until a read finds nothing.
      atEnd = bytesRead === 0 || (size > 0 && filled >= size);
      if (atEnd || filled >= maxBytes || countNewlines(buffer, filled) >= count) break;
      if (filled === buffer.length) {
        const grown = room(Math.min(buffer.length * 2, maxBytes));
        // A lent buffer grows in place: its first bytes are already there.
        if (!lent) buffer.copy(grown, 0, 0, filled);
        buffer = grown;
      }
    }
    return { ...parseLines(buffer.subarray(0, filled), count, atEnd, settled), size, mtimeMs };
  } finally {
    closeSync(fd);
    if (lent) returnBuffer(lent);
  }
}

function parseLines(bytes: Buffer, count: number, atEnd: boolean, settled?: PeekSettled): { values: unknown[]; whole: boolean; settled: boolean } {
  const values: unknown[] = [];
  let whole = true;
  let line = 0;
  for (let from = 0; from < bytes.length && values.length < count; ) {
    let end = bytes.indexOf(NEWLINE, from);
    // A line without its newline is whole only at the end of the file (a full read parses it too).
    if (end < 0) {
      end = bytes.length;
      if (!atEnd) whole = false;
    }
    const text = lineText(bytes.subarray(from, end), ++line);
    from = end + 1;
    if (text.trim() === '') continue;
    try {
      values.push(JSON.parse(text));
    } catch {
      // A bad line, or one cut by maxBytes: sniffing works on what parses.
      whole = false;
      continue;
    }
    // Parsing the rest of a small session's lines was most of what sniffing it cost.
    if (whole && values.length < count && settled?.(values)) return { values, whole, settled: true };
  }
  // Fewer values than asked for are all the file has only when its end was read.
  if (values.length < count && !atEnd) whole = false;
  return { values, whole, settled: false };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Where the JSON of a session nests deepest: the line and the depth (brackets inside strings do
 * not count; a document's depth carries from line to line). Only asked after a value proved too
 * deep to process, so this pass costs nothing on the way of a good session.
 */
export function deepestNesting(file: string): { line: number; depth: number } {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let deepest = { line: 0, depth: 0 };
  for (const raw of scanLines(file)) {
    const bytes = raw.bytes;
    for (let at = 0; at < bytes.length; at++) {
      const byte = bytes[at]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (byte === 0x5b || byte === 0x7b) {
        if (++depth > deepest.depth) deepest = { line: raw.line, depth };
      } else if (byte === 0x5d || byte === 0x7d) depth--;
    }
  }
  return deepest;
}
