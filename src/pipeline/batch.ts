/**
 * Runs one piece of work per session, a few at a time, and hands results back in input order.
 * A failing session never stops the batch: its error becomes its result; except an error every
 * remaining session would meet as well (errors.ts `stopsBatch`: the summarizer rejected the
 * key), which stops the run (interrupt.ts `stopRun`). Once the run is interrupted or stopped no
 * new session starts, here or in a worker (the workers' batches are handed out from here);
 * sessions in flight finish, or are abandoned if their work was aborted, and one line on stderr
 * says what was done.
 */
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
  const done: Outcome<T>[] = [];
  await streamBatch(sources, work, (outcome) => {
    done.push(outcome);
    return emit(outcome);
  }, concurrency, signal);
  return done;
}

/**
 * runBatch that keeps nothing once a result is emitted: for a run that folds each result as it
 * is printed (the archive view), so memory does not grow with the number of sessions. Holds the
 * results that finished ahead of an earlier, slower one (a few, unless one session takes as long
 * as many). Returns how many sessions were done.
 */
export async function streamBatch<T, Source extends SessionSource = string>(
  sources: readonly Source[],
  work: (source: Source) => Promise<T>,
  emit: (outcome: Outcome<T>) => void | Promise<void>,
  concurrency = 1,
  signal: AbortSignal = interruption.signal,
): Promise<number> {
  const total = sources.length;
  // Results that finished before an earlier one: emitted, and dropped, as soon as it is.
  const waiting = new Map<number, Outcome<T> | typeof ABANDONED>();
  let nextToStart = 0;
  let nextToEmit = 0;
  let done = 0;
  let emitting = Promise.resolve();
  const flush = () => {
    emitting = emitting.then(async () => {
      for (let outcome = waiting.get(nextToEmit); outcome !== undefined; outcome = waiting.get(nextToEmit)) {
        waiting.delete(nextToEmit);
        nextToEmit++;
        if (outcome !== ABANDONED) {
          done++;
          await emit(outcome);
        }
      }
    });
    return emitting;
  };
  const one = async (index: number): Promise<void> => {
    const source = sources[index]!;
    const path = sourcePath(source);
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
    waiting.set(index, outcome);
    await flush();
  };
  // `concurrency` runners, each taking the next session once its last is emitted or set aside
  // for an earlier one: no promise per session is made up front.
  const runner = async (): Promise<void> => {
    while (nextToStart < total) await one(nextToStart++);
  };
  // At least one (a NaN or a fraction below 1 too), at most one per session.
  const runners = Math.min(total, concurrency >= 1 ? Math.floor(concurrency) : 1);
  await Promise.all(Array.from({ length: runners }, runner));
  await emitting;
  if (signal.aborted) reportInterruption(done, total, signal);
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
