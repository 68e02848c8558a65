/**
 * Ctrl-C and `kill` for the CLI, and the one other way a run stops early. The first SIGINT or
 * SIGTERM aborts `interruption.signal`: batches stop starting sessions, in-flight strategy calls
 * are aborted, sessions whose summary is already written finish their (atomic) save, and the CLI
 * exits 130 with a line saying what was done. A second signal exits 130 at once; sidecars are
 * still whole, because every write is a rename, and locks are released on exit (README
 * "Guarantees"). A command that writes nothing (stopAtOnceOnSignal) has nothing to finish: the
 * first signal exits 130 at once, or once the record it is printing in pieces is whole. `stopRun` aborts the same signal with an error every remaining session would
 * meet too (a rejected API key): the same stop, reported as that error, exit 1. Only the CLI
 * installs the handlers; the library never does.
 */
import { logMessage } from './log.js';

const controller = new AbortController();

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

let signalled: InterruptSignal | null = null;
let atOnce = false;

/**
 * This run writes nothing a signal could leave half done (estimate, inspect, replay, context,
 * audit, compact --dry-run): the first SIGINT or SIGTERM exits at once instead of letting the
 * sessions in progress finish, which for a big session can take many seconds.
 */
export function stopAtOnceOnSignal(): void {
  atOnce = true;
}
let failure: Error | null = null;

/** Records whose line is being written in pieces (record-parts.ts), and the exit a signal left for when they are whole. */
let openLines = 0;
let exitWhenWhole: number | null = null;

/**
 * A record's line is open: its first pieces are on stdout, the rest on its way. A signal that
 * would stop the run at once waits until the line is whole (closeRecordLine), so that an
 * interrupted `--json` run still prints no half record (the last piece of the longest record
 * we met, 70 MB of JSON, came 0.9 s after its first).
 */
export function openRecordLine(): void {
  openLines++;
}

/** The line opened by openRecordLine is whole: a stop waiting for it happens now. */
export function closeRecordLine(): void {
  openLines = Math.max(0, openLines - 1);
  if (openLines === 0 && exitWhenWhole !== null) process.exit(exitWhenWhole);
}

export const interruption = {
  /** Aborted once the process has been asked to stop, or stopRun was called. */
  get signal(): AbortSignal {
    return controller.signal;
  },
  /** True once a signal asked the process to stop (exit 130). */
  get requested(): boolean {
    return signalled !== null;
  },
  /** Which signal asked, for the closing line. */
  get by(): InterruptSignal | null {
    return signalled;
  },
  /** The error that stopped the run (exit 1), or null. */
  get failure(): Error | null {
    return failure;
  },
};

/** Stops the run as an interruption does, because of `error`; the first stop wins. */
export function stopRun(error: Error): void {
  if (controller.signal.aborted) return;
  failure = error;
  controller.abort(error);
}

export function installInterruptHandlers(exitCode: number): () => void {
  const handler = (signal: InterruptSignal) => {
    if (signalled === null && atOnce) {
      signalled = signal;
      if (openLines > 0) {
        logMessage('info', `${signal}: stopping once the record being printed is whole (again to stop now)`);
        exitWhenWhole = exitCode;
        return;
      }
      logMessage('info', `${signal}: stopped (this command writes nothing)`);
      process.exit(exitCode);
    }
    if (signalled === null) {
      signalled = signal;
      logMessage('info', `${signal}: stopping after the sessions in progress (again to stop now)`);
      if (!controller.signal.aborted) controller.abort(signal);
      return;
    }
    logMessage('info', `${signal} again: stopped now; finished sidecars are kept, none is half-written`);
    process.exit(exitCode);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
