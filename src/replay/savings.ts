/**
 * What a replayed policy costs and saves. Pure.
 *
 * The session as recorded costs what it billed: its spend ledger's cost, from its own usage, the
 * figure `inspect` prints as `spend` (calls another session of the run was billed for are not in
 * it: pipeline/billed-once.ts). Calls the file reports no usage for are in no bill: their cost
 * under the cache model is an estimate, shown apart. A policy's cost is the bill (with that
 * estimate) minus what the simulation says the policy changes: the recorded calls and the
 * policy's calls both priced under one cache model (cache.ts), `simulated before − simulated
 * after`. A policy that never compacts or prunes sends the same prompts, so both sides are the
 * same sums, it saves exactly 0 and costs exactly the bill (and the estimate, if any). The naive
 * figures price every prompt token at the input price (no prompt cache) on both sides.
 *
 * Only the calls this session paid for (or would have: no usage reported) count; a fork's copies
 * of calls another session was billed for (`copied`) are in neither the bill nor the savings.
 *
 * The summarizer's calls are charged to "after": naively, input at the input price; cache-aware,
 * a summarizer sent the conversation itself reads it from the cache, one sent the span as text
 * pays the input price (see ReplayPolicy.summarizerInput). Output at the output price.
 * Break-even of a compaction: how many calls after it (up to the next compaction) it takes for
 * the cache-aware savings of those calls, against the same calls without that compaction, to
 * cover its summarizer call. The cache write the compaction forces is part of those savings (the
 * first call after it reads only the stable prefix), so it can be negative.
 */
import type { Rates } from '../pricing/catalog.js';
import type { BilledTokens, CostSplit } from '../cost/billing.js';
import { addCost, callCost, CostSum, naiveTokens, ZERO_COST } from '../cost/billing.js';
import type { AnyMessage } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import type { CacheLifetime } from './cache.js';
import { cacheExpiry, cacheLifetime, cachedCall } from './cache.js';
import type { ReplayEvent, ReplayReport, ReplayRefusal, SimulatedCall } from './simulate.js';

/**
 * How the session's bill holds a context call: with its own usage (`billed`), not at all because
 * the file reports no usage for it (`estimated`), or not at all because another session was
 * billed for it (`copied`, a fork's copy).
 */
export type CallBilling = 'billed' | 'estimated' | 'copied';

/** What the cost model reads of the session's recorded calls, one entry a call, in replay order. */
export interface RecordedCalls {
  /** Whether the cache had expired since the previous call (cacheExpiry). */
  readonly expired: readonly boolean[];
  readonly billing: readonly CallBilling[];
  /** The session's cache lifetime (cacheLifetime), which also prices the writes. */
  readonly lifetime: CacheLifetime;
}

/** The session's provider calls (providerCalls) as the cost model reads them. */
export function recordedCalls(messages: readonly AnyMessage[], calls: readonly ProviderCall[]): RecordedCalls {
  const lifetime = cacheLifetime(calls);
  // As ledgers.ts tells them apart: no usage reported, else a copy another session was billed for.
  const billing = calls.map((call): CallBilling => (call.estimated ? 'estimated' : messages[call.index]?.copiedFrom !== undefined ? 'copied' : 'billed'));
  return { expired: cacheExpiry(messages, calls, lifetime), billing, lifetime };
}

export interface BreakEven {
  readonly callPosition: number;
  readonly turn: number;
  /** The summarizer call's cost, which the savings must cover. */
  readonly costUsd: number;
  /** Calls (from the first one after the compaction) until covered; null if never covered before the next compaction or the end. */
  readonly calls: number | null;
}

/** The same calls priced two ways: naive (no prompt cache) and under the cache model. */
export interface CostPair {
  readonly naive: CostSplit;
  readonly cached: CostSplit;
}

