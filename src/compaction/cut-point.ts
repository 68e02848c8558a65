/**
 * Where to cut a session: the index of the first message kept verbatim. Pure.
 *
 * Rules: walk back from the newest message adding token estimates until
 * keep_recent_tokens is reached; cut there if that message is a valid cut point, else keep
 * walking back. Valid: user messages that start a turn, and assistant messages without tool
 * requests. Never a tool result (it must stay with its request) nor an assistant message with
 * tool requests. Then split-turn detection and the `force` fallback. Two rules of our own:
 * a cut must summarize enough to bring the context under the trigger when asked (else a later
 * valid cut, or none), and `force` takes the earliest valid cut, so a larger keep budget never
 * keeps fewer messages. What the trigger is and how much is needed are the callers' (policy.ts).
 */
import type { AnyMessage } from '../session/model.js';
import { isToolResultMessage, isTurnStart } from '../session/model.js';
import type { SpanSums } from '../tokens/range-sums.js';
import { scannedSums } from '../tokens/range-sums.js';
import type { CutSiteIndex, CutSites } from './cut-sites.js';
import { scannedCutSites } from './cut-sites.js';
import type { CutRule } from './policy.js';
import { FORCE_KEEP_MESSAGES, MIN_TURN_PREFIX_MESSAGES } from './policy.js';

export interface CutRange {
  /** First message that may be summarized: 0, or the first kept message of a previous compaction. */
  readonly start: number;
  /** End of the messages considered (exclusive); the session length unless replaying a prefix. */
  readonly end: number;
  /**
   * True when `start` is where a compaction of ours cut, rather than where the context window
   * begins (0, or the agent's own last compaction): force then takes only the budget's cut.
   * Default: any start > 0.
   */
  readonly afterCompaction?: boolean;
}

export type CutPoint =
  | {
      readonly kind: 'cut';
      /** First kept message. Messages [start, index) are summarized. */
      readonly index: number;
      /**
       * Set when the cut falls inside a turn whose already-compacted prefix is at least
       * MIN_TURN_PREFIX_MESSAGES long: [turnStart, index) gets a summary of its own.
       */
      readonly splitTurnStart: number | null;
      /**
       * True when `force` chose the cut because the keep budget gave none: everything fit in it, or
       * no valid cut came before it. It is then the earliest cut there is (the most kept).
       */
      readonly forced: boolean;
      /**
       * True when the keep budget's cut summarized too little to bring the context under the
       * trigger, and a later cut was taken (CutOptions.minSummarizedTokens).
       */
      readonly pastKeepBudget: boolean;
      readonly tokensToSummarize: number;
      readonly tokensKept: number;
    }
  | {
      readonly kind: 'none';
      /**
       * `fits`: the keep budget already holds everything since the start; `at-previous-cut`: the
       * rules would cut exactly where the previous compaction did (nothing new to summarize);
       * `no-valid-cut`: every candidate was invalid; `cannot-get-under`: no valid cut summarizes
       * the tokens needed to bring the context under the trigger.
       */
      readonly reason: NoCutReason;
    };

export type NoCutReason = 'fits' | 'at-previous-cut' | 'no-valid-cut' | 'cannot-get-under';

export interface CutOptions {
  readonly keepRecentTokens: number;
  /**
   * When the keep budget gives no cut, take the earliest valid one, or the "all but the last 2
   * messages" fallback when that keeps more (the only one when no cut is valid). So a larger budget
   * never keeps fewer messages than a smaller one. Not after a compaction of ours (CutRange).
   */
  readonly force?: boolean;
  /**
   * Force after a compaction of ours too. Overflow recovery needs this; a repeated `compact
   * --force` must not, or running it twice would compact twice.
   */
  readonly forcePastPreviousCut?: boolean;
  readonly cutRule?: CutRule;
  /**
   * Tokens the summarized span must hold at least: what a compaction over the trigger has to take
   * off to get under it (policy.ts tokensOverTrigger). When the keep budget's cut summarizes less,
   * the earliest valid cut that summarizes enough is taken instead; with none, there is no cut
   * (`cannot-get-under`). 0 (the default): the keep budget alone decides.
   */
  readonly minSummarizedTokens?: number;
}

/**
 * Finds the cut for a keep budget over messages [range.start, range.end). `tokens`: each message's
 * estimate, or sums over them (RangeSums); `index`: the session's cut sites. Both are for a caller
 * that cuts the same session many times (replay); without them each search scans its span. Token
 * counts are never negative: the span a cut summarizes only grows as the cut moves later.
 */
