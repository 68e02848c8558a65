/**
 * The registry of work a worker thread can run: every session task by its name, each with the
 * module that defines it, imported only when a worker first runs that task (a worker that only
 * inspects never loads compact's code). The main thread sends a name (workers/pool.ts), the
 * worker (worker.ts) runs what this table holds under it; no module path travels between threads.
 */
import type { SessionTask } from './workers/task.js';

type AnyTask = SessionTask<never, unknown, never, unknown>;

const SESSION_TASKS: Readonly<Record<string, () => Promise<AnyTask>>> = {
  estimate: async () => (await import('./commands/estimate.js')).estimateSessionTask,
  inspect: async () => (await import('./commands/inspect.js')).inspectSessionTask,
  replay: async () => (await import('./commands/replay.js')).replaySessionTask,
  compact: async () => (await import('./compact/batch.js')).compactBatchTask,
  select: async () => (await import('./pipeline/filters.js')).selectSessionTask,
};

/** The task registered under `name`; an unknown name is a bug of ours, not the user's. */
export async function sessionTaskNamed(name: string): Promise<SessionTask<unknown, unknown, unknown, unknown>> {
  const load = Object.hasOwn(SESSION_TASKS, name) ? SESSION_TASKS[name] : undefined;
  const task = await load?.();
  if (!task || task.name !== name) throw new Error(`internal: no session task named ${JSON.stringify(name)}`);
  // Each task's types are its command's; a worker hands it what the main thread posted for that
  // same name (structured clone), so the types are erased here and hold by the name's check above.
  return task as unknown as SessionTask<unknown, unknown, unknown, unknown>;
}
