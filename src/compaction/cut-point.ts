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
import { hasToolRequests, isToolResultMessage, isTurnStart } from '../session/model.js';
import { sum } from '../tokens/estimate.js';
import type { CutRule } from './policy.js';
import { FORCE_KEEP_MESSAGES, MIN_TURN_PREFIX_MESSAGES } from './policy.js';

/**
 * A mark a message: 1 where a cut would separate a tool call from its result, else 0. A byte
 * each, where a list of booleans took 8 (1.6 MB held through a long session's replay).
 */
export type PairMarks = Readonly<Uint8Array>;

/**
 * For each index c, whether cutting at c would separate a tool request before c from its
 * result at c or later. The rules below assume results follow their request at once; real
 * transcripts also interleave (Codex runs calls in parallel, a provider-side tool sits between),
 * so every cut is checked against the actual pairs. A result answers the latest earlier request
 * with its id; requests without a result (interrupted calls) constrain nothing.
 */
export function insideToolPairs(messages: readonly AnyMessage[]): PairMarks {
  const depth = new Int32Array(messages.length + 1);
  const open = new Map<string, number>();
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_request') open.set(block.id, index);
      if (block.type !== 'tool_result') continue;
      const request = open.get(block.tool_request_id);
      if (request === undefined || request === index) continue;
      open.delete(block.tool_request_id);
      // Cuts in (request, result] separate the pair.
      depth[request + 1]!++;
      depth[index + 1]!--;
    }
  });
  const inside = new Uint8Array(messages.length);
  let level = 0;
  for (let i = 0; i < messages.length; i++) {
    level += depth[i]!;
    inside[i] = level > 0 ? 1 : 0;
  }
  return inside;
}

export function isValidCutPoint(message: AnyMessage, rule: CutRule = 'conservative'): boolean {
  if (message.role === 'user') return !isToolResultMessage(message);
  if (message.role === 'assistant') return rule === 'tool-safe' || !hasToolRequests(message);
  return false;
}

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
 * Finds the cut for a keep budget over messages [range.start, range.end). `inside` is
 * insideToolPairs(messages), for a caller that cuts the same session many times (replay).
 */
export function findCutPoint(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  options: CutOptions,
  range: CutRange = { start: 0, end: messages.length },
  inside: PairMarks = insideToolPairs(messages),
): CutPoint {
  const { start, end } = range;
  const { keepRecentTokens, force = false, forcePastPreviousCut = false, cutRule = 'conservative' } = options;
  const needed = Math.max(0, options.minSummarizedTokens ?? 0);
  const describe = (index: number, how: { forced?: boolean; pastKeepBudget?: boolean }) =>
    describeCut(messages, tokens, start, end, index, how.forced ?? false, how.pastKeepBudget ?? false);
  const walked = walkBack(messages, tokens, keepRecentTokens, start, end, cutRule, inside);
  if (typeof walked === 'number' && sum(tokens, start, walked) >= needed) return describe(walked, {});
  // After a compaction of ours force takes only the budget's cut, or a second `compact --force`
  // would summarize a little more each time it ran.
  const afterCompaction = range.afterCompaction ?? start > 0;
  const forcing = force && typeof walked !== 'number' && (!afterCompaction || forcePastPreviousCut);
  // Over the trigger, a cut later than the budget's is what gets under it; under force, the
  // earliest cut there is. Both search forward from the start (the walk found no valid cut
  // between the start and the budget, or one that summarizes too little).
  if (needed === 0 && !forcing) return { kind: 'none', reason: walked as NoCutReason };
  const later = earliestValidCut(messages, tokens, start, end, cutRule, inside, needed);
  const last = forcing ? forcedCut(messages, start, end, inside) : undefined;
  const lastFits = last !== undefined && sum(tokens, start, last) >= needed;
  // The last-messages fallback when it keeps more than the earliest valid cut (or there is none).
  if (lastFits && (later === undefined || last < later)) return describe(last, { forced: true });
  if (later !== undefined) return describe(later, forcing ? { forced: true } : { pastKeepBudget: true });
  if (needed === 0) return { kind: 'none', reason: walked as NoCutReason };
  const anyCut = last !== undefined || hasValidCut(messages, start, end, cutRule, inside);
  return { kind: 'none', reason: anyCut ? 'cannot-get-under' : 'no-valid-cut' };
}

/** The earliest rule-valid cut in (start, end) whose span [start, cut) holds at least `needed` tokens. */
function earliestValidCut(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  start: number,
  end: number,
  rule: CutRule,
  inside: PairMarks,
  needed: number,
): number | undefined {
  let summarized = tokens[start] ?? 0;
  for (let j = start + 1; j < end; j++) {
    if (summarized >= needed && isValidCutPoint(messages[j]!, rule) && !inside[j]) return j;
    summarized += tokens[j] ?? 0;
  }
  return undefined;
}

function hasValidCut(messages: readonly AnyMessage[], start: number, end: number, rule: CutRule, inside: PairMarks): boolean {
  return earliestValidCut(messages, [], start, end, rule, inside, 0) !== undefined;
}
/** The rule-based walk. Returns the cut index, or why there is none. */
function walkBack(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  keep: number,
  start: number,
  end: number,
  rule: CutRule,
  inside: PairMarks,
): number | NoCutReason {
  let kept = 0;
  for (let i = end - 1; i >= start; i--) {
    kept += tokens[i] ?? 0;
    if (kept < keep) continue;
    // Budget reached at i: keep i and everything after, moving back to a valid cut.
    for (let j = i; j > start; j--) {
      if (isValidCutPoint(messages[j]!, rule) && !inside[j]) return j;
    }
    if (i === start) return 'fits';
    return start > 0 && isValidCutPoint(messages[start]!, rule) ? 'at-previous-cut' : 'no-valid-cut';
  }
  return 'fits';
}

/**
 * The force fallback: all but the last 2 messages. We move back past tool results so the
 * forced cut still never separates a tool call from its result (a departure the README notes).
 */
function forcedCut(messages: readonly AnyMessage[], start: number, end: number, inside: PairMarks): number | undefined {
  let index = end - FORCE_KEEP_MESSAGES;
  while (index > start && (isToolResultMessage(messages[index]!) || inside[index])) index--;
  return index > start ? index : undefined;
}

function describeCut(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
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
    tokensToSummarize: sum(tokens, start, index),
    tokensKept: sum(tokens, index, end),
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
