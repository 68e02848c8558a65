/**
 * One writer per sidecar: `<sidecar>.lock`, created atomically (a complete temp file hard-linked
 * into place, so a lock is never empty or half-written) and holding the owner's pid and host.
 * A lock whose owner is dead on this host is stale and taken over at once, so a run killed
 * with SIGKILL never blocks the next one. Locks this process holds are removed when it exits.
 *
 * Why not proper-lockfile: its staleness is time-based only (5 s at least), so every rerun after
 * a kill would see `locked` for a while; a pid check on the same host needs no waiting.
 */
import { readFileSync, unlinkSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { describeFsError, InputError } from '../errors.js';
import { isProcessAlive } from './process-alive.js';
import { sidecarPath } from './store.js';

export const LOCK_SUFFIX = '.lock';

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

export interface SidecarLock {
  readonly path: string;
  release(): Promise<void>;
}

export type LockAttempt =
  | { readonly kind: 'acquired'; readonly lock: SidecarLock }
  /** Another live process holds it; `holder` is null when the lock file cannot be read. */
  | { readonly kind: 'locked'; readonly path: string; readonly holder: LockHolder | null };

/** Lock files this process holds, with the content that proves they are ours. */
const held = new Map<string, string>();
let exitHookInstalled = false;

function releaseAllSync(): void {
  for (const [path, content] of held) {
    try {
      if (readFileSync(path, 'utf8') === content) unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  }
  held.clear();
}

export function lockPath(sessionPath: string): string {
  return `${sidecarPath(sessionPath)}${LOCK_SUFFIX}`;
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.since === 'string') {
      return { pid: value.pid, host: value.host, since: value.since };
    }
  } catch {
    // Not one of our locks: treated as stale below.
  }
  return null;
}

/** The holder, and whether it is gone. A lock from another host is never judged stale here. */
async function inspectLock(path: string): Promise<{ holder: LockHolder | null; stale: boolean } | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null; // released meanwhile
    return { holder: null, stale: false };
  }
  const holder = parseHolder(text);
  // Our locks are linked in whole, so an unreadable one was not written by a compactor.
  if (!holder) return { holder: null, stale: true };
  return { holder, stale: holder.host === hostname() && !isProcessAlive(holder.pid) };
}

/** Takes the session's sidecar lock, or says who holds it. */
export async function lockSidecar(sessionPath: string): Promise<LockAttempt> {
  const path = lockPath(sessionPath);
  const content = `${JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() })}\n`;
  const staging = `${path}.${process.pid}`;
  // `wx` never follows a symlink planted at the staging name.
  await unlink(staging).catch(() => {});
  await writeFile(staging, content, { flag: 'wx', mode: 0o644 }).catch((error: unknown) => {
    throw new InputError(`cannot lock the sidecar: ${describeFsError(error)}`, path);
  });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await link(staging, path);
        held.set(path, content);
        if (!exitHookInstalled) {
          process.on('exit', releaseAllSync);
          exitHookInstalled = true;
        }
        return { kind: 'acquired', lock: { path, release: () => release(path, content) } };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new InputError(`cannot lock the sidecar: ${describeFsError(error)}`, path);
      }
      const existing = await inspectLock(path);
      if (existing && !existing.stale) return { kind: 'locked', path, holder: existing.holder };
      if (existing) await unlink(path).catch(() => {});
    }
    const existing = await inspectLock(path);
    return { kind: 'locked', path, holder: existing?.holder ?? null };
  } finally {
    await unlink(staging).catch(() => {});
  }
}

async function release(path: string, content: string): Promise<void> {
  held.delete(path);
  try {
    // Only remove the lock if it is still ours.
    if ((await readFile(path, 'utf8')) === content) await unlink(path);
  } catch {
    // Already gone.
  }
}
