/**
 * The what-if across an archive: every policy's replays of many sessions added up, with the
 * sessions that save most. Pure, and a function of the per-session `replay --json` records alone
 * (the fields `RollupInput` names), so records saved from a run give the roll-up that run
 * printed, byte for byte: sums are taken in the records' order, and a number read back from JSON
 * is the number written. Memory is bounded: per policy a fixed set of sums and the top
 * TOP_SESSIONS sessions, and one sum per day.
 */

/** Sessions listed per policy as saving most. */
export const TOP_SESSIONS = 10;

/** One day's bill in a per-session record (`spend_by_day[]`). */
export interface DaySpendInput {
  readonly day: string | null;
  readonly cost_usd: number;
}

/** What the roll-up reads of one policy of a per-session record (`policies[]`). */
export interface PolicyInput {
  readonly name: string;
  readonly totals: {
    readonly compactions: number;
    readonly prunes: number;
    readonly no_gain: number;
    readonly would_thrash: number;
    readonly input_tokens_before: number;
    readonly input_tokens_after: number;
    readonly summarizer_input_tokens: number;
    readonly summarizer_output_tokens: number;
  };
  readonly costs: { readonly cost_usd: number; readonly summarizer: { readonly total_usd: number } } | null;
  readonly savings: { readonly naive_usd: number; readonly cache_aware_usd: number } | null;
  readonly thrash: { readonly detected: boolean };
}

/** What the roll-up reads of one session's `replay --json` record. */
export interface RollupInput {
  readonly session: string;
  readonly requests: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** The recorded figure, the bill; null when a billed call has no price. */
  readonly cost: { readonly total_usd: number } | null;
  /** The bill's priced calls: what the roll-up adds, as inspect's roll-up does. */
  readonly cost_priced_usd: number;
  readonly unpriced_requests: number;
  /** The estimate for calls with no usage, apart from the bill; null without a price for them. */
  readonly cost_estimated_usd: number | null;
  readonly spend_by_day: readonly DaySpendInput[];
  readonly policies: readonly PolicyInput[];
}

/** Only the fields the roll-up reads, copied out of a whole record (whose turns a run does not keep). */
export function rollupInput(record: RollupInput): RollupInput {
  return {
    session: record.session,
    requests: record.requests,
    input_tokens: record.input_tokens,
    output_tokens: record.output_tokens,
    cost: record.cost && { total_usd: record.cost.total_usd },
    cost_priced_usd: record.cost_priced_usd,
    unpriced_requests: record.unpriced_requests,
    cost_estimated_usd: record.cost_estimated_usd,
    spend_by_day: record.spend_by_day.map(({ day, cost_usd }) => ({ day, cost_usd })),
    policies: record.policies.map((policy) => ({
      name: policy.name,
      totals: {
        compactions: policy.totals.compactions,
        prunes: policy.totals.prunes,
        no_gain: policy.totals.no_gain,
        would_thrash: policy.totals.would_thrash,
        input_tokens_before: policy.totals.input_tokens_before,
        input_tokens_after: policy.totals.input_tokens_after,
        summarizer_input_tokens: policy.totals.summarizer_input_tokens,
        summarizer_output_tokens: policy.totals.summarizer_output_tokens,
      },
      costs: policy.costs && { cost_usd: policy.costs.cost_usd, summarizer: { total_usd: policy.costs.summarizer.total_usd } },
      savings: policy.savings && { naive_usd: policy.savings.naive_usd, cache_aware_usd: policy.savings.cache_aware_usd },
      thrash: { detected: policy.thrash.detected },
    })),
  };
}

/** A session among those a policy saves most in. */
export interface TopSession {
  readonly session: string;
  /** Null without prices (then ranked by tokens, after every priced one). */
  readonly savedCacheAwareUsd: number | null;
  readonly savedNaiveUsd: number | null;
  readonly inputTokensSaved: number;
  readonly compactions: number;
  readonly prunes: number;
}

