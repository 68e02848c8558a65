/**
 * The registry of work a worker thread can run: every session task by its name. The main thread
 * sends a name (workers/pool.ts), the worker (worker.ts) runs what this table holds under it; no
 * module is imported by a path that travels between threads.
 */
import { compactBatchTask } from './commands/compact.js';
import { estimateSessionTask } from './commands/estimate.js';
import { inspectSessionTask } from './commands/inspect.js';
import { replaySessionTask } from './commands/replay.js';
import type { SessionTask } from './workers/task.js';

const SESSION_TASKS: readonly SessionTask<never, unknown, never>[] = [estimateSessionTask, inspectSessionTask, replaySessionTask, compactBatchTask];

/** The task registered under `name`; an unknown name is a bug of ours, not the user's. */
export function sessionTaskNamed(name: string): SessionTask<unknown, unknown, unknown> {
  const task = SESSION_TASKS.find((candidate) => candidate.name === name);
  if (!task) throw new Error(`internal: no session task named ${JSON.stringify(name)}`);
  return task as unknown as SessionTask<unknown, unknown, unknown>;
}
