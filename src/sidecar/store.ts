/**
 * The only code that writes: sidecar paths, loading with validation, and atomic saves
 * (temp file + rename, via write-file-atomic). A session file is never opened for writing.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { CompactionState } from '../compaction/state.js';
import { SIDECAR_FORMAT_VERSION } from '../compaction/state.js';
import { InputError } from '../errors.js';
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

/** The sidecar for a session, or null when there is none. Invalid ones are an InputError. */
export async function loadSidecar(sessionPath: string): Promise<CompactionState | null> {
  const path = sidecarPath(sessionPath);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InputError(`cannot read sidecar: ${(error as Error).message}`, path);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`corrupt sidecar (not JSON: ${(error as Error).message})`, path);
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

/**
 * Writes atomically: readers see the old sidecar or the new one, never a torn file. Not fsynced
 * one by one: that cost 3 ms a sidecar and capped `compact` far below 1,000 sessions a second
 * (README "Performance"); a machine crash can lose the newest sidecars, which the next run writes again.
 */
export async function saveSidecar(sessionPath: string, state: CompactionState): Promise<string> {
  const path = sidecarPath(sessionPath);
  await writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`, { encoding: 'utf8', mode: 0o644, fsync: false });
  return path;
}
