/**
 * Per-session work that can run in a worker thread. A task is a named export of an ES module,
 * so a worker can import it by URL; its options and result cross threads by structured clone,
 * so both are plain data (no functions, no class instances). Scheduling is left to pool.ts and
 * commands/sessions.ts.
 */

export interface SessionTask<Options, Result> {
  /** `import.meta.url` of the module that exports the task. */
  readonly module: string;
  /** The export's name in that module. */
  readonly name: string;
  readonly run: (path: string, options: Options) => Promise<Result>;
}

/** Declares a task; `name` must be the name it is exported under from `module`. */
export function sessionTask<Options, Result>(
  module: string,
  name: string,
  run: (path: string, options: Options) => Promise<Result>,
): SessionTask<Options, Result> {
  return { module, name, run };
}

export function isSessionTask(value: unknown): value is SessionTask<unknown, unknown> {
  const task = value as Partial<SessionTask<unknown, unknown>> | null;
  return typeof task === 'object' && task !== null && typeof task.run === 'function' && typeof task.module === 'string';
}
