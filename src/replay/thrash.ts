/**
 * Thrash detection: a policy under which the context is back at the trigger within a few turns
 * of a compaction compacts in a loop, paying a summary and a cache rewrite each time (one of
 * the most reported agent bugs). Pure; reads a replay result.
 */
import type { CompactionPolicy } from '../compaction/policy.js';
import { shouldCompact } from '../compaction/policy.js';
import type { ReplayReport, SimulatedCall } from './simulate.js';

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

/** The first call from `position` on whose prompt is at the trigger (searched in place: copying the calls after every compaction made this quadratic). */
function nextAtTrigger(calls: readonly SimulatedCall[], position: number, policy: CompactionPolicy): SimulatedCall | undefined {
  for (let k = position; k < calls.length; k++) if (shouldCompact(calls[k]!.after, policy)) return calls[k];
  return undefined;
}

export function detectThrash(result: ReplayReport): ThrashReport {
  const policy = { ...result.policy.compaction, force: false };
  // Turn by turn: a turn's compactions are made as they are read (ReplayColumns.report).
  const refills: Refill[] = [];
  for (const turn of result.turns) {
    for (const event of turn.compactions) {
      const next = nextAtTrigger(result.calls, event.callPosition, policy);
      refills.push({ turn: event.turn, turns: next ? next.turn - event.turn : null });
    }
  }
  const measured = refills.flatMap((refill) => (refill.turns === null ? [] : [refill.turns]));
  // Not Math.min(...measured): a long session has more compactions than a call takes arguments.
  const fastest = measured.length > 0 ? measured.reduce((low, turns) => Math.min(low, turns)) : null;
  return { detected: fastest !== null && fastest <= THRASH_TURNS, refills, fastest };
}