/** One policy across the sessions replayed under it. */
export interface PolicyRollup {
  readonly name: string;
  readonly sessions: number;
  /** Sessions in which the policy compacted at least once. */
  readonly compactingSessions: number;
  readonly compactions: number;
  readonly prunes: number;
  readonly noGain: number;
  readonly wouldThrash: number;
  readonly thrashingSessions: number;
  readonly inputTokensBefore: number;
  readonly inputTokensAfter: number;
  readonly summarizerInputTokens: number;
  readonly summarizerOutputTokens: number;
  /** Sessions with prices: the dollar sums below are theirs. */
  readonly pricedSessions: number;
  readonly costUsd: number;
  readonly savedCacheAwareUsd: number;
  readonly savedNaiveUsd: number;
  readonly summarizerUsd: number;
  /** Most saved first; only sessions in which the policy compacted or pruned. */
  readonly topSessions: readonly TopSession[];
}

export interface DaySpend {
  /** UTC day; null for calls of sessions with no timestamp. */
  readonly day: string | null;
  readonly sessions: number;
  readonly costUsd: number;
}

export interface ReplayRollup {
  readonly sessions: number;
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Sessions whose every billed call has a price. */
  readonly pricedSessions: number;
  /**
   * The sessions' bills added up, of their priced calls (inspect's roll-up `total.cost`), and the
   * billed calls left out for want of a price.
   */
  readonly costUsd: number;
  readonly unpricedRequests: number;
  /** The estimate for calls with no usage, apart from the bills (of the calls with a price). */
  readonly costEstimatedUsd: number;
  /** The bill by day, earliest first, undated last. */
  readonly spendByDay: readonly DaySpend[];
  /** In the order first met (the order of `--policy`). */
  readonly policies: readonly PolicyRollup[];
}

