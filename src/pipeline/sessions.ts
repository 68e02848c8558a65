/**
 * Runs a session task over many sessions on every core: in worker threads when the batch is
 * big enough to repay starting them, in this thread otherwise. Results are handed to `emit` in
 * input order either way (runBatch's contract), so output never depends on the number of jobs.
 */
import { availableParallelism } from 'node:os';
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { describeError, UsageError } from '../errors.js';
import { isStdin } from '../formats/json/input-source.js';
import type { SessionInput } from '../read/input.js';
import type { TokenizerName } from '../tokens/tokenizers.js';
import { WorkerPool, WorkerTaskError } from '../workers/pool.js';
import { threadsWithinOpenFiles } from '../sidecar/open-files.js';
import type { PartSink, SessionBatchTask, SessionTask, Settled } from '../workers/task.js';
import type { Outcome } from './batch.js';
import { runBatch, streamBatch } from './batch.js';

/** What every session task needs to read a session (plain data: it crosses to workers). */
export interface ReadTaskOptions {
  readonly format: string;
  readonly tokenizer: TokenizerName;
  /** `--strict`: any warning fails the session (read/index.ts). */
  readonly strict: boolean;
}

/** `--jobs`: a number of threads, or `auto` (one per core when the batch repays it). */
export type Jobs = number | 'auto';

/** `--jobs` as given: `auto`, or a whole number >= 1. */
export function parseJobs(text: string): Jobs {
  if (text === 'auto') return 'auto';
  const jobs = Number(text);
  if (!/^\d+$/.test(text) || jobs < 1) throw new UsageError(`--jobs must be auto or a whole number >= 1, got ${JSON.stringify(text)}`);
  return jobs;
}

/** Starting a worker costs about as much as reading a few MB; below this, one thread wins. */
const AUTO_MIN_BYTES = 8 << 20;
/** …or this many files, whose per-file overheads add up. */
const AUTO_MIN_FILES = 64;

async function enoughWork(inputs: readonly SessionInput[]): Promise<boolean> {
  if (inputs.length >= AUTO_MIN_FILES) return true;
  let bytes = 0;
  for (const { path } of inputs) {
    bytes += await stat(path).then((info) => info.size, () => 0);
    if (bytes >= AUTO_MIN_BYTES) return true;
  }
  return false;
}

/**
 * Threads `jobs` asks for over `files` sessions, whether or not the work repays them (below 2:
 * none), and no more than the open-file limit leaves room for (sidecar/open-files.ts).
 */
const threadsFor = (jobs: Jobs, files: number): number => Math.min(jobs === 'auto' ? availableParallelism() : jobs, files, threadsWithinOpenFiles());

/** How many worker threads to start (0: run in this thread). */
export async function workerCount(jobs: Jobs, paths: readonly SessionInput[]): Promise<number> {
  // A worker thread has no stdin of its own: a run that reads `-` stays in this thread.
  if (paths.some((input) => isStdin(input.path))) return 0;
  // One big session goes to a worker too, so this thread stays free to answer Ctrl-C and SIGTERM.
  if (paths.length === 1) return jobs === 'auto' && (await enoughWork(paths)) ? 1 : 0;
  const threads = threadsFor(jobs, paths.length);
  if (threads < 2) return 0;
  return jobs !== 'auto' || (await enoughWork(paths)) ? threads : 0;
}

/** How runSessions works in this thread. */
export interface LocalRun<Result, Part = never> {
  /** The work for a session when no workers run (default: the task itself), and where its parts go. */
  readonly local?: (input: SessionInput, parts?: PartSink<Part>) => Promise<Result>;
  /** Where a session's parts go (workers/task.ts PartSink), from a worker or this thread (default: back in its result). */
  readonly parts?: (input: SessionInput) => PartSink<Part>;
  /** Sessions at once in this thread when no workers run (default 1). */
  readonly concurrency?: number;
  /** A pool started while the inputs were sniffed (earlyPool): used if its size is the one the run needs, else closed. */
  readonly early?: WorkerPool | null;
}

/** The early pool if it has the workers the run needs (closed otherwise), or a new pool; null for none. */
async function poolOf(workers: number, early: WorkerPool | null | undefined, alsoHere = false): Promise<WorkerPool | null> {
  if (early?.size === workers) return early;
  if (early) await early.close();
  return workers === 0 ? null : new WorkerPool(workers, undefined, alsoHere);
}

