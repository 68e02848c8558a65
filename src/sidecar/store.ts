/**
 * The only code that writes: sidecar paths, loading with validation, atomic saves and removing
 * the temp files a killed run left behind. A save is staged (a new temp file beside the sidecar,
 * written whole) and then committed (fsync, rename over the sidecar, fsync of the directory), so
 * readers see the old sidecar or the new one, never a torn file, and a committed sidecar
 * survives a crash. Staging many and committing them together lets their fsyncs run at once,
 * which the file system's journal commits as one (README "Performance"). A session file is never
 * opened for writing, and a sidecar path that is a symbolic link is neither read nor written
 * through.
 *
 * Reads, checks and writes use synchronous calls (small files; in a worker thread each
 * asynchronous call is a round trip through libuv's shared thread pool). A batch stages its
 * sidecars together once all are compacted (stageSidecars): a new name can wait for the file
 * system's journal while it commits other files, and names made together wait for it about
 * once; their creation runs in the thread pool, so that the worker compacts meanwhile. The
 * fsyncs are asynchronous, so that they overlap.
 */
import { closeSync, fchmodSync, fstatSync, fsync, lstatSync, open, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { lazyWorkerThreads } from '../lazy-builtins.js';
import type { CompactionState } from '../compaction/state.js';
import { SIDECAR_FORMAT_VERSION } from '../compaction/state.js';
import { describeFsError, InputError } from '../errors.js';
import { atExit } from './at-exit.js';
import { isProcessAlive } from './process-alive.js';

export const SIDECAR_SUFFIX = '_compaction.json';

/**
 * `<dir>/<session name without .jsonl>_compaction.json`, always beside the session. A compressed
 * session keeps its compression's suffix (`s.jsonl.gz` → `s.gz_compaction.json`): it has a sidecar
 * of its own, apart from an uncompressed copy's (a sidecar names the one file it belongs to).
 */
export function sidecarPath(sessionPath: string): string {
  const name = basename(sessionPath).replace(/\.jsonl(\.gz|\.zst)?$/i, '$1');
  return join(dirname(sessionPath), `${name}${SIDECAR_SUFFIX}`);
}

export function isSidecarPath(path: string): boolean {
  return path.endsWith(SIDECAR_SUFFIX);
}

/** Refuses a sidecar path that is a symlink or not a regular file; false when nothing is there. */
function checkSidecarPath(path: string, doing: 'read' | 'write'): boolean {
  let info;
  try {
    // No sidecar is the common case: no error built for it (an exception per session is costly).
    info = lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    throw new InputError(`cannot ${doing} sidecar: ${describeFsError(error)}`, path);
  }
  if (info === undefined) return false;
  if (info.isSymbolicLink()) {
    throw new InputError(`sidecar is a symbolic link; refusing to ${doing} through it (replace it with a regular file or remove it)`, path);
  }
  if (!info.isFile()) throw new InputError(`sidecar path is not a regular file; refusing to ${doing} it`, path);
  return true;
}

/** The line of a JSON.parse error: V8 says "at position N", or "end of JSON input" for a cut-off file. */
function jsonErrorLine(text: string, error: unknown): number | undefined {
  const message = (error as Error).message ?? '';
  const match = /at position (\d+)/.exec(message);
  if (!match && !message.includes('end of JSON input')) return undefined;
  let line = 1;
  const end = Math.min(match ? Number(match[1]) : text.trimEnd().length, text.length);
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 0x0a) line++;
  return line;
}

