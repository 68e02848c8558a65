/**
 * Where a session's bytes come from. A plain regular file is read where it lies, as often as
 * asked (line-scan.ts). Any other input is read once, in full, into memory, and held there while
 * a session read holds it (holdInput): stdin (`-`), a named pipe or a process substitution
 * (`<(zcat f)`), a device, and a compressed file (`*.gz`, `*.zst`, decompressed as it is read;
 * from a pipe, gzip and zstd data are told by their first bytes). Detection and every read of
 * that session (a lean read and its full one, a reader's second pass) then take the bytes from
 * memory, so a pipe is never opened twice and never read in part.
 *
 * Reading stops at once on what cannot be a session: a NUL byte (binary data, /dev/zero), or a
 * first line that is no JSON object or array (`yes |`); and at MAX_HELD_BYTES. Pipes are read
 * without blocking a thread (libuv's pool: a blocked read there would keep the process from
 * exiting, even on a second Ctrl-C). What the bytes mean is left to jsonl-lines.ts and
 * json-document.ts.
 */
import { close, constants as fs, createReadStream, fstat, open, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { lazyNet, lazyStream, lazyTty, lazyWorkerThreads, lazyZlib } from '../../lazy-builtins.js';
import { describeFsError, InputError } from '../../errors.js';

/** The input name that means stdin. */
export const STDIN = '-';

export function isStdin(path: string): boolean {
  return path === STDIN;
}

/** Names of files that are decompressed as they are read (a walk looks for them too: commands/inputs.ts). */
export const COMPRESSED_SUFFIXES = ['.gz', '.zst'] as const;

export function isCompressedName(path: string): boolean {
  return COMPRESSED_SUFFIXES.some((suffix) => path.toLowerCase().endsWith(suffix));
}

/** A regular file that is not compressed: read in place, as often as asked. */
export function isPlainFile(path: string): boolean {
  if (isStdin(path) || isCompressedName(path)) return false;
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? true;
  } catch {
    // A symlink loop, a denied directory: the read of a plain file says "cannot read: …".
    return true;
  }
}

/**
 * What a command that may read a session twice needs to know of its input, from one `stat`:
 * `onlyOnce`, an input that cannot be read a second time (stdin, a pipe, a device; a compressed
 * regular file can be read again), and `plain`, a plain file's size and mtime (null for anything
 * else, or when the file cannot be stat'ed: the read reports that). A plain file's shape also
 * stands for the hold's own `stat` (withHeldInput) and for a sniffed format's check.
 */
export function inputShape(path: string): { readonly onlyOnce: boolean; readonly plain: { readonly size: number; readonly mtimeMs: number } | null } {
  if (isStdin(path)) return { onlyOnce: true, plain: null };
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return { onlyOnce: false, plain: null };
    if (!info.isFile()) return { onlyOnce: true, plain: null };
    return { onlyOnce: false, plain: isCompressedName(path) ? null : { size: info.size, mtimeMs: info.mtimeMs } };
  } catch {
    return { onlyOnce: false, plain: null };
  }
}

/** A piped or compressed session larger than this is refused rather than held in memory. */
export const MAX_HELD_BYTES = 1 << 30;
/** Bytes read past a first line that cannot start a session, so that the line is whole in the error. */
const FIRST_LINE_BYTES = 64 << 10;

const NEWLINE = 0x0a;
const NUL = 0x00;
const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

type Compression = 'gzip' | 'zstd';

function startsWith(bytes: Buffer, magic: readonly number[]): boolean {
  return magic.every((byte, index) => bytes[index] === byte);
}

function compressionOf(head: Buffer): Compression | null {
  if (startsWith(head, GZIP_MAGIC)) return 'gzip';
  if (startsWith(head, ZSTD_MAGIC)) return 'zstd';
  return null;
}

