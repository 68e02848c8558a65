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

export async function runSessions<Options, Result>(
  paths: readonly string[],
  task: SessionTask<Options, Result>,
  options: Options,
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  jobs: Jobs,
): Promise<Outcome<Result>[]> {
  const workers = await workerCount(jobs, paths);
  if (workers === 0) return runBatch(paths, (path) => task.run(path, options), emit);
  const pool = new WorkerPool(workers);
  try {
    // One task more than the pool holds, so no worker waits for the main thread between sessions.
    return await runBatch(paths, (path) => pool.run(task, path, options), emit, pool.capacity + 1);
  } finally {
    await pool.close();
  }
}
