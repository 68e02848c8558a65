/**
 * A fixed pool of worker threads running session tasks, one at a time each, in request order.
 * A worker that dies (out of memory, a crash) fails the task it held and is replaced, so one
 * bad session never takes the batch down. Result order is left to the caller (runBatch).
 */
import { Worker } from 'node:worker_threads';
import type { SessionTask } from './task.js';

export interface TaskRequest {
  readonly id: number;
  readonly module: string;
  readonly name: string;
  readonly path: string;
  readonly options: unknown;
}

export type TaskReply = { readonly id: number; readonly ok: true; readonly value: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

/** A task failed inside a worker; the message is already the one-line user-facing error. */
export class WorkerTaskError extends Error {
  override name = 'WorkerTaskError';
}

interface Pending {
  readonly request: TaskRequest;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

const WORKER_URL = new URL('./session-worker.js', import.meta.url);

export class WorkerPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;

  constructor(readonly size: number) {
    for (let i = 0; i < size; i++) this.idle.push(this.spawn());
  }

  run<Options, Result>(task: SessionTask<Options, Result>, path: string, options: Options): Promise<Result> {
    if (this.closed) return Promise.reject(new Error('internal: worker pool already closed'));
    return new Promise<Result>((resolve, reject) => {
      const request: TaskRequest = { id: this.nextId++, module: task.module, name: task.name, path, options };
      this.queue.push({ request, resolve: resolve as (value: unknown) => void, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL);
    worker.on('message', (reply: TaskReply) => {
      const pending = this.busy.get(worker);
      if (!pending || pending.request.id !== reply.id) return;
      this.busy.delete(worker);
      this.idle.push(worker);
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(new WorkerTaskError(reply.error));
      this.dispatch();
    });
    const fail = (reason: string) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
      if (this.closed) return;
      pending?.reject(new WorkerTaskError(`${pending.request.path}: ${reason}`));
      this.idle.push(this.spawn());
      this.dispatch();
    };
    worker.on('error', (error) => fail(`worker failed: ${error.message}`));
    worker.on('exit', (code) => {
      if (this.busy.has(worker) || this.idle.includes(worker)) fail(`worker exited with code ${code}`);
    });
    // Idle workers must not keep the process alive once the command is done.
    worker.unref();
    return worker;
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const pending = this.queue.shift()!;
      this.busy.set(worker, pending);
      worker.ref();
      worker.postMessage(pending.request);
    }
    for (const worker of this.idle) worker.unref();
  }
}
