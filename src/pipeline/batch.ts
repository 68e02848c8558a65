/**
 * Runs one piece of work per session, a few at a time, and hands results back in input order.
 * A failing session never stops the batch: its error becomes its result; except an error every
 * remaining session would meet as well (errors.ts `stopsBatch`: the summarizer rejected the
 * key), which stops the run (interrupt.ts `stopRun`). Once the run is interrupted or stopped no
 * new session starts, here or in a worker (the workers' batches are handed out from here);
 * sessions in flight finish, or are abandoned if their work was aborted, and one line on stderr
 * says what was done.
 */
import pLimit from 'p-limit';
import { describeError, stopsBatch } from '../errors.js';
import type { SessionSource } from '../read/input.js';
import { sourcePath } from '../read/input.js';
import { interruption, stopRun } from './interrupt.js';
import { logMessage } from './log.js';

export type Outcome<T> = { readonly path: string; readonly ok: true; readonly value: T } | { readonly path: string; readonly ok: false; readonly error: string };

/** A session the interruption kept from running (or whose aborted work was dropped). */
const ABANDONED = Symbol('abandoned');

/** `work` on each session (a path, or a path with what its walk found), results in input order. */
export async function runBatch<T, Source extends SessionSource = string>(
  sources: readonly Source[],
  work: (source: Source) => Promise<T>,
  emit: (outcome: Outcome<T>) => void | Promise<void>,
  concurrency = 1,
  signal: AbortSignal = interruption.signal,
): Promise<Outcome<T>[]> {
  const paths = sources.map(sourcePath);
  const limit = pLimit(Math.max(1, concurrency));
  const settled: (Outcome<T> | typeof ABANDONED | undefined)[] = new Array(paths.length);
  let nextToEmit = 0;
  let emitting = Promise.resolve();
  // Results may finish out of order; emit each as soon as everything before it is done.
  const flush = () => {
    emitting = emitting.then(async () => {
      while (nextToEmit < paths.length && settled[nextToEmit]) {
        const outcome = settled[nextToEmit]!;
        nextToEmit++;
        if (outcome !== ABANDONED) await emit(outcome);
      }
    });
    return emitting;
  };
  await Promise.all(
    sources.map((source, index) =>
      limit(async () => {
        const path = paths[index]!;
        let outcome: Outcome<T> | typeof ABANDONED;
        if (signal.aborted) outcome = ABANDONED;
        else {
          try {
            outcome = { path, ok: true, value: await work(source) };
          } catch (error) {
            if (stopsBatch(error)) stopRun(error);
            // Work that failed because it was aborted is abandoned, not a failure of the session.
            outcome = signal.aborted ? ABANDONED : { path, ok: false, error: describeError(error) };
          }
        }
        settled[index] = outcome;
        await flush();
      }),
    ),
  );
  await emitting;
  const done = settled.filter((outcome): outcome is Outcome<T> => outcome !== undefined && outcome !== ABANDONED);
  if (signal.aborted) reportInterruption(done.length, paths.length, signal);
  return done;
}

/** The one line of a batch that stopped early: by a signal, or by an error that stopped the run. */
function reportInterruption(done: number, total: number, signal: AbortSignal): void {
  const sessions = `${done} of ${total} session${total === 1 ? '' : 's'} done`;
  if (signal.reason instanceof Error) {
    logMessage('error', `${describeError(signal.reason)}: batch stopped, ${sessions}, ${total - done} not run; fix it and run the same command again`);
    return;
  }
  const by = typeof signal.reason === 'string' ? ` by ${signal.reason}` : '';
  logMessage('info', `interrupted${by}: ${sessions}, ${total - done} not done; run the same command again to resume`);
}
