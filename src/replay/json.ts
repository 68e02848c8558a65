/**
 * replay's `--json` record for one policy: the policy's settings, each turn before and after with
 * its compactions, refusals and prunes, the totals, costs, savings, break-even, thrash and gate
 * breaches (README "replay --json" names each field). Pure; the command writes the line.
 */
import { breachJson } from '../gates/check.js';
import { policyJson } from '../config/policy.js';
import { recordedCompactionJson } from '../growth/recorded-report.js';
import type { ReplayPolicy } from './presets.js';
import type { ReplayReport } from './simulate.js';
import type { PolicyOutcome } from './text.js';
import { costJson } from '../cost/json.js';
import { JsonList } from '../report/json-pieces.js';
import type { SessionSpend } from '../ledgers/rollup.js';
import { byDay } from './rollup.js';

/** The policy as it ran: the compaction settings and what the preset adds. */
export function replayPolicyJson(policy: ReplayPolicy) {
  return {
    ...policyJson(policy.compaction),
    check: policy.check,
    carry_user_tokens: policy.carryUserTokens,
    summarizer_input: policy.summarizerInput,
    prune: policy.prune && {
      protect_tokens: policy.prune.protectTokens,
      minimum_tokens: policy.prune.minimumTokens,
      protect_turns: policy.prune.protectTurns,
    },
  };
}

/** One turn before and after, with its compactions, refusals and prunes. */
function turnJson(turn: ReplayReport['turns'][number]) {
  // Read once: a reported turn makes its compactions as they are read (ReplayColumns.report).
  const { compactions } = turn;
  return {
    turn: turn.turn,
    requests: turn.requests,
    baseline_before: turn.baselineBefore,
    baseline_after: turn.baselineAfter,
    input_tokens_before: turn.inputTokensBefore,
    input_tokens_after: turn.inputTokensAfter,
    compacted: compactions.length > 0,
    compactions: compactions.map((event) => ({
      trigger: event.trigger,
      first_kept_message_id: event.firstKeptMessageId,
      tokens_before: event.tokensBefore,
      tokens_after: event.tokensAfter,
      summary_tokens: event.summaryTokens,
      carried_user_tokens: event.carriedUserTokens,
      summarizer_input_tokens: event.summarizer?.input ?? 0,
      summarizer_output_tokens: event.summarizer?.output ?? 0,
      summarizer_estimated: event.summarizer?.estimated ?? false,
      summarizer_cached: event.summarizer?.cached ?? false,
    })),
    refused_compactions: turn.refusals.map((refusal) => ({
      trigger: refusal.trigger,
      status: refusal.refused,
      tokens_before: refusal.tokensBefore,
      tokens_after: refusal.tokensAfter,
    })),
    prunes: turn.prunes.map((prune) => ({ messages: prune.messages, tokens_saved: prune.tokensSaved })),
    recorded_compactions: turn.recorded.map(recordedCompactionJson),
  };
}

/** Turns and totals before and after. */
export function replayResultJson(result: ReplayReport) {
  const { totals } = result;
  return {
    // Mapped a turn at a time as the record is written (report/json-pieces.ts): a long session's
    // turns as JSON objects were a tree of tens of MB held at once.
    turns: new JsonList(result.turns, turnJson),
    totals: {
      requests: totals.requests,
      input_tokens_before: totals.inputTokensBefore,
      input_tokens_after: totals.inputTokensAfter,
      output_tokens: totals.outputTokens,
      reduction: totals.reduction,
      compactions: totals.compactions,
      no_gain: totals.noGain,
      would_thrash: totals.wouldThrash,
      prunes: totals.prunes,
      tokens_pruned: totals.tokensPruned,
      summarizer_input_tokens: totals.summarizerInputTokens,
      summarizer_output_tokens: totals.summarizerOutputTokens,
      max_baseline_before: totals.maxBaselineBefore,
      max_baseline_after: totals.maxBaselineAfter,
      stable_prefix_tokens: result.stablePrefix,
    },
  };
}

/** One policy's whole record. */
export function outcomeJson(outcome: PolicyOutcome) {
  const { result, costs, thrash } = outcome;
  return {
    name: result.policy.name,
    policy: replayPolicyJson(result.policy),
    ...replayResultJson(result),
    // cost_usd = the record's `cost` − (cache_model.before − cache_model.after): docs/audit.md.
    costs: costs && {
      cost_usd: costs.costUsd,
      cache_model: { before: costJson(costs.before.cached), after: costJson(costs.after.cached) },
      naive: { before: costJson(costs.before.naive), after: costJson(costs.after.naive) },
      summarizer: costJson(costs.summarizer),
    },
    savings: costs && { naive_usd: costs.savedNaiveUsd, cache_aware_usd: costs.savedCachedUsd },
    break_even: (costs?.breakEven ?? []).map((entry) => ({ turn: entry.turn, cost_usd: entry.costUsd, calls: entry.calls })),
    thrash: {
      detected: thrash.detected,
      fastest_refill_turns: thrash.fastest,
      refills: thrash.refills.map((refill) => ({ turn: refill.turn, refill_turns: refill.turns })),
    },
    gates: outcome.breaches.map((breach) => breachJson(breach, result.policy.name)),
  };
}

/**
 * The session's bill by UTC day (`spend_by_day`), earliest first and undated last: each day's
 * spend of the priced calls, summed over its models, for the roll-up across sessions.
 */
export function spendByDayJson(spend: SessionSpend) {
  const days = new Map<string | null, number>();
  for (const part of spend.parts) days.set(part.day, (days.get(part.day) ?? 0) + part.ledger.pricedCost.total);
  return [...days]
    .sort(([a], [b]) => byDay(a, b))
    .map(([day, costUsd]) => ({ day, cost_usd: costUsd }));
}