/** The sidecar for a session, or null when there is none. Invalid ones are an InputError. */
export async function loadSidecar(sessionPath: string): Promise<CompactionState | null> {
  const path = sidecarPath(sessionPath);
  if (!checkSidecarPath(path, 'read')) return null;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InputError(`cannot read sidecar: ${describeFsError(error)}`, path);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // The parser's own message may quote the file; the position is enough.
    throw new InputError('corrupt sidecar (not valid JSON); delete it to compact from scratch', path, jsonErrorLine(text, error));
  }
  const version = (value as { format_version?: unknown } | null)?.format_version;
  if (typeof version === 'number' && version > SIDECAR_FORMAT_VERSION) {
    throw new InputError(`sidecar format version ${version} is newer than this compactor understands (${SIDECAR_FORMAT_VERSION})`, path);
  }
  // The schema (and zod) load with the first sidecar read: most runs meet none.
  const { sidecarSchema } = await import('./schema.js');
  const parsed = sidecarSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(`invalid sidecar: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`, path);
  }
  if (parsed.data.session !== basename(sessionPath)) {
    throw new InputError(`sidecar belongs to ${JSON.stringify(parsed.data.session)}, not this session`, path);
  }
  return parsed.data;
}

/** A sidecar written whole to its temp file, not yet in place (commitSidecars puts it there). */
export interface StagedSidecar {
  /** The sidecar it will become. */
  readonly path: string;
  readonly temp: string;
  readonly fd: number;
}

/** Temp files this thread has staged and not yet renamed or removed: removed if we exit first. */
const staged = new Set<string>();
let tempSequence = 0;

function removeStagedOnExit(): void {
  for (const temp of staged) removeQuietly(temp);
}

/** Removes a file that may already be gone (temps, stagings, locks). */
export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/**
 * `<sidecar>.<digits>`, the temp name the sweeper recognizes: this process's pid, this thread
 * and a sequence number, so no two writers in or across processes pick the same one; `wx`
 * refuses one that exists anyway (or a symlink planted there), and the next number is tried.
 */
function nextTempName(path: string): string {
  return `${path}.${process.pid}${String(lazyWorkerThreads().threadId).padStart(3, '0')}${++tempSequence}`;
}