/**
 * The workers a batch run starts when this thread takes batches too (BatchRun.batchHere): one
 * thread fewer than the run's, since this one is the last. A worker's start-up (its isolate, its
 * modules compiled) costs as much as a few hundred small sessions, and this thread, which has
 * its modules already, is otherwise idle once the walk is sniffed.
 */
const sharedWorkers = (threads: number): number => (threads >= 2 ? threads - 1 : threads);

export async function runSessions<Options, Result, Part = never>(
  paths: readonly SessionInput[],
  task: SessionTask<Options, Result, SessionInput, Part>,
  options: Options,
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  jobs: Jobs,
  here: LocalRun<Result, Part> = {},
): Promise<Outcome<Result>[]> {
  const done: Outcome<Result>[] = [];
  await streamSessions(paths, task, options, (outcome) => {
    done.push(outcome);
    return emit(outcome);
  }, jobs, here);
  return done;
}

/**
 * runSessions that keeps no result once it is emitted (batch.ts streamBatch): for a command that
 * folds each one as it is printed. Returns how many sessions were done.
 */
export async function streamSessions<Options, Result, Part = never>(
  paths: readonly SessionInput[],
  task: SessionTask<Options, Result, SessionInput, Part>,
  options: Options,
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  jobs: Jobs,
  here: LocalRun<Result, Part> = {},
): Promise<number> {
  const pool = await poolOf(await workerCount(jobs, paths), here.early);
  const local = here.local ?? ((input, parts) => task.run(input, options, parts));
  if (!pool) return streamBatch(paths, (input) => local(input, here.parts?.(input)), emit, here.concurrency ?? 1);
  try {
    // One task more than the pool holds, so no worker waits for the main thread between sessions.
    return await streamBatch(paths, (input) => pool.run(task, input, options, input.path, here.parts?.(input)), emit, pool.capacity + 1);
  } finally {
    await pool.close();
  }
}

/** Sessions in one batch at most, and bytes (a big session goes alone, so both cores stay busy). */
const BATCH_SESSIONS = 32;
const BATCH_BYTES = 1 << 20;

/** How runSessionBatches works in this thread, and what it does here around each batch. */
export interface BatchRun<Result> {
  /** The work for a session when no workers run. */
  readonly local: (input: SessionInput) => Promise<Result>;
  /** Sessions at once in this thread when no workers run (default 1). */
  readonly concurrency?: number;
  /**
   * Called as a batch goes to a worker; the function it returns, when the batch is back (with
   * true when the worker died on it).
   */
  readonly guard?: (paths: readonly string[]) => (workerDied: boolean) => void;
  /** A pool started while the inputs were sniffed (earlyPool): used if its size is the one the run needs, else closed. */
  readonly early?: WorkerPool | null;
  /**
   * The batch task as this thread runs it: given, this thread is one of the run's threads, taking
   * a batch of small sessions whenever it has none in flight (the pool has one worker fewer).
   * The same task as the workers', so outcomes are the same wherever a batch ran.
   */
  readonly batchHere?: (inputs: readonly SessionInput[]) => Promise<Settled<Result>[]>;
}

/**
 * A pool started once a walk has found enough candidate files to repay workers (FrameOptions
 * `walked`), before they are sniffed: the workers start up, each compiling its task's modules,
 * while this thread sniffs, instead of after. runSessionBatches takes it over (`BatchRun.early`)
 * or closes it; a caller that never gets there closes it itself. Null when the run would not
 * start workers for that many files.
 */
function earlyPool(jobs: Jobs, candidates: number, task?: string, batchHere = false): WorkerPool | null {
  // The rule workerCount applies once the files are sniffed; a walk knows only their number.
  const threads = threadsFor(jobs, candidates);
  if (threads < 2 || (jobs === 'auto' && candidates < AUTO_MIN_FILES)) return null;
  return batchHere ? new WorkerPool(sharedWorkers(threads), task, true) : new WorkerPool(threads, task);
}

/**
 * An early pool for a command: `walked` goes to runSessionCommand (FrameOptions), `pool` to the
 * run (`early`). `jobs` is read when the walk ends; a bad `--jobs` starts no pool and is left
 * for the run to report. Idle workers never keep the process alive, so a walk that fails leaves
 * nothing to close.
 */
