/**
 * Per-session work that can run in a worker thread. A task is a named export of an ES module,
 * so a worker can import it by URL; its input (a session path, or a batch of them), options and
 * result cross threads by structured clone, so all are plain data (no functions, no class
 * instances). Scheduling is left to pool.ts and commands/sessions.ts.
 */

export interface SessionTask<Options, Result, Input = string> {
  /** `import.meta.url` of the module that exports the task. */
  readonly module: string;
  /** The export's name in that module. */
  readonly name: string;
  readonly run: (input: Input, options: Options) => Promise<Result>;
}

/** Declares a task; `name` must be the name it is exported under from `module`. */
export function sessionTask<Options, Result, Input = string>(
  module: string,
  name: string,
  run: (input: Input, options: Options) => Promise<Result>,
): SessionTask<Options, Result, Input> {
  return { module, name, run };
}

/** One session's result in a batch: a failing session fails alone, with its one-line error. */
export type Settled<Result> = { readonly ok: true; readonly value: Result } | { readonly ok: false; readonly error: string };

/**
 * Work on several sessions in one task: one message each way for all of them, and work that
 * pays once per batch (sidecar commits) shared. Results are in the order of the paths.
 */
export type SessionBatchTask<Options, Result> = SessionTask<Options, Settled<Result>[], readonly string[]>;

export function isSessionTask(value: unknown): value is SessionTask<unknown, unknown, unknown> {
  const task = value as Partial<SessionTask<unknown, unknown, unknown>> | null;
  return typeof task === 'object' && task !== null && typeof task.run === 'function' && typeof task.module === 'string';
}
