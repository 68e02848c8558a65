/**
 * Per-session work that can run in a worker thread. A task has a name, under which src/tasks.ts
 * lists it, so a worker finds it in that one registry; its input (a session path, or a batch of them), options and
 * result cross threads by structured clone, so all are plain data (no functions, no class
 * instances). Scheduling is left to pool.ts and pipeline/sessions.ts.
 */

export interface SessionTask<Options, Result, Input = string, Part = never> {
  /** Its key in the registry (src/tasks.ts). */
  readonly name: string;
  /** Without `parts`, what the parts would have been comes back in the result. */
  readonly run: (input: Input, options: Options, parts?: PartSink<Part>) => Promise<Result>;
}

/**
 * Where a task hands what it makes before its result, as it makes it (a long record's bytes:
 * replay --json), so that neither thread holds all of it at once. From a worker each part is a
 * message of its own (structured clone), sent before the result.
 */
export type PartSink<Part> = (part: Part) => void;

/** Declares a task; `name` must be its key in the registry (src/tasks.ts). */
export function sessionTask<Options, Result, Input = string, Part = never>(
  name: string,
  run: (input: Input, options: Options, parts?: PartSink<Part>) => Promise<Result>,
): SessionTask<Options, Result, Input, Part> {
  return { name, run };
}

/** One session's result in a batch: a failing session fails alone, with its one-line error. */
export type Settled<Result> = { readonly ok: true; readonly value: Result } | { readonly ok: false; readonly error: string };

/**
 * Work on several sessions in one task: one message each way for all of them, and work that
 * pays once per batch (sidecar commits) shared. Results are in the order of the paths.
 */
export type SessionBatchTask<Options, Result, Input = string> = SessionTask<Options, Settled<Result>[], readonly Input[]>;
