/**
 * What the sidecar room cleans up when the process exits (staged temp files, held locks): one
 * `exit` listener for all of it, added with the first cleanup registered. Process-wide by
 * nature, like the signal handling in pipeline/interrupt.ts; kept here as data, a set of
 * cleanups, not as flags in each module.
 */
const cleanups = new Set<() => void>();

function runCleanups(): void {
  for (const cleanup of cleanups) cleanup();
}

/** Runs `cleanup` at exit (once, however often it is registered). */
export function atExit(cleanup: () => void): void {
  if (cleanups.size === 0) process.on('exit', runCleanups);
  cleanups.add(cleanup);
}
