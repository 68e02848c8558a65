/**
 * Runs a session task over many sessions on every core: in worker threads when the batch is
 * big enough to repay starting them, in this thread otherwise. Results are handed to `emit` in
 * input order either way (runBatch's contract), so output never depends on the number of jobs.
 */
import { availableParallelism } from 'node:os';
import { stat } from 'node:fs/promises';
import type { TokenizerName } from '../tokens/tokenizers.js';
import { WorkerPool } from '../workers/pool.js';
import type { SessionTask } from '../workers/task.js';
import type { Outcome } from './batch.js';
import { runBatch } from './batch.js';

/** What every session task needs to read a session (plain data: it crosses to workers). */
export interface ReadTaskOptions {
  readonly format: string;
  readonly tokenizer: TokenizerName;
  /** `--strict`: any warning fails the session (load.ts). */
  readonly strict: boolean;
}

/** `--jobs`: a number of threads, or `auto` (one per core when the batch repays it). */
export type Jobs = number | 'auto';

/** Starting a worker costs about as much as reading a few MB; below this, one thread wins. */
const AUTO_MIN_BYTES = 8 << 20;
/** …or this many files, whose per-file overheads add up. */
const AUTO_MIN_FILES = 64;

async function enoughWork(paths: readonly string[]): Promise<boolean> {
  if (paths.length >= AUTO_MIN_FILES) return true;
  let bytes = 0;
  for (const path of paths) {
    bytes += await stat(path).then((info) => info.size, () => 0);
    if (bytes >= AUTO_MIN_BYTES) return true;
  }
  return false;
}

/** How many worker threads to start (0: run in this thread). */
export async function workerCount(jobs: Jobs, paths: readonly string[]): Promise<number> {
  if (paths.length < 2) return 0;
  if (jobs === 'auto') {
    const cores = availableParallelism();
    return cores > 1 && (await enoughWork(paths)) ? Math.min(cores, paths.length) : 0;
  }
  return jobs > 1 ? Math.min(jobs, paths.length) : 0;
}

/** How runSessions works in this thread, and what it does here around each session either way. */
export interface LocalRun<Result> {
  /** The work for a session when no workers run (default: the task itself). */
  readonly local?: (path: string) => Promise<Result>;
  /** Sessions at once in this thread when no workers run (default 1). */
  readonly concurrency?: number;
  /**
   * Wraps each session's work sent to a worker, in this thread (compact holds the sidecar lock
   * here, so this process releases it on exit). `local` does its own wrapping.
   */
  readonly around?: (path: string, work: () => Promise<Result>) => Promise<Result>;
}

export async function runSessions<Options, Result>(
  paths: readonly string[],
  task: SessionTask<Options, Result>,
  options: Options,
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  jobs: Jobs,
  here: LocalRun<Result> = {},
): Promise<Outcome<Result>[]> {
  const workers = await workerCount(jobs, paths);
  if (workers === 0) return runBatch(paths, here.local ?? ((path) => task.run(path, options)), emit, here.concurrency ?? 1);
  const pool = new WorkerPool(workers);
  const around = here.around ?? ((_path: string, work: () => Promise<Result>) => work());
  try {
    // One task more than the pool holds, so no worker waits for the main thread between sessions.
    return await runBatch(paths, (path) => around(path, () => pool.run(task, path, options)), emit, pool.capacity + 1);
  } finally {
    await pool.close();
  }
}
