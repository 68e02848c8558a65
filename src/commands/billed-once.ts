/**
 * One billed call, one session: a call two sessions of a batch both hold (a fork's copy of its
 * parent's call that the fork's file does not mark, Claude Code `--fork-session`) counts in the
 * spend of the first of them in the batch's order, and is a copy in the later one ("billed in"
 * the first). Results still stream in input order: a session whose calls an earlier one counted
 * is worked out again, here, with those calls as copies; the others pass as they are. Which calls
 * a session holds and what a copy is are the ledgers' (audit/ledgers.ts).
 */
import { describeError } from '../errors.js';
import type { Outcome } from './batch.js';

/** A session's result that names the calls its spend counted (ledgers.ts spendCallKeys). */
export interface CountedCalls {
  readonly spendKeys: readonly string[];
}

/**
 * `emit` for a batch, in input order, each session's result with the calls an earlier session
 * counted taken out: `again(path, billedIn)` works the session out again with them as copies.
 * `settled` holds the outcomes as emitted, for what is worked out over the whole batch after it.
 */
export function billedOnce<Result extends CountedCalls>(
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  again: (path: string, billedIn: Readonly<Record<string, string>>) => Promise<Result>,
): { readonly emit: (outcome: Outcome<Result>) => Promise<void>; readonly settled: readonly Outcome<Result>[] } {
  const countedIn = new Map<string, string>();
  const settledAll: Outcome<Result>[] = [];
  const once = async (outcome: Outcome<Result>): Promise<void> => {
    let settled = outcome;
    if (outcome.ok) {
      const earlier = outcome.value.spendKeys.filter((key) => countedIn.has(key));
      if (earlier.length > 0) {
        const billedIn = Object.fromEntries(earlier.map((key) => [key, countedIn.get(key)!]));
        try {
          settled = { path: outcome.path, ok: true, value: await again(outcome.path, billedIn) };
        } catch (error) {
          settled = { path: outcome.path, ok: false, error: describeError(error) };
        }
      }
      if (settled.ok) for (const key of settled.value.spendKeys) countedIn.set(key, settled.path);
    }
    settledAll.push(settled);
    await emit(settled);
  };
  return { emit: once, settled: settledAll };
}
