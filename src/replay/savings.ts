/**
 * What a replayed policy costs and saves, naively (every prompt token at the input price) and
 * cache-aware (src/replay/cache.ts), with each compaction's break-even. Pure.
 *
 * The summarizer's calls are charged to "after": naively, input at the input price; cache-aware,
 * a summarizer sent the conversation itself reads it from the cache, one sent the span as text
 * pays the input price (see ReplayPolicy.summarizerInput). Output at the output price.
 * Break-even of a compaction: how many calls after it (up to the next compaction) it takes for the cache-aware savings of those calls, against the same calls without that
 * compaction, to cover its summarizer call. The cache write the compaction forces is part of
 * those savings (the first call after it reads only the stable prefix), so it can be negative.
 */
import type { Rates } from '../pricing/catalog.js';
import type { CacheLifetime, PromptStep } from './cache.js';
import { cachedCall, readAndWrite } from './cache.js';
import type { CostSplit } from '../cost/billing.js';
import { callCost, CostSum, naiveTokens, sumCosts, ZERO_COST } from '../cost/billing.js';
import type { ReplayEvent, ReplayReport, SimulatedCall } from './simulate.js';

export interface BreakEven {
  readonly callPosition: number;
  readonly turn: number;
  /** The summarizer call's cost, which the savings must cover. */
  readonly costUsd: number;
  /** Calls (from the first one after the compaction) until covered; null if never covered before the next compaction or the end. */
  readonly calls: number | null;
}

export interface CostPair {
  readonly naive: CostSplit;
  readonly cached: CostSplit;
}

export interface PolicyCosts {
  readonly before: CostPair;
  /** Including the summarizer calls. */
  readonly after: CostPair;
  /** The summarizer calls alone, cache-aware (naive, they are all input at the input price). */
  readonly summarizer: CostSplit;
  readonly savedNaiveUsd: number;
  readonly savedCachedUsd: number;
  readonly breakEven: readonly BreakEven[];
}

/**
 * The calls' costs on one side, cache-aware and naive, summed as they are priced: on a long
 * session the steps, their billed tokens and their costs as lists (97,514 calls, each list of
 * objects) were most of what replay held once its messages were garbage (docs/performance.md).
 * `cachedTotals`, when given, gets each call's cache-aware total, which break-even reads again.
 */
function costPair(
  calls: readonly SimulatedCall[],
  expired: readonly boolean[],
  side: 'before' | 'after',
  stablePrefix: number,
  rates: Rates,
  lifetime: CacheLifetime,
  cachedTotals?: Float64Array,
): CostPair {
  const naive = new CostSum();
  const cached = new CostSum();
  let previousPrompt: number | null = null;
  calls.forEach((call, position) => {
    const previous = calls[position - 1];
    const prompt = call[side];
    // The recorded session: a prompt that shrank was rewritten by the agent itself.
    const shrank = side === 'before' && previous !== undefined && prompt < previous.before;
    const step: PromptStep = {
      prompt,
      output: call.output,
      unchanged: side === 'after' ? call.unchanged : shrank ? stablePrefix : null,
      expired: expired[position] ?? false,
    };
    const cost = callCost(cachedCall(step, previousPrompt, lifetime), rates);
    previousPrompt = prompt;
    if (cachedTotals) cachedTotals[position] = cost.total;
    cached.add(cost);
    naive.add(callCost(naiveTokens(prompt, call.output), rates));
  });
  return { naive: naive.split(), cached: cached.split() };
}

/** Cache-aware: a summarizer sent the conversation reads it from the cache; one sent text pays full input. */
function summarizerCost(event: Pick<ReplayEvent, 'summarizer'>, rates: Rates, cacheAware: boolean): CostSplit {
  if (!event.summarizer) return ZERO_COST;
  const { input, output, cached } = event.summarizer;
  if (cacheAware && cached) return callCost({ input: 0, cacheRead: input, cacheWrite: 0, output }, rates);
  return callCost(naiveTokens(input, output), rates);
}

/** The same calls without this compaction: every prompt longer by what it removed, and no rewrite at it. */
function breakEven(
  event: ReplayEvent,
  windowEnd: number,
  result: ReplayReport,
  expired: readonly boolean[],
  withCosts: Float64Array,
  rates: Rates,
  lifetime: CacheLifetime,
): BreakEven {
  const cost = summarizerCost(event, rates, true).total;
  const removed = event.tokensBefore - event.tokensAfter;
  let saved = 0;
  for (let k = event.callPosition; k < windowEnd; k++) {
    const call = result.calls[k]!;
    const previous = result.calls[k - 1];
    const prompt = call.after + removed;
    const previousPrompt = previous ? previous.after + (k > event.callPosition ? removed : 0) : 0;
    const read = expired[k] ? 0 : Math.min(previousPrompt, prompt);
    const without = callCost(readAndWrite(read, prompt, call.output, lifetime), rates);
    saved += without.total - withCosts[k]!;
    if (saved >= cost) return { callPosition: event.callPosition, turn: event.turn, costUsd: cost, calls: k - event.callPosition + 1 };
  }
  return { callPosition: event.callPosition, turn: event.turn, costUsd: cost, calls: null };
}

/** `lifetime`: the session's cache lifetime (cacheLifetime), which also prices the writes. */
export function policyCosts(result: ReplayReport, rates: Rates, expired: readonly boolean[], lifetime: CacheLifetime = '5m'): PolicyCosts {
  const before = costPair(result.calls, expired, 'before', result.stablePrefix, rates, lifetime);
  const cachedPerCall = new Float64Array(result.calls.length);
  const afterCalls = costPair(result.calls, expired, 'after', result.stablePrefix, rates, lifetime, cachedPerCall);
  // A refused compaction (custom's guards) saves nothing, but its summarizer calls were paid:
  // every compaction's call, then every refusal's, in the order the lists had them.
  const summarizerNaive = new CostSum();
  const summarizer = new CostSum();
  const paid = (event: Pick<ReplayEvent, 'summarizer'>) => {
    summarizerNaive.add(summarizerCost(event, rates, false));
    summarizer.add(summarizerCost(event, rates, true));
  };
  // Each compaction's break-even window ends at the next one's call. One walk, turn by turn: a
  // turn's compactions are made each time they are read (ReplayColumns.report), never all at once.
  const breakEvens: BreakEven[] = [];
  let open: ReplayEvent | null = null;
  const close = (windowEnd: number) => {
    if (open) breakEvens.push(breakEven(open, windowEnd, result, expired, cachedPerCall, rates, lifetime));
  };
  for (const turn of result.turns) {
    for (const event of turn.compactions) {
      paid(event);
      close(event.callPosition);
      open = event;
    }
  }
  close(result.calls.length);
  for (const turn of result.turns) turn.refusals.forEach(paid);
  const after = {
    naive: sumCosts([afterCalls.naive, summarizerNaive.split()]),
    cached: sumCosts([afterCalls.cached, summarizer.split()]),
  };
  return {
    before,
    after,
    summarizer: summarizer.split(),
    savedNaiveUsd: before.naive.total - after.naive.total,
    savedCachedUsd: before.cached.total - after.cached.total,
    breakEven: breakEvens,
  };
}
