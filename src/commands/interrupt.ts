/**
 * Ctrl-C and `kill` for the CLI. The first SIGINT or SIGTERM aborts `interruption.signal`:
 * batches stop starting sessions, in-flight strategy calls are aborted, sessions whose summary is
 * already written finish their (atomic) save, and the CLI exits 130 with a line saying what was
 * done. A second signal exits 130 at once; sidecars are still whole, because every write is a
 * rename, and locks are released on exit (README "Guarantees"). Only the CLI installs the handlers; the library never does.
 */

const controller = new AbortController();

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

export const interruption = {
  /** Aborted once the process has been asked to stop. */
  get signal(): AbortSignal {
    return controller.signal;
  },
  get requested(): boolean {
    return controller.signal.aborted;
  },
  /** Which signal asked, for the closing line. */
  get by(): InterruptSignal | null {
    return controller.signal.aborted ? (controller.signal.reason as InterruptSignal) : null;
  },
};

export function installInterruptHandlers(exitCode: number): () => void {
  const handler = (signal: InterruptSignal) => {
    if (!controller.signal.aborted) {
      process.stderr.write(`compactor: ${signal}: stopping after the sessions in progress (again to stop now)\n`);
      controller.abort(signal);
      return;
    }
    process.stderr.write(`compactor: ${signal} again: stopped now; finished sidecars are kept, none is half-written\n`);
    process.exit(exitCode);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
