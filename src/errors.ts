/**
 * Errors a user can act on, and the process exit codes. Anything thrown that is not an
 * `InputError` is a bug; the CLI still prints it on one line, but says so.
 */

/** Documented and stable: see README "Exit codes". */
export const ExitCode = {
  ok: 0,
  /** At least one session failed (bad input, summarizer error, write error). */
  failed: 1,
  /** The command line itself was wrong. */
  usage: 2,
  /** A CI gate (--max-baseline, --max-input-tokens, --max-cost) was breached. */
  gate: 3,
  /** Interrupted by SIGINT/SIGTERM; finished sessions are kept, nothing is half-written. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A problem with a user's file or flag: printed as `file:line: message`, never with a stack. */
export class InputError extends Error {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'InputError';
  }

  /** `path:line: message`, the shape of compiler and jq errors. */
  get location(): string {
    if (!this.file) return this.message;
    return this.line === undefined ? `${this.file}: ${this.message}` : `${this.file}:${this.line}: ${this.message}`;
  }
}

/**
 * Under --strict the first warning becomes the session's one-line error, saying how many more
 * there were. (A warning is a session/model.ts Diagnostic; its shape is spelled out here so that
 * this file imports nothing.)
 */
export function failOnWarnings(warnings: readonly { readonly file: string; readonly line?: number; readonly message: string }[]): void {
  const first = warnings[0];
  if (!first) return;
  const more = warnings.length > 1 ? `, and ${warnings.length - 1} more warning${warnings.length > 2 ? 's' : ''}` : '';
  throw new InputError(`${first.message} (--strict${more})`, first.file, first.line);
}

/** The command line is wrong: exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * An error every session left in a batch would meet as well (the summarizer rejected the API
 * key): thrown by one session's work, it stops the batch (pipeline/batch.ts) instead of failing
 * the sessions one by one. Marked by a property, so the batch needs no knowledge of who threw it.
 */
export interface BatchStopping {
  readonly stopsBatch: boolean;
}

export function stopsBatch(error: unknown): error is Error & BatchStopping {
  return error instanceof Error && (error as Partial<BatchStopping>).stopsBatch === true;
}

/** `ENOENT` and friends in words; a dangling symlink or a directory named *.jsonl lands here. */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (or a dangling symbolic link)';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory, not a session file';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    default:
      return (error as Error).message?.split('\n')[0] ?? String(error);
  }
}

/** One line for any error: the user-facing location for ours, the message for others. */
export function describeError(error: unknown): string {
  if (error instanceof InputError) return error.location;
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}
