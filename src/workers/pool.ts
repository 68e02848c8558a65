/**
 * A fixed pool of worker threads running session tasks. Each worker holds up to two tasks at
 * once, so one session's file I/O (opening, writing a sidecar) overlaps another's parsing. A
 * worker that dies (out of memory, a crash) fails the tasks it held and is replaced, so one bad
 * session never takes the batch down. Result order is left to the caller (runBatch).
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { lazyV8, lazyWorkerThreads } from '../lazy-builtins.js';
import type { PartSink, SessionTask } from './task.js';

export interface TaskRequest {
  readonly id: number;
  /** The task's key in the registry (src/tasks.ts). */
  readonly name: string;
  /**
   * A session (its path, with the format its walk sniffed: read/index.ts SessionInput), or a
   * batch task's sessions: plain data, so what the main thread learned goes with the path.
   */
  readonly input: unknown;
  /** What a failure of the worker itself is reported against (the session's path). */
  readonly label: string;
  readonly options: unknown;
}

/** Asks a worker to import a task's modules now, while the main thread still walks and sniffs; no reply. */
export interface PreloadRequest {
  readonly preload: string;
}

export type TaskReply = { readonly id: number; readonly ok: true; readonly value: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

/** A part of a task's output, sent before its reply (task.ts PartSink). */
export interface PartReply {
  readonly id: number;
  readonly part: unknown;
}

/** A task failed inside a worker; the message is already the one-line user-facing error. */
export class WorkerTaskError extends Error {
  override name = 'WorkerTaskError';
}

interface Pending {
  readonly request: TaskRequest;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly parts: PartSink<unknown> | undefined;
}

/** The worker thread's entry point (src/worker.ts), which looks tasks up in the registry. */
const WORKER_URL = new URL('../worker.js', import.meta.url);

/**
 * Each worker's young generation. V8's default lets each one grow to 32 MB or more while a
 * session is parsed (every line is garbage at once); with two workers that was most of the
 * difference between 236 MB and 192 MB peak RSS over 200 MB of Claude Code sessions, for about
 * 5% more CPU in scavenges (README "Performance").
 */
const YOUNG_GENERATION_MB = 8;

/**
 * How far V8 lets a heap's old generation grow past what the last full collection kept, in
 * percent. Left to itself V8 grows it by up to 4x when collections are cheap, and a worker
 * holding a long session's slim messages (100 MB) then reached 300 MB before collecting:
 * `inspect` of a 1 GB Claude Code session peaked at 333 MB RSS; 243 MB at 30%, 206 MB at 15%
 * (10% gave no less). CPU measured the same at 15%, 30% and V8's default (more full
 * collections, each over a small heap; docs/performance.md "Memory"). A V8 flag is the
 * process's, so the main thread grows so too.
 */
const HEAP_GROWING_PERCENT = 15;

/**
 * The V8 flag for where a pool's workers optimize their hot functions. Each worker's isolate
 * compiles the same hot code afresh (about 160 functions over the 1 GB Claude Code corpus), by
 * default on V8's helper threads. When the workers already take every core those threads only
 * take turns with them, and the moves cost more than compiling in place on the worker's own
 * thread; with a core to spare (one worker for one big session) the helper threads run on it.
 * V8 reads the flag as an isolate starts, so a pool sets it before it spawns, either way.
 */
export function compilingFlag(workers: number, cores: number): string {
  return workers >= cores ? '--no-concurrent-recompilation' : '--concurrent-recompilation';
}

/** Tasks one worker holds at once. */
export const TASKS_PER_WORKER = 2;

/** A session input's path (a path, or `{ path }`), or the first one of a batch's. */
function labelOf(input: unknown): string {
  const first: unknown = Array.isArray(input) ? input[0] : input;
  if (typeof first === 'object' && first !== null && 'path' in first) return String(first.path);
  return String(first);
}

export class WorkerPool {
  /** Every live worker and the tasks it holds. */
  private readonly workers = new Map<Worker, Map<number, Pending>>();
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;

  /**
   * `preload`: a task each worker imports as it starts, before its first session comes (tasks.ts).
   * `alsoHere`: the main thread works beside the workers (pipeline/sessions.ts batchHere), one
   * more busy thread.
   */
  constructor(
    readonly size: number,
    private readonly preload?: string,
    alsoHere = false,
  ) {
    const v8 = lazyV8();
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    v8.setFlagsFromString(compilingFlag(size + (alsoHere ? 1 : 0), availableParallelism()));
    for (let i = 0; i < size; i++) this.spawn();
  }

  /** How many tasks the pool works on at once. */
  get capacity(): number {
    return this.size * TASKS_PER_WORKER;
  }

  /** How many more tasks the workers would take now, without one waiting in the queue. */
  get free(): number {
    let held = 0;
    for (const tasks of this.workers.values()) held += tasks.size;
    return Math.max(0, this.capacity - held - this.queue.length);
  }

  /**
   * Runs a task on its input; `label` names what a dying worker fails (default: the input's
   * path); `parts` hears the task's parts, in order, before the result.
   */
  run<Options, Result, Input, Part>(task: SessionTask<Options, Result, Input, Part>, input: Input, options: Options, label = labelOf(input), parts?: PartSink<Part>): Promise<Result> {
    if (this.closed) return Promise.reject(new Error('internal: worker pool already closed'));
    return new Promise<Result>((resolve, reject) => {
      const request: TaskRequest = { id: this.nextId++, name: task.name, input, label, options };
      this.queue.push({ request, resolve: resolve as (value: unknown) => void, reject, parts: parts as PartSink<unknown> | undefined });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.workers.keys()];
    this.workers.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private spawn(): void {
    const worker = new (lazyWorkerThreads().Worker)(WORKER_URL, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    const held = new Map<number, Pending>();
    this.workers.set(worker, held);
    worker.on('message', (reply: TaskReply | PartReply) => {
      const pending = held.get(reply.id);
      if (!pending) return;
      if ('part' in reply) {
        pending.parts?.(reply.part);
        return;
      }
      held.delete(reply.id);
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(new WorkerTaskError(reply.error));
      this.dispatch();
    });
    const fail = (reason: string) => {
      if (!this.workers.delete(worker) || this.closed) return;
      for (const pending of held.values()) pending.reject(new WorkerTaskError(`${pending.request.label}: ${reason}`));
      held.clear();
      this.spawn();
      this.dispatch();
    };
    worker.on('error', (error) => fail(`worker failed: ${error.message}`));
    worker.on('exit', (code) => fail(`worker exited with code ${code}`));
    if (this.preload !== undefined) worker.postMessage({ preload: this.preload } satisfies PreloadRequest);
    // Idle workers must not keep the process alive once the command is done.
    worker.unref();
  }

  private dispatch(): void {
    for (const [worker, held] of this.workers) {
      while (held.size < TASKS_PER_WORKER && this.queue.length > 0) {
        const pending = this.queue.shift()!;
        held.set(pending.request.id, pending);
        worker.postMessage(pending.request);
      }
      if (held.size > 0) worker.ref();
      else worker.unref();
    }
  }
}
