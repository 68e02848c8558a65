/**
 * One billed call, one session: a call two sessions of a batch both hold (a fork's copy of its
 * parent's call that the fork's file does not mark, Claude Code `--fork-session`) counts in the
 * spend of the first of them in the batch's order, and is a copy in the later one ("billed in"
 * the first). Results still stream in input order: a session whose calls an earlier one counted
 * is worked out again, here, with those calls as copies; the others pass as they are. Which calls
 * a session holds and what a copy is are the ledgers' (ledgers/ledgers.ts).
 */
import { describeError } from '../errors.js';
import type { Outcome } from './batch.js';

/** A session's result that names the calls its spend counted (ledgers.ts spendCallKeys). */
export interface CountedCalls {
  readonly spendKeys: readonly string[];
}

/**
 * A call key as 64 bits (two 32-bit hashes) in a 4-character string: what the run holds for each
 * call it counted, about 24 bytes where the key itself (an id and a timestamp) takes 70 or more.
 * Two different calls would share a digest with odds of about n² / 2^65 over n calls (under one
 * in a hundred thousand for ten million calls); then the later one would count as a copy.
 */
export function callDigest(key: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
    b ^= b >>> 15;
  }
  // Mix the last characters into every bit (murmur3's finalizer).
  const mix = (h: number) => {
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  const x = mix(a);
  const y = mix(b ^ x);
  return String.fromCharCode(x & 0xffff, x >>> 16, y & 0xffff, y >>> 16);
}

/**
 * `emit` for a batch, in input order, each session's result with the calls an earlier session
 * counted taken out: `again(path, billedIn)` works the session out again with them as copies.
 * Holds one digest per counted call (callDigest) and the path of the session that counted it
 * (the input's own string), not the results: a caller that needs them keeps them in `emit`.
 */
export function billedOnce<Result extends CountedCalls>(
  emit: (outcome: Outcome<Result>) => void | Promise<void>,
  again: (path: string, billedIn: Readonly<Record<string, string>>) => Promise<Result>,
): (outcome: Outcome<Result>) => Promise<void> {
  const countedIn = new Map<string, string>();
  return async (outcome: Outcome<Result>): Promise<void> => {
    let settled = outcome;
    if (outcome.ok) {
      const earlier = outcome.value.spendKeys.filter((key) => countedIn.has(callDigest(key)));
      if (earlier.length > 0) {
        const billedIn = Object.fromEntries(earlier.map((key) => [key, countedIn.get(callDigest(key))!]));
        try {
          settled = { path: outcome.path, ok: true, value: await again(outcome.path, billedIn) };
        } catch (error) {
          settled = { path: outcome.path, ok: false, error: describeError(error) };
        }
      }
      if (settled.ok) for (const key of settled.value.spendKeys) countedIn.set(callDigest(key), settled.path);
    }
    await emit(settled);
  };
}