/** UTC days in order, earliest first, undated (null) last. */
export function byDay(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** Does `a` save more than `b`? Dollars first (priced before unpriced), then tokens; ties keep the earlier. */
function savesMore(a: TopSession, b: TopSession): boolean {
  const dollars = (entry: TopSession) => entry.savedCacheAwareUsd ?? -Infinity;
  if (dollars(a) !== dollars(b)) return dollars(a) > dollars(b);
  return a.inputTokensSaved > b.inputTokensSaved;
}

/** One policy's sums, and its top sessions as a short sorted list. */
class PolicySum {
  private sessions = 0;
  private compactingSessions = 0;
  private compactions = 0;
  private prunes = 0;
  private noGain = 0;
  private wouldThrash = 0;
  private thrashingSessions = 0;
  private inputTokensBefore = 0;
  private inputTokensAfter = 0;
  private summarizerInputTokens = 0;
  private summarizerOutputTokens = 0;
  private pricedSessions = 0;
  private costUsd = 0;
  private savedCacheAwareUsd = 0;
  private savedNaiveUsd = 0;
  private summarizerUsd = 0;
  private readonly top: TopSession[] = [];

  constructor(private readonly name: string) {}

  add(session: string, policy: PolicyInput): void {
    const { totals, costs, savings } = policy;
    this.sessions++;
    if (totals.compactions > 0) this.compactingSessions++;
    this.compactions += totals.compactions;
    this.prunes += totals.prunes;
    this.noGain += totals.no_gain;
    this.wouldThrash += totals.would_thrash;
    if (policy.thrash.detected) this.thrashingSessions++;
    this.inputTokensBefore += totals.input_tokens_before;
    this.inputTokensAfter += totals.input_tokens_after;
    this.summarizerInputTokens += totals.summarizer_input_tokens;
    this.summarizerOutputTokens += totals.summarizer_output_tokens;
    if (costs && savings) {
      this.pricedSessions++;
      this.costUsd += costs.cost_usd;
      this.savedCacheAwareUsd += savings.cache_aware_usd;
      this.savedNaiveUsd += savings.naive_usd;
      this.summarizerUsd += costs.summarizer.total_usd;
    }
    if (totals.compactions + totals.prunes > 0) {
      this.offer({
        session,
        savedCacheAwareUsd: savings?.cache_aware_usd ?? null,
        savedNaiveUsd: savings?.naive_usd ?? null,
        inputTokensSaved: totals.input_tokens_before - totals.input_tokens_after,
        compactions: totals.compactions,
        prunes: totals.prunes,
      });
    }
  }

  /** Inserts the entry where it ranks, keeping at most TOP_SESSIONS. */
  private offer(entry: TopSession): void {
    let at = this.top.length;
    while (at > 0 && savesMore(entry, this.top[at - 1]!)) at--;
    if (at >= TOP_SESSIONS) return;
    this.top.splice(at, 0, entry);
    if (this.top.length > TOP_SESSIONS) this.top.pop();
  }

  rollup(): PolicyRollup {
    const { name, sessions, compactingSessions, compactions, prunes, noGain, wouldThrash, thrashingSessions } = this;
    const { inputTokensBefore, inputTokensAfter, summarizerInputTokens, summarizerOutputTokens } = this;
    const { pricedSessions, costUsd, savedCacheAwareUsd, savedNaiveUsd, summarizerUsd } = this;
    return {
      name,
      sessions,
      compactingSessions,
      compactions,
      prunes,
      noGain,
      wouldThrash,
      thrashingSessions,
      inputTokensBefore,
      inputTokensAfter,
      summarizerInputTokens,
      summarizerOutputTokens,
      pricedSessions,
      costUsd,
      savedCacheAwareUsd,
      savedNaiveUsd,
      summarizerUsd,
      topSessions: [...this.top],
    };
  }
}

/** The roll-up, one record at a time, in the order the records were printed. */
export class ReplayRollupSum {
  private sessions = 0;
  private requests = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private pricedSessions = 0;
  private costUsd = 0;
  private unpricedRequests = 0;
  private costEstimatedUsd = 0;
  private readonly days = new Map<string | null, { sessions: number; costUsd: number }>();
  private readonly policies = new Map<string, PolicySum>();

  add(record: RollupInput): void {
    this.sessions++;
    this.requests += record.requests;
    this.inputTokens += record.input_tokens;
    this.outputTokens += record.output_tokens;
    if (record.cost) this.pricedSessions++;
    this.costUsd += record.cost_priced_usd;
    this.unpricedRequests += record.unpriced_requests;
    this.costEstimatedUsd += record.cost_estimated_usd ?? 0;
    for (const { day, cost_usd } of record.spend_by_day) {
      const sum = this.days.get(day) ?? this.days.set(day, { sessions: 0, costUsd: 0 }).get(day)!;
      sum.sessions++;
      sum.costUsd += cost_usd;
    }
    for (const policy of record.policies) {
      const sum = this.policies.get(policy.name) ?? this.policies.set(policy.name, new PolicySum(policy.name)).get(policy.name)!;
      sum.add(record.session, policy);
    }
  }

  rollup(): ReplayRollup {
    const spendByDay = [...this.days]
      .map(([day, sum]) => ({ day, sessions: sum.sessions, costUsd: sum.costUsd }))
      .sort((a, b) => byDay(a.day, b.day));
    return {
      sessions: this.sessions,
      requests: this.requests,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      pricedSessions: this.pricedSessions,
      costUsd: this.costUsd,
      unpricedRequests: this.unpricedRequests,
      costEstimatedUsd: this.costEstimatedUsd,
      spendByDay,
      policies: [...this.policies.values()].map((sum) => sum.rollup()),
    };
  }
}

/** The roll-up of the records, in their order. */
export function replayRollup(records: Iterable<RollupInput>): ReplayRollup {
  const sum = new ReplayRollupSum();
  for (const record of records) sum.add(record);
  return sum.rollup();
}