export function findCutPoint(
  messages: readonly AnyMessage[],
  tokens: readonly number[] | SpanSums,
  options: CutOptions,
  range: CutRange = { start: 0, end: messages.length },
  index?: CutSiteIndex,
): CutPoint {
  const { start, end } = range;
  const { keepRecentTokens, force = false, forcePastPreviousCut = false, cutRule = 'conservative' } = options;
  const needed = Math.max(0, options.minSummarizedTokens ?? 0);
  const sites = index?.forRule(cutRule) ?? scannedCutSites(messages, cutRule);
  const sums = isCounts(tokens) ? scannedSums(tokens) : tokens;
  const describe = (cut: number, how: { forced?: boolean; pastKeepBudget?: boolean }) =>
    describeCut(messages, sums, start, end, cut, how.forced ?? false, how.pastKeepBudget ?? false);
  const walked = walkBack(sums, sites, keepRecentTokens, start, end);
  if (typeof walked === 'number' && sums.sum(start, walked) >= needed) return describe(walked, {});
  // After a compaction of ours force takes only the budget's cut, or a second `compact --force`
  // would summarize a little more each time it ran.
  const afterCompaction = range.afterCompaction ?? start > 0;
  const forcing = force && typeof walked !== 'number' && (!afterCompaction || forcePastPreviousCut);
  // Over the trigger, a cut later than the budget's is what gets under it; under force, the
  // earliest cut there is. Both search forward from the start (the walk found no valid cut
  // between the start and the budget, or one that summarizes too little).
  if (needed === 0 && !forcing) return { kind: 'none', reason: walked as NoCutReason };
  const later = earliestValidCut(sums, sites, start, end, needed);
  const last = forcing ? forcedCut(messages, sites, start, end) : undefined;
  const lastFits = last !== undefined && sums.sum(start, last) >= needed;
  // The last-messages fallback when it keeps more than the earliest valid cut (or there is none).
  if (lastFits && (later === undefined || last < later)) return describe(last, { forced: true });
  if (later !== undefined) return describe(later, forcing ? { forced: true } : { pastKeepBudget: true });
  if (needed === 0) return { kind: 'none', reason: walked as NoCutReason };
  const anyCut = last !== undefined || sites.earliest(start + 1, end) >= 0;
  return { kind: 'none', reason: anyCut ? 'cannot-get-under' : 'no-valid-cut' };
}

const isCounts = (tokens: readonly number[] | SpanSums): tokens is readonly number[] => Array.isArray(tokens);

/** The earliest valid cut in (start, end) whose span [start, cut) holds at least `needed` tokens. */
function earliestValidCut(sums: SpanSums, sites: CutSites, start: number, end: number, needed: number): number | undefined {
  const cut = sites.earliest(sums.reachForward(start, end, needed), end);
  return cut >= 0 ? cut : undefined;
}

/** The rule-based walk. Returns the cut index, or why there is none. */
function walkBack(sums: SpanSums, sites: CutSites, keep: number, start: number, end: number): number | NoCutReason {
  // The budget is reached at i: keep i and everything after, moving back to a valid cut.
  const reached = sums.reachBack(start, end, keep);
  if (reached < start) return 'fits';
  const cut = sites.latest(start, reached);
  if (cut >= 0) return cut;
  if (reached === start) return 'fits';
  return start > 0 && sites.point(start) ? 'at-previous-cut' : 'no-valid-cut';
}

/**
 * The force fallback: all but the last 2 messages. We move back past tool results so the
 * forced cut still never separates a tool call from its result (a departure the README notes).
 */
function forcedCut(messages: readonly AnyMessage[], sites: CutSites, start: number, end: number): number | undefined {
  let index = end - FORCE_KEEP_MESSAGES;
  while (index > start && (isToolResultMessage(messages[index]!) || sites.inside(index))) index--;
  return index > start ? index : undefined;
}

function describeCut(
  messages: readonly AnyMessage[],
  sums: SpanSums,
  start: number,
  end: number,
  index: number,
  forced: boolean,
  pastKeepBudget: boolean,
): CutPoint {
  return {
    kind: 'cut',
    index,
    splitTurnStart: splitTurnStart(messages, start, index),
    forced,
    pastKeepBudget,
    tokensToSummarize: sums.sum(start, index),
    tokensKept: sums.sum(index, end),
  };
}
/**
 * The split-turn rule: a cut that does not land on a turn start splits that turn. When the part of the
 * turn being summarized is long enough, it gets its own summary.
 */
export function splitTurnStart(messages: readonly AnyMessage[], start: number, cut: number): number | null {
  if (isTurnStart(messages[cut]!)) return null;
  let turnStart = cut - 1;
  while (turnStart >= start && !isTurnStart(messages[turnStart]!)) turnStart--;
  if (turnStart < start) return null; // the turn began before this span: nothing to split off
  return cut - turnStart >= MIN_TURN_PREFIX_MESSAGES ? turnStart : null;
}
