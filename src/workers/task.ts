/**
 * Per-session work that can run in a worker thread. A task has a name, under which src/tasks.ts
 * lists it, so a worker finds it in that one registry; its input (a session path, or a batch of them), options and
 * result cross threads by structured clone, so all are plain data (no functions, no class
 * instances). Scheduling is left to pool.ts and pipeline/sessions.ts.
 */

export interface SessionTask<Options, Result, Input = string> {
  /** Its key in the registry (src/tasks.ts). */
  readonly name: string;
  readonly run: (input: Input, options: Options) => Promise<Result>;
}

/** Declares a task; `name` must be its key in the registry (src/tasks.ts). */
export function sessionTask<Options, Result, Input = string>(
  name: string,
  run: (input: Input, options: Options) => Promise<Result>,
): SessionTask<Options, Result, Input> {
  return { name, run };
}

/** One session's result in a batch: a failing session fails alone, with its one-line error. */
export type Settled<Result> = { readonly ok: true; readonly value: Result } | { readonly ok: false; readonly error: string };

/**
 * Work on several sessions in one task: one message each way for all of them, and work that
 * pays once per batch (sidecar commits) shared. Results are in the order of the paths.
 */
export type SessionBatchTask<Options, Result, Input = string> = SessionTask<Options, Settled<Result>[], readonly Input[]>;