/** A new temp file beside `path`, opened `wx`; a name that exists is skipped for the next. */
function openTemp(path: string): { temp: string; fd: number } {
  for (;;) {
    const temp = nextTempName(path);
    try {
      return { temp, fd: openSync(temp, 'wx', 0o644) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

function removeStagedOnExitOnce(): void {
  atExit(removeStagedOnExit);
}

/** A sidecar's text: what stageSidecar and stageSidecars write. */
const sidecarText = (state: CompactionState): string => `${JSON.stringify(state, null, 2)}\n`;

/**
 * The sidecar path a session's state is to be written to, refused (an InputError) when it is a
 * symbolic link or not a regular file: for a save whose caller has not read the sidecar under
 * the lock (a worker's batch has, and passes the path as it is: compactBatchTask).
 */
function writableSidecarPath(sessionPath: string): string {
  const path = sidecarPath(sessionPath);
  checkSidecarPath(path, 'write');
  return path;
}

/** Whether the umask was seen to leave a new temp's 0644 alone (then a temp needs no `fstat` to say so). */
interface UmaskSeen {
  keeps644: boolean;
}

/**
 * Writes `state` whole into a new temp file beside the sidecar at `path` (checked by the caller).
 * `umask`: what a temp staged just before in the same batch showed of the umask.
 */
function stageAt(path: string, state: CompactionState, umask: UmaskSeen = { keeps644: false }): StagedSidecar {
  removeStagedOnExitOnce();
  let opened: { temp: string; fd: number };
  try {
    opened = openTemp(path);
  } catch (error) {
    throw new InputError(`cannot write sidecar: ${describeFsError(error)}`, path);
  }
  staged.add(opened.temp);
  return fillTemp(path, opened, state, umask);
}

/** Writes `state` whole into a temp just created (and listed in `staged`) for the sidecar at `path`. */
function fillTemp(path: string, { temp, fd }: { temp: string; fd: number }, state: CompactionState, umask: UmaskSeen): StagedSidecar {
  try {
    writeSync(fd, sidecarText(state), null, 'utf8');
    // The mode regardless of the umask, as for every sidecar before (a chmod is a journalled
    // metadata write, so only when the umask changed it).
    if (!umask.keeps644) {
      if ((fstatSync(fd).mode & 0o777) === 0o644) umask.keeps644 = true;
      else fchmodSync(fd, 0o644);
    }
    return { path, temp, fd };
  } catch (error) {
    closeSync(fd);
    discard(temp);
    throw new InputError(`cannot write sidecar: ${describeFsError(error)}`, path);
  }
}

/** openTemp in libuv's thread pool: the temp is listed in `staged` as soon as it exists. */
function openTempAsync(path: string): Promise<{ temp: string; fd: number }> {
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const temp = nextTempName(path);
      open(temp, 'wx', 0o644, (error, fd) => {
        if (!error) {
          staged.add(temp);
          resolve({ temp, fd });
        } else if (error.code === 'EEXIST') attempt();
        else reject(error);
      });
    };
    attempt();
  });
}

/**
 * stageSidecar for a batch: each sidecar path (checked by the caller: a session's read refuses a
 * sidecar path that is a symlink or not a file, under the lock the batch holds until the commit)
 * with its state, staged, or the error that kept it from being staged (that sidecar alone
 * fails). The batch's temps are created at once in libuv's thread pool: creating a name can wait
 * for the file system's journal while it commits other files (another batch's fsyncs), and
 * meanwhile this thread compacts the other batch it holds instead of waiting. Each temp is then
 * written whole here. The umask's effect is asked of the batch's first temp only (unless it
 * changed the mode): a batch is staged in a moment, and the umask is the process's.
 */
export async function stageSidecars(entries: readonly { readonly path: string; readonly state: CompactionState }[]): Promise<(StagedSidecar | InputError)[]> {
  removeStagedOnExitOnce();
  const opened = await Promise.allSettled(entries.map(({ path }) => openTempAsync(path)));
  const umask: UmaskSeen = { keeps644: false };
  return entries.map(({ path, state }, index) => {
    const made = opened[index]!;
    if (made.status === 'rejected') return new InputError(`cannot write sidecar: ${describeFsError(made.reason)}`, path);
    try {
      return fillTemp(path, made.value, state, umask);
    } catch (error) {
      return error instanceof InputError ? error : new InputError(`cannot write sidecar: ${describeFsError(error)}`, path);
    }
  });
}

/** Writes the new sidecar whole into a temp file beside it; the sidecar itself is untouched. */
export function stageSidecar(sessionPath: string, state: CompactionState): StagedSidecar {
  return stageAt(writableSidecarPath(sessionPath), state);
}

function discard(temp: string): void {
  removeQuietly(temp);
  staged.delete(temp);
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/**
 * Makes the renames into a directory durable. Null when done, or when the platform cannot fsync
 * a directory (nothing more can be done there); otherwise the error.
 */
async function syncDirectory(directory: string): Promise<unknown> {
  let fd: number;
  try {
    fd = openSync(directory, 'r');
  } catch {
    return null;
  }
  try {
    await fsyncAsync(fd);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EINVAL' || code === 'EISDIR' || code === 'EPERM' || code === 'EBADF' ? null : error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Puts staged sidecars in place: every temp is fsynced (all at once), then renamed over its
 * sidecar, then each directory is fsynced once. Returns, per entry in order, its path or the
 * error that kept it from being written durably (a temp that was not renamed is removed, and the
 * old sidecar is untouched); an entry that is already an error (its staging failed) stays one.
 */
export async function commitSidecars(stagings: readonly (StagedSidecar | InputError)[]): Promise<(string | InputError)[]> {
  const sidecars = stagings.filter((entry): entry is StagedSidecar => !(entry instanceof InputError));
  const committed = await commitReady(sidecars);
  let next = 0;
  return stagings.map((entry) => (entry instanceof InputError ? entry : committed[next++]!));
}

async function commitReady(sidecars: readonly StagedSidecar[]): Promise<(string | InputError)[]> {
  const synced = await Promise.allSettled(sidecars.map((sidecar) => fsyncAsync(sidecar.fd)));
  const results = sidecars.map((sidecar, index): string | InputError => {
    closeSync(sidecar.fd);
    const sync = synced[index]!;
    try {
      if (sync.status === 'rejected') throw sync.reason;
      renameSync(sidecar.temp, sidecar.path);
      staged.delete(sidecar.temp);
      return sidecar.path;
    } catch (error) {
      discard(sidecar.temp);
      return new InputError(`cannot write sidecar: ${describeFsError(error)}`, sidecar.path);
    }
  });
  const directories = [...new Set(sidecars.filter((_, index) => typeof results[index] === 'string').map((sidecar) => dirname(sidecar.path)))];
  const failures = await Promise.all(directories.map(syncDirectory));
  return results.map((result, index) => {
    const failure = typeof result === 'string' ? failures[directories.indexOf(dirname(result))] : null;
    return failure ? new InputError(`cannot sync the sidecar's directory: ${describeFsError(failure)}`, sidecars[index]!.path) : result;
  });
}

/** Writes one sidecar atomically: readers see the old sidecar or the new one, never a torn file. */
export async function saveSidecar(sessionPath: string, state: CompactionState): Promise<string> {
  const [result] = await commitSidecars([stageSidecar(sessionPath, state)]);
  if (result instanceof InputError) throw result;
  return result!;
}

/**
 * Temp files a killed run can leave beside a sidecar: a staged sidecar's `<sidecar>.<number>`
 * and the lock's staging file `<sidecar>.lock.<pid>`. Only called while holding the sidecar's
 * lock, when no live writer of this sidecar can own them.
 */
function isStaleTempOf(sidecarName: string, name: string): boolean {
  if (!name.startsWith(`${sidecarName}.`)) return false;
  const rest = name.slice(sidecarName.length + 1);
  if (/^\d+$/.test(rest)) return true;
  // A staging file of a live process belongs to someone waiting for this lock: leave it.
  const staging = /^lock\.(\d+)$/.exec(rest);
  return staging !== null && !isProcessAlive(Number(staging[1]));
}

/**
 * A directory's names that may be temp files of a sidecar, by that sidecar's name: a temp is the
 * sidecar's name, a dot and a rest without `_compaction.json` (isStaleTempOf), so the last
 * `_compaction.json.` in a name ends the one sidecar name it can belong to.
 */
function tempsBySidecar(names: readonly string[]): Map<string, string[]> {
  const bySidecar = new Map<string, string[]>();
  for (const name of names) {
    const end = name.lastIndexOf(`${SIDECAR_SUFFIX}.`);
    if (end < 0) continue;
    const sidecarName = name.slice(0, end + SIDECAR_SUFFIX.length);
    const temps = bySidecar.get(sidecarName);
    if (temps) temps.push(name);
    else bySidecar.set(sidecarName, [name]);
  }
  return bySidecar;
}

/**
 * Removes a session's stale temp files. Each directory is listed once per sweeper (a bulk run
 * over thousands of sessions must not list it thousands of times), and its names are grouped by
 * the sidecar they may belong to, so a session looks at its own names only (not at every name
 * of its directory: over 10,000 sessions in one directory that was 10^8 comparisons); a name
 * listed earlier that is gone by now is simply skipped.
 */
export function createTempSweeper(): (sessionPath: string) => string[] {
  const listings = new Map<string, Map<string, string[]>>();
  return (sessionPath) => {
    const directory = dirname(sessionPath);
    let listing = listings.get(directory);
    if (!listing) {
      let names: string[];
      try {
        names = readdirSync(directory);
      } catch {
        names = [];
      }
      listing = tempsBySidecar(names);
      listings.set(directory, listing);
    }
    const sidecarName = basename(sidecarPath(sessionPath));
    const removed: string[] = [];
    for (const name of listing.get(sidecarName) ?? []) {
      if (!isStaleTempOf(sidecarName, name)) continue;
      const path = join(directory, name);
      try {
        unlinkSync(path);
        removed.push(path);
      } catch {
        // Gone since the listing.
      }
    }
    return removed;
  };
}