/** The session as recorded, as the what-if prices it. */
export interface RecordedCost {
  /**
   * What the session billed, of the calls that have a price: its spend ledger's `pricedCost` (a
   * call to a model without one is in no figure: `Ledger.unpricedRequests`).
   */
  readonly billed: CostSplit;
  /** The cache model's cost of the calls with no usage, apart from the bill (ZERO_COST when every call reports it). */
  readonly estimated: CostSplit;
  readonly estimatedCalls: number;
  /** What a policy's cost starts from: `billed`, plus `estimated` when there are such calls. */
  readonly startUsd: number;
  /** The recorded calls the bill holds (or estimates), simulated: every policy's "before". */
  readonly simulated: CostPair;
}

export interface PolicyCosts {
  /** The recorded calls the bill holds, simulated (RecordedCost.simulated). */
  readonly before: CostPair;
  /** The same calls as the policy sends them, simulated, and the summarizer calls. */
  readonly after: CostPair;
  /** The summarizer calls alone, cache-aware (naive, they are all input at the input price). */
  readonly summarizer: CostSplit;
  /** before − after, naive and cache-aware. */
  readonly savedNaiveUsd: number;
  readonly savedCachedUsd: number;
  /** What the session would have cost: RecordedCost.startUsd − savedCachedUsd. */
  readonly costUsd: number;
  readonly breakEven: readonly BreakEven[];
}

/**
 * How the call at `position` is billed under the cache model, its prompt `prompt`, after a call
 * whose prompt was `previousPrompt` (null: the first call). A prompt the recorded session sent
 * smaller than the one before was rewritten by the agent itself (its compaction): that rewrite
 * happens under every policy too, so both sides read only the stable prefix there. `ours`: the
 * prompt tokens the policy's own rewrite left unchanged (null: none).
 */
function cachedStep(
  calls: readonly SimulatedCall[],
  position: number,
  prompt: number,
  ours: number | null,
  previousPrompt: number | null,
  stablePrefix: number,
  facts: RecordedCalls,
): BilledTokens {
  const call = calls[position]!;
  const previous = calls[position - 1];
  const agent = previous !== undefined && call.before < previous.before ? stablePrefix : null;
  const unchanged = agent === null ? ours : ours === null ? agent : Math.min(agent, ours);
  return cachedCall({ prompt, output: call.output, unchanged, expired: facts.expired[position] ?? false }, previousPrompt, facts.lifetime);
}

/** The calls' costs on one side, and the cache-aware cost of the estimated ones among them. */
interface SideCosts extends CostPair {
  readonly estimated: CostSplit;
}

/**
 * The calls' costs on one side, cache-aware and naive, summed as they are priced: on a long
 * session the steps, their billed tokens and their costs as lists (97,514 calls, each list of
 * objects) were most of what replay held once its messages were garbage (docs/performance.md).
 * `cachedTotals`, when given, gets each call's cache-aware total, which break-even reads again.
 */
function sideCosts(result: Pick<ReplayReport, 'calls' | 'stablePrefix'>, facts: RecordedCalls, side: 'before' | 'after', rates: Rates, cachedTotals?: Float64Array): SideCosts {
  const { calls, stablePrefix } = result;
  const naive = new CostSum();
  const cached = new CostSum();
  const estimated = new CostSum();
  let previousPrompt: number | null = null;
  calls.forEach((call, position) => {
    const prompt = call[side];
    const ours = side === 'after' ? call.unchanged : null;
    const cost = callCost(cachedStep(calls, position, prompt, ours, previousPrompt, stablePrefix, facts), rates);
    previousPrompt = prompt;
    if (cachedTotals) cachedTotals[position] = cost.total;
    const billing = facts.billing[position] ?? 'billed';
    if (billing === 'copied') return;
    if (billing === 'estimated') estimated.add(cost);
    cached.add(cost);
    naive.add(callCost(naiveTokens(prompt, call.output), rates));
  });
  return { naive: naive.split(), cached: cached.split(), estimated: estimated.split() };
}

/**
 * The session as recorded, priced for the what-if: `billed` is its spend ledger's cost (of the
 * priced calls), `rates` its model's. `result`: any of its replays (they share the recorded calls).
 */
