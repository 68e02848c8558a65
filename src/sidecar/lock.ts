/**
 * One writer per sidecar: `<sidecar>.lock`, created atomically (a complete temp file hard-linked
 * into place, so a lock is never empty or half-written) and holding the owner's pid and host.
 * A lock whose owner is dead on this host is stale and taken over at once, so a run killed
 * with SIGKILL never blocks the next one. Locks this process holds are removed when it exits.
 *
 * Why not proper-lockfile: its staleness is time-based only (5 s at least), so every rerun after
 * a kill would see `locked` for a while; a pid check on the same host needs no waiting.
 *
 * The file calls are synchronous: a lock is a handful of small metadata calls, and in a worker
 * thread each asynchronous one would cost a round trip through libuv's shared thread pool,
 * which over thousands of small sessions cost more than the calls themselves (README
 * "Performance"). A lock taken in a worker thread is released by the main thread's exit hook
 * when the process exits first (guardLocksOnExit).
 */
import { linkSync, lstatSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { describeFsError, InputError } from '../errors.js';
import { atExit } from './at-exit.js';
import { isProcessAlive } from './process-alive.js';
import { removeQuietly, sidecarPath } from './store.js';

export const LOCK_SUFFIX = '.lock';

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

export interface SidecarLock {
  readonly path: string;
  release(): void;
}

export type LockAttempt =
  | { readonly kind: 'acquired'; readonly lock: SidecarLock }
  /** Another live process holds it; `holder` is null when the lock file cannot be read. */
  | { readonly kind: 'locked'; readonly path: string; readonly holder: LockHolder | null };

/** Lock files this thread holds, with the content that proves they are ours. */
const held = new Map<string, string>();
/** Lock paths another thread of this process may hold (guardLocksOnExit), with how many guards. */
const guarded = new Map<string, number>();
/** The host never changes while we run; `hostname()` is a system call. */
const HOST = hostname();

function installExitHook(): void {
  atExit(releaseAllSync);
}

function releaseAllSync(): void {
  for (const [path, content] of held) {
    try {
      if (readFileSync(path, 'utf8') === content) unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  }
  held.clear();
  for (const path of guarded.keys()) removeIfOurs(path);
  guarded.clear();
}

/** Removes a lock that names this process: no other live process can have our pid on this host. */
function removeIfOurs(path: string): void {
  try {
    const holder = parseHolder(readFileSync(path, 'utf8'));
    if (holder && holder.pid === process.pid && holder.host === HOST) unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/**
 * For the main thread while a worker thread locks these sessions: if the process exits first (a
 * second Ctrl-C), the exit hook removes their locks that still name this process. Call the
 * returned function once the worker is done with them; with `workerDied`, the locks the dead
 * worker could not release are removed now.
 */
export function guardLocksOnExit(sessionPaths: readonly string[]): (workerDied?: boolean) => void {
  installExitHook();
  const paths = sessionPaths.map(lockPath);
  for (const path of paths) guarded.set(path, (guarded.get(path) ?? 0) + 1);
  return (workerDied = false) => {
    for (const path of paths) {
      if (workerDied) removeIfOurs(path);
      const left = (guarded.get(path) ?? 1) - 1;
      if (left > 0) guarded.set(path, left);
      else guarded.delete(path);
    }
  };
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
function inspectLock(path: string): { holder: LockHolder | null; stale: boolean } | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null; // released meanwhile
    return { holder: null, stale: false };
  }
  const holder = parseHolder(text);
  // Our locks are linked in whole, so an unreadable one was not written by a compactor.
  if (!holder) return { holder: null, stale: true };
  return { holder, stale: holder.host === HOST && !isProcessAlive(holder.pid) };
}

/** A complete lock file, hard-linked to each lock path it takes (one per directory). */
interface Staging {
  readonly path: string;
  readonly content: string;
  readonly dev: number;
  readonly ino: number;
}

/**
 * Takes sidecar locks for a batch of sessions. Each lock is a hard link to one staging file per
 * directory (`<first sidecar>.lock.<pid>`, written whole once), so a lock costs one link and
 * its release one unlink, instead of writing and removing a staging file every time: on a busy
 * file system each created or removed name waits for the journal. A release checks the lock is
 * still ours by its inode, without reading it. Close the stager once the batch has its locks.
 */
export interface LockStager {
  /** Takes the session's sidecar lock, or says who holds it. */
  take(sessionPath: string): LockAttempt;
  /** Removes the staging files; locks taken stay held until released. */
  close(): void;
}

export function createLockStager(): LockStager {
  const stagings = new Map<string, Staging>();
  const stagingFor = (path: string): Staging => {
    const directory = dirname(path);
    const existing = stagings.get(directory);
    if (existing) return existing;
    const content = `${JSON.stringify({ pid: process.pid, host: HOST, since: new Date().toISOString() })}\n`;
    const staging = `${path}.${process.pid}`;
    try {
      // `wx` never follows a symlink planted at the staging name. One left there (by a killed
      // run whose pid this process now has) is removed and the name made again, rather than
      // removing first what is almost never there.
      try {
        writeFileSync(staging, content, { flag: 'wx', mode: 0o644 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        removeQuietly(staging);
        writeFileSync(staging, content, { flag: 'wx', mode: 0o644 });
      }
      const { dev, ino } = lstatSync(staging);
      const made = { path: staging, content, dev, ino };
      stagings.set(directory, made);
      return made;
    } catch (error) {
      removeQuietly(staging);
      throw new InputError(`cannot lock the sidecar: ${describeFsError(error)}`, path);
    }
  };
  return {
    take(sessionPath) {
      const path = lockPath(sessionPath);
      const staging = stagingFor(path);
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          linkSync(staging.path, path);
          held.set(path, staging.content);
          installExitHook();
          return { kind: 'acquired', lock: { path, release: () => release(path, staging) } };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new InputError(`cannot lock the sidecar: ${describeFsError(error)}`, path);
        }
        const existing = inspectLock(path);
        if (existing && !existing.stale) return { kind: 'locked', path, holder: existing.holder };
        if (existing) removeQuietly(path);
      }
      const existing = inspectLock(path);
      return { kind: 'locked', path, holder: existing?.holder ?? null };
    },
    close() {
      for (const staging of stagings.values()) removeQuietly(staging.path);
      stagings.clear();
    },
  };
}

/** Takes one session's sidecar lock, or says who holds it. */
export function lockSidecar(sessionPath: string): LockAttempt {
  const stager = createLockStager();
  try {
    return stager.take(sessionPath);
  } finally {
    stager.close();
  }
}

function release(path: string, staging: Staging): void {
  held.delete(path);
  try {
    // Only remove the lock if it is still ours: the inode we linked there.
    const info = lstatSync(path);
    if (info.ino === staging.ino && info.dev === staging.dev) unlinkSync(path);
  } catch {
    // Already gone.
  }
}
