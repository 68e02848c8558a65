/**
 * Thrash detection: a policy under which the context is back at the trigger within a few turns
 * of a compaction compacts in a loop, paying a summary and a cache rewrite each time (one of
 * the most reported agent bugs). Pure; reads a replay result.
 */
import { shouldCompact } from '../compaction/policy.js';
import type { ReplayResult } from './replay.js';

/** Refilled in the compaction's own turn or the next two: thrash. */
export const THRASH_TURNS = 2;

export interface Refill {
  readonly turn: number;
  /** Turns from the compaction until a call's prompt reached the trigger again; null if it never did. */
  readonly turns: number | null;
}

export interface ThrashReport {
  readonly detected: boolean;
  readonly refills: readonly Refill[];
  /** The quickest refill, in turns; null when no compaction was followed by one. */
  readonly fastest: number | null;
}

export function detectThrash(result: ReplayResult): ThrashReport {
  const policy = { ...result.policy.compaction, force: false };
  const events = result.turns.flatMap((turn) => turn.compactions);
  const refills = events.map((event): Refill => {
    const next = result.calls.slice(event.callPosition).find((call) => shouldCompact(call.after, policy));
    return { turn: event.turn, turns: next ? next.turn - event.turn : null };
  });
  const measured = refills.flatMap((refill) => (refill.turns === null ? [] : [refill.turns]));
  const fastest = measured.length > 0 ? Math.min(...measured) : null;
  return { detected: fastest !== null && fastest <= THRASH_TURNS, refills, fastest };
}