/** zlib's zstd decompressor: Node 22.15 and 23.8 have it, Node 20 does not. */
function zstdDecompressor(path: string): NodeJS.ReadWriteStream {
  // What we read of zlib: its zstd decompressor, which @types/node for Node 20 does not declare.
  const zlib: { readonly createGunzip: unknown; readonly createZstdDecompress?: unknown } = lazyZlib();
  const create = zlib.createZstdDecompress;
  if (typeof create !== 'function') {
    throw new InputError(`zstd-compressed, which this Node (${process.version}) cannot decompress (Node 22.15 or later can); decompress it first (zstd -d)`, path);
  }
  return (create as () => NodeJS.ReadWriteStream)();
}

const openFile = promisify(open);
const fstatFd = promisify(fstat);
const closeFd = promisify(close);

/**
 * The raw bytes of a named input that is not a plain file. Opened without blocking: a named pipe
 * with no writer yet opens at once, and is then read through the event loop (a net.Socket), so
 * no thread waits on it.
 */
async function rawStream(path: string): Promise<Readable> {
  if (isStdin(path)) {
    // Worker threads have a stdin of their own: sessions read from `-` stay on the main thread (sessions.ts).
    if (!lazyWorkerThreads().isMainThread) throw new Error('internal: stdin is read on the main thread only');
    if (process.stdin.isTTY) throw new InputError('stdin is a terminal; pipe a session in (cat s.jsonl | compactor inspect -)', path);
    return process.stdin;
  }
  let fd: number;
  try {
    fd = await openFile(path, fs.O_RDONLY | fs.O_NONBLOCK);
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, path);
  }
  const info = await fstatFd(fd);
  if (info.isDirectory()) {
    await closeFd(fd);
    throw new InputError(`cannot read: ${describeFsError({ code: 'EISDIR' })}`, path);
  }
  if (lazyTty().isatty(fd)) {
    await closeFd(fd);
    throw new InputError('a terminal, not a session file', path);
  }
  if (info.isFIFO() || info.isSocket()) return new (lazyNet().Socket)({ fd, readable: true, writable: false });
  return createReadStream('', { fd, highWaterMark: 1 << 20 });
}

/** The input's bytes, decompressed when its first bytes say gzip or zstd. */
async function* decodedChunks(path: string, raw: Readable): AsyncGenerator<Buffer> {
  const iterator = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  try {
    let head: Buffer = Buffer.alloc(0);
    while (head.length < ZSTD_MAGIC.length) {
      const next = await iterator.next();
      if (next.done) break;
      head = head.length === 0 ? next.value : Buffer.concat([head, next.value]);
    }
    async function* all(): AsyncGenerator<Buffer> {
      if (head.length > 0) yield head;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    }
    const compression = compressionOf(head);
    if (!compression) {
      yield* all();
      return;
    }
    const decompressor = compression === 'gzip' ? lazyZlib().createGunzip() : zstdDecompressor(path);
    try {
      yield* lazyStream().pipeline(all(), decompressor, () => {}) as AsyncIterable<Buffer>;
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw new InputError(`cannot decompress (${compression}): ${(error as Error).message}`, path);
    }
  } finally {
    await iterator.return?.();
    raw.destroy();
  }
}

/** Newlines in `chunks` and in `last` before `end`: the line an offset is on, less one. */
function newlinesBefore(chunks: readonly Buffer[], last: Buffer, end: number): number {
  let count = 0;
  const countIn = (bytes: Buffer, stop: number) => {
    for (let at = bytes.indexOf(NEWLINE); at >= 0 && at < stop; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  };
  for (const chunk of chunks) countIn(chunk, chunk.length);
  countIn(last, end);
  return count;
}

/** JSON lines and JSON documents start with `{` (or `[`), after blanks and a byte-order mark. */
function cannotStartSession(bytes: Buffer): boolean | null {
  let at = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x09 || bytes[at] === 0x0d || bytes[at] === NEWLINE)) at++;
  if (at >= bytes.length) return null;
  return bytes[at] !== 0x7b && bytes[at] !== 0x5b;
}

