/**
 * Runs one piece of work per session, a few at a time, and hands results back in input order.
 * A failing session never stops the batch: its error becomes its result. Once the process is
 * interrupted (see interrupt.ts) no new session starts; sessions in flight finish, or are
 * abandoned if their work was aborted, and a line on stderr says what was done.
 */
import pLimit from 'p-limit';
import { describeError } from '../errors.js';
import { interruption } from './interrupt.js';

export type Outcome<T> = { readonly path: string; readonly ok: true; readonly value: T } | { readonly path: string; readonly ok: false; readonly error: string };

/** A session the interruption kept from running (or whose aborted work was dropped). */
const ABANDONED = Symbol('abandoned');

export async function runBatch<T>(
  paths: readonly string[],
  work: (path: string) => Promise<T>,
  emit: (outcome: Outcome<T>) => void | Promise<void>,
  concurrency = 1,
  signal: AbortSignal = interruption.signal,
): Promise<Outcome<T>[]> {
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
    paths.map((path, index) =>
      limit(async () => {
        let outcome: Outcome<T> | typeof ABANDONED;
        if (signal.aborted) outcome = ABANDONED;
        else {
          try {
            outcome = { path, ok: true, value: await work(path) };
          } catch (error) {
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

function reportInterruption(done: number, total: number, signal: AbortSignal): void {
  const by = typeof signal.reason === 'string' ? ` by ${signal.reason}` : '';
  process.stderr.write(
    `compactor: interrupted${by}: ${done} of ${total} session${total === 1 ? '' : 's'} done, ${total - done} not done; ` +
      'run the same command again to resume\n',
  );
}