export function recordedCost(result: Pick<ReplayReport, 'calls' | 'stablePrefix'>, rates: Rates, facts: RecordedCalls, billed: CostSplit): RecordedCost {
  const { naive, cached, estimated } = sideCosts(result, facts, 'before', rates);
  const estimatedCalls = facts.billing.reduce((count, billing) => count + (billing === 'estimated' ? 1 : 0), 0);
  return {
    billed,
    estimated,
    estimatedCalls,
    // Exactly the bill when every call reports usage (x + 0 would be x too, but say it).
    startUsd: estimatedCalls > 0 ? billed.total + estimated.total : billed.total,
    simulated: { naive, cached },
  };
}

/** Cache-aware: a summarizer sent the conversation reads it from the cache; one sent text pays full input. */
function summarizerCost(event: Pick<ReplayEvent, 'summarizer'>, rates: Rates, cacheAware: boolean): CostSplit {
  if (!event.summarizer) return ZERO_COST;
  const { input, output, cached } = event.summarizer;
  if (cacheAware && cached) return callCost({ input: 0, cacheRead: input, cacheWrite: 0, output }, rates);
  return callCost(naiveTokens(input, output), rates);
}

/** The same calls without this compaction: every prompt longer by what it removed, and no rewrite of ours (the agent's own stay). */
function breakEven(
  event: ReplayEvent,
  windowEnd: number,
  result: ReplayReport,
  facts: RecordedCalls,
  withCosts: Float64Array,
  rates: Rates,
): BreakEven {
  const cost = summarizerCost(event, rates, true).total;
  const removed = event.tokensBefore - event.tokensAfter;
  let saved = 0;
  for (let k = event.callPosition; k < windowEnd; k++) {
    const call = result.calls[k]!;
    const previous = result.calls[k - 1];
    const prompt = call.after + removed;
    const previousPrompt = previous ? previous.after + (k > event.callPosition ? removed : 0) : null;
    const without = callCost(cachedStep(result.calls, k, prompt, null, previousPrompt, result.stablePrefix, facts), rates);
    saved += without.total - withCosts[k]!;
    if (saved >= cost) return { callPosition: event.callPosition, turn: event.turn, costUsd: cost, calls: k - event.callPosition + 1 };
  }
  return { callPosition: event.callPosition, turn: event.turn, costUsd: cost, calls: null };
}

/**
 * The policy's replay priced against the session as recorded (`recorded`, from recordedCost on
 * the same session and facts).
 */
export function policyCosts(result: ReplayReport, rates: Rates, facts: RecordedCalls, recorded: RecordedCost): PolicyCosts {
  const before = recorded.simulated;
  const cachedPerCall = new Float64Array(result.calls.length);
  const afterCalls = sideCosts(result, facts, 'after', rates, cachedPerCall);
  // A summarizer call is paid where the call it comes before is: not for a fork's copied calls.
  // A refused compaction (custom's guards) saves nothing, but its summarizer calls were paid:
  // every compaction's call, then every refusal's, in the order the lists had them.
  const summarizerNaive = new CostSum();
  const summarizer = new CostSum();
  const paid = (event: Pick<ReplayEvent | ReplayRefusal, 'summarizer' | 'callPosition'>) => {
    if (facts.billing[event.callPosition] === 'copied') return;
    summarizerNaive.add(summarizerCost(event, rates, false));
    summarizer.add(summarizerCost(event, rates, true));
  };
  // Each compaction's break-even window ends at the next one's call. One walk, turn by turn: a
  // turn's compactions are made each time they are read (ReplayColumns.report), never all at once.
  const breakEvens: BreakEven[] = [];
  let open: ReplayEvent | null = null;
  const close = (windowEnd: number) => {
    if (open) breakEvens.push(breakEven(open, windowEnd, result, facts, cachedPerCall, rates));
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
    naive: addCost(afterCalls.naive, summarizerNaive.split()),
    cached: addCost(afterCalls.cached, summarizer.split()),
  };
  const savedCachedUsd = before.cached.total - after.cached.total;
  return {
    before,
    after,
    summarizer: summarizer.split(),
    savedNaiveUsd: before.naive.total - after.naive.total,
    savedCachedUsd,
    costUsd: recorded.startUsd - savedCachedUsd,
    breakEven: breakEvens,
  };
}