/** Reads an input in full, stopping early at what cannot be a session (see the header). */
async function readWhole(path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let notASession: boolean | null = null;
  for await (const chunk of decodedChunks(path, await rawStream(path))) {
    const nul = chunk.indexOf(NUL);
    if (nul >= 0) throw new InputError('binary data (a NUL byte), not a JSONL session', path, newlinesBefore(chunks, chunk, nul) + 1);
    size += chunk.length;
    if (size > MAX_HELD_BYTES) {
      throw new InputError(`more than ${MAX_HELD_BYTES >> 20} MB from a pipe or a compressed file; save (or decompress) it to a plain file first`, path);
    }
    chunks.push(chunk);
    notASession ??= cannotStartSession(chunks.length === 1 ? chunk : Buffer.concat(chunks));
    // Keep the first line whole for its error, and read no more (`yes | compactor estimate -`).
    if (notASession && (chunk.includes(NEWLINE) || size >= FIRST_LINE_BYTES)) break;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

interface HeldInput {
  readonly bytes: Promise<Buffer>;
  value?: Buffer;
  holders: number;
}

const held = new Map<string, HeldInput>();

/**
 * Plain files being held, with how many holds: a hold nested in another (compact's read, the
 * session read, the line reader) knows the file is plain without a `stat` of its own.
 */
const plainHolds = new Map<string, number>();

/** A hold of a plain file: nothing is read, only counted until released. */
function holdPlain(path: string): () => void {
  plainHolds.set(path, (plainHolds.get(path) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (plainHolds.get(path) ?? 1) - 1;
    if (left > 0) plainHolds.set(path, left);
    else plainHolds.delete(path);
  };
}

/**
 * Holds an input that is not a plain file in memory until the returned function is called
 * (nested holds share one read: the input is released when the last one lets go). For a plain
 * file, reads nothing. A failed read throws its InputError to every holder. `plain`: the
 * caller's own `stat` just found a plain file (inputShape), so the hold takes it as one without a
 * `stat` of its own.
 */
export async function holdInput(path: string, plain = false): Promise<() => void> {
  if (plain || plainHolds.has(path) || (!held.has(path) && isPlainFile(path))) return holdPlain(path);
  let entry = held.get(path);
  if (!entry) {
    const bytes = readWhole(path);
    const created: HeldInput = { bytes, holders: 0 };
    bytes.then(
      (value) => (created.value = value),
      () => {},
    );
    entry = created;
    held.set(path, entry);
  }
  entry.holders++;
  const holding = entry;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (--holding.holders === 0 && held.get(path) === holding) held.delete(path);
  };
  try {
    holding.value = await holding.bytes;
  } catch (error) {
    release();
    throw error;
  }
  return release;
}

/** `work` with the input held (holdInput, `plain` as there) for all of it. */
export async function withHeldInput<T>(path: string, work: () => Promise<T>, plain = false): Promise<T> {
  const release = await holdInput(path, plain);
  try {
    return await work();
  } finally {
    release();
  }
}

/** The bytes of an input being held, or undefined (then it is a plain file, or not held). */
export function heldBytes(path: string): Buffer | undefined {
  return held.get(path)?.value;
}

/**
 * The first bytes of a compressed regular file, decompressed without reading it all: what a walk
 * sniffs (synchronously). Null when they cannot be had so (zstd on this Node, or more than
 * `maxBytes` from the first compressed block): the read will say what the file holds.
 */
export function decompressedHead(compressed: Buffer, maxBytes: number): Buffer | null {
  if (compressionOf(compressed) !== 'gzip') return null;
  try {
    // A cut-off stream decompresses as far as it goes with a sync flush.
    const zlib = lazyZlib();
    return zlib.gunzipSync(compressed, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes });
  } catch {
    return null;
  }
}
