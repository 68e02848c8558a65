/**
 * Runs one piece of work per session, a few at a time, and hands results back in input order.
 * A failing session never stops the batch: its error becomes its result.
 */
import pLimit from 'p-limit';
import { describeError } from '../errors.js';

export type Outcome<T> = { readonly path: string; readonly ok: true; readonly value: T } | { readonly path: string; readonly ok: false; readonly error: string };

export async function runBatch<T>(
  paths: readonly string[],
  work: (path: string) => Promise<T>,
  emit: (outcome: Outcome<T>) => void | Promise<void>,
  concurrency = 1,
): Promise<Outcome<T>[]> {
  const limit = pLimit(Math.max(1, concurrency));
  const settled: (Outcome<T> | undefined)[] = new Array(paths.length);
  let nextToEmit = 0;
  let emitting = Promise.resolve();
  // Results may finish out of order; emit each as soon as everything before it is done.
  const flush = () => {
    emitting = emitting.then(async () => {
      while (nextToEmit < paths.length && settled[nextToEmit]) {
        const outcome = settled[nextToEmit]!;
        nextToEmit++;
        await emit(outcome);
      }
    });
    return emitting;
  };
  await Promise.all(
    paths.map((path, index) =>
      limit(async () => {
        let outcome: Outcome<T>;
        try {
          outcome = { path, ok: true, value: await work(path) };
        } catch (error) {
          outcome = { path, ok: false, error: describeError(error) };
        }
        settled[index] = outcome;
        await flush();
      }),
    ),
  );
  await emitting;
  return settled as Outcome<T>[];
}