export function earlyStart(jobs: () => Jobs, task: string, batchHere = false): { readonly walked: (candidates: number) => void; readonly pool: () => WorkerPool | null } {
  let pool: WorkerPool | null = null;
  const walked = (candidates: number) => {
    let threads: Jobs;
    try {
      threads = jobs();
    } catch {
      return;
    }
    pool ??= earlyPool(threads, candidates, task, batchHere);
  };
  return { walked, pool: () => pool };
}

/**
 * runSessions for a batch task: sessions go to the workers in batches of small sessions (one
 * message each way per batch instead of per session; over 10,000 small sessions the messages
 * and per-session commits cost more than the work). A batch is sent when full, or as soon as
 * this thread has nothing more to add to it. Results are still emitted per session, in input
 * order, and an interruption still stops sessions from starting (runBatch).
 */
export async function runSessionBatches<Options, Result>(
  paths: readonly SessionInput[],
  task: SessionBatchTask<Options, Result, SessionInput>,
  options: Options,
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  jobs: Jobs,
  here: BatchRun<Result>,
): Promise<Outcome<Result>[]> {
  const threads = await workerCount(jobs, paths);
  const { batchHere } = here;
  const pool = await poolOf(batchHere ? sharedWorkers(threads) : threads, here.early, batchHere !== undefined);
  if (!pool) return runBatch(paths, here.local, emit, here.concurrency ?? 1);
  let batch: { input: SessionInput; settle: (result: Settled<Result>) => void }[] = [];
  let bytes = 0;
  /** Whether this thread has a batch of its own in flight (BatchRun.batchHere). */
  let busyHere = false;
  const settleAll = (sent: typeof batch, results: readonly Settled<Result>[]) =>
    sent.forEach((entry, index) => entry.settle(results[index] ?? { ok: false, error: `${entry.input.path}: internal: no result from the batch` }));
  const send = () => {
    const sent = batch;
    const sentBytes = bytes;
    batch = [];
    bytes = 0;
    const inputs = sent.map((entry) => entry.input);
    const paths = inputs.map((input) => input.path);
    // The workers first; this thread takes a batch when they hold all they take at once (it
    // answers their replies and prints too). A batch under BATCH_BYTES holds only small sessions
    // (a big one goes alone), so this thread is never away from Ctrl-C for long.
    if (batchHere && !busyHere && pool.free === 0 && sentBytes < BATCH_BYTES) {
      busyHere = true;
      // Started from the event loop, not in line: a batch here runs as one long chain of
      // microtasks, and the workers' replies (and their next batches) wait behind it otherwise.
      new Promise<void>((resolve) => setImmediate(resolve)).then(() => batchHere(inputs)).then(
        (results) => settleAll(sent, results),
        (error: unknown) => sent.forEach((entry) => entry.settle({ ok: false, error: `${entry.input.path}: ${describeError(error)}` })),
      ).finally(() => {
        busyHere = false;
      });
      return;
    }
    const unguard = here.guard?.(paths) ?? (() => {});
    pool.run(task, inputs, options, paths[0]).then(
      (results) => {
        unguard(false);
        sent.forEach((entry, index) => entry.settle(results[index] ?? { ok: false, error: `${entry.input.path}: internal: no result from the worker` }));
      },
      (error: Error) => {
        unguard(true);
        sent.forEach((entry) => entry.settle({ ok: false, error: error.message.replace(paths[0]!, entry.input.path) }));
      },
    );
  };
  const add = (input: SessionInput) =>
    new Promise<Result>((resolve, reject) => {
      if (batch.length === 0) setImmediate(() => batch.length > 0 && send());
      batch.push({ input, settle: (result) => (result.ok ? resolve(result.value) : reject(new WorkerTaskError(result.error))) });
      // The size the walk's sniff saw, if it sniffed the file (a batch's size only balances the work).
      bytes += input.sniffed?.size ?? sizeOf(input.path);
      if (batch.length >= BATCH_SESSIONS || bytes >= BATCH_BYTES) send();
    });
  try {
    // Enough sessions in flight to fill every worker's tasks (and this thread's) with full batches, and one more.
    return await runBatch(paths, add, emit, (pool.capacity + (batchHere ? 1 : 0)) * BATCH_SESSIONS + 1);
  } finally {
    await pool.close();
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
