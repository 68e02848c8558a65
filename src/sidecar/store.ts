/**
 * The only code that writes: sidecar paths, loading with validation, atomic saves (temp file +
 * rename, via write-file-atomic) and removing the temp files a killed run left behind. A
 * session file is never opened for writing, and a sidecar path that is a symbolic link is
 * neither read nor written through (write-file-atomic would follow it to its target).
 */
import { lstat, readdir, readFile, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { CompactionState } from '../compaction/state.js';
import { SIDECAR_FORMAT_VERSION } from '../compaction/state.js';
import { describeFsError, InputError } from '../errors.js';
import { isProcessAlive } from './process-alive.js';
import { sidecarSchema } from './schema.js';

export const SIDECAR_SUFFIX = '_compaction.json';

/** `<dir>/<session name without .jsonl>_compaction.json`, always beside the session. */
export function sidecarPath(sessionPath: string): string {
  const name = basename(sessionPath).replace(/\.jsonl$/i, '');
  return join(dirname(sessionPath), `${name}${SIDECAR_SUFFIX}`);
}

export function isSidecarPath(path: string): boolean {
  return path.endsWith(SIDECAR_SUFFIX);
}

/** Refuses a sidecar path that is a symlink or not a regular file; false when nothing is there. */
async function checkSidecarPath(path: string, doing: 'read' | 'write'): Promise<boolean> {
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new InputError(`cannot ${doing} sidecar: ${describeFsError(error)}`, path);
  }
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
  if (!(await checkSidecarPath(path, 'read'))) return null;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
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

/** Writes atomically: readers see the old sidecar or the new one, never a torn file. */
export async function saveSidecar(sessionPath: string, state: CompactionState): Promise<string> {
  const path = sidecarPath(sessionPath);
  await checkSidecarPath(path, 'write');
  await writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`, { encoding: 'utf8', mode: 0o644 });
  return path;
}

/**
 * Temp files a killed run can leave beside a sidecar: write-file-atomic's `<sidecar>.<number>`
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
 * Removes a session's stale temp files. Each directory is listed once per sweeper (a bulk run
 * over thousands of sessions must not list it thousands of times); a name listed earlier that
 * is gone by now is simply skipped.
 */
export function createTempSweeper(): (sessionPath: string) => Promise<string[]> {
  const listings = new Map<string, Promise<string[]>>();
  return async (sessionPath) => {
    const directory = dirname(sessionPath);
    let listing = listings.get(directory);
    if (!listing) {
      listing = readdir(directory).catch(() => []);
      listings.set(directory, listing);
    }
    const sidecarName = basename(sidecarPath(sessionPath));
    const removed: string[] = [];
    for (const name of await listing) {
      if (!isStaleTempOf(sidecarName, name)) continue;
      const path = join(directory, name);
      await unlink(path).then(
        () => removed.push(path),
        () => {},
      );
    }
    return removed;
  };
}
