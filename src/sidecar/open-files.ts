/**
 * How many worker threads a run starts and how many sidecars a batch stages at once, so that a
 * run keeps its open files within the process's limit (`ulimit -n`): every staged sidecar holds its temp file open until the batch
 * commits them together (store.ts), and several batches stage at once, one or two per worker
 * thread. The limit is the soft RLIMIT_NOFILE, read from /proc/self/limits on Linux; elsewhere
 * (no such file) 256, macOS's default, is assumed.
 */
import { readFileSync } from 'node:fs';

/** Files Node, its worker threads and a session's read keep open besides staged sidecars. */
const RESERVED_FILES = 48;
/** More at once buys nothing: the point of staging together is one journal commit for many files. */
const MAX_GROUP = 32;
const FALLBACK_LIMIT = 256;

let limit: number | undefined;

/** The soft limit on open files of this process. */
export function openFileLimit(): number {
  if (limit !== undefined) return limit;
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    limit = line === undefined ? FALLBACK_LIMIT : line === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line);
  } catch {
    limit = FALLBACK_LIMIT;
  }
  return limit;
}

/** Files a worker thread may hold at once: its module files as it starts, a session per task, locks and staged sidecars. */
const FILES_PER_THREAD = 8;

/** The most worker threads whose files fit the limit beside the reserve (at least 1). */
export function threadsWithinOpenFiles(files = openFileLimit()): number {
  return Math.max(1, Math.floor((files - RESERVED_FILES) / FILES_PER_THREAD));
}

/** Sidecars one batch stages and commits together when `writersAtOnce` batches do so at the same time. */
export function stagingGroupSize(writersAtOnce: number, files = openFileLimit()): number {
  return Math.max(1, Math.min(MAX_GROUP, Math.floor((files - RESERVED_FILES) / Math.max(1, writersAtOnce))));
}
