/**
 * What-if replay: the same session under a compaction policy, call by call.
 *
 * Every provider call is rebuilt (input = everything before it, as reported or estimated). The
 * policy is applied at each turn start (proactive) and whenever a call would exceed the window
 * (overflow: emergency compaction, keep = limit / 5, forced; seed 000). A compaction replaces
 * messages [0, first kept) by the strategy's real summary (or prunes their tool outputs), so
 * later calls carry `input − what it saved` (compact.ts `tokensSaved`). Pure apart from what
 * the strategy does.
 */
import type { CompactionState } from '../compaction/state.js';
import { runCompaction, tokensSaved } from '../compaction/compact.js';
import { findCutPoint } from '../compaction/cut-point.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { emergencyPolicy, shouldCompact } from '../compaction/policy.js';
import type { Message } from '../session/model.js';
import type { CompactionStrategy } from '../strategies/strategy.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import { providerCalls } from '../tokens/provider-calls.js';
import { groupTurns } from './turns.js';

export type CompactionTrigger = 'proactive' | 'overflow';

export interface ReplayCompaction {
  readonly trigger: CompactionTrigger;
  /** Index of the provider call (assistant message) the compaction happened before. */
  readonly beforeCallIndex: number;
  readonly firstKeptMessageId: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly summaryTokens: number;
  readonly summarizerUsage: { readonly input: number; readonly output: number } | null;
  /** The state this compaction produced (what a sidecar written at that point would hold). */
  readonly state: CompactionState;
}

export interface ReplayTurn {
  readonly turn: number;
  readonly requests: number;
  readonly baselineBefore: number;
  readonly baselineAfter: number;
  readonly inputTokensBefore: number;
  readonly inputTokensAfter: number;
  readonly outputTokens: number;
  readonly compactions: readonly ReplayCompaction[];
}

export interface ReplayResult {
  readonly turns: readonly ReplayTurn[];
  readonly totals: {
    readonly requests: number;
    readonly inputTokensBefore: number;
    readonly inputTokensAfter: number;
    readonly outputTokens: number;
    /** 1 − after / before; 0 when nothing was sent. */
    readonly reduction: number;
    readonly compactions: number;
    readonly summarizerInputTokens: number;
    readonly summarizerOutputTokens: number;
  };
}

export interface ReplayInput {
  readonly sessionName: string;
  readonly messages: readonly Message[];
  readonly tokens: readonly number[];
  readonly policy: CompactionPolicy;
  readonly strategy: CompactionStrategy;
  readonly count?: TextCounter;
}

/** The simulated compaction state as replay walks forward. */
interface Compacted {
  readonly state: CompactionState;
  readonly firstKeptIndex: number;
  /** Tokens it takes off every later call, computed once. */
  readonly saved: number;
}

function afterInput(call: ProviderCall, compacted: Compacted | null): number {
  if (!compacted) return call.input;
  return Math.max(0, call.input - compacted.saved);
}

export async function replaySession(input: ReplayInput): Promise<ReplayResult> {
  const { messages, tokens, policy, strategy } = input;
  const turns = groupTurns(messages, providerCalls(messages, tokens));
  let compacted: Compacted | null = null;

  /** Compacts messages before `call` under `rules`; returns what happened, or null if no cut was possible. */
  const compactBefore = async (call: ProviderCall, rules: CompactionPolicy, trigger: CompactionTrigger) => {
    const start = compacted?.firstKeptIndex ?? 0;
    const end = call.index;
    const cut = findCutPoint(messages, tokens, rules, { start, end });
    if (cut.kind === 'none') return null;
    const tokensBefore = afterInput(call, compacted);
    const subject = {
      sessionName: input.sessionName,
      messages: messages.slice(0, end),
      tokens: tokens.slice(0, end),
      previous: compacted,
    };
    const state = await runCompaction(subject, { kind: 'compact', cut, start, contextTokens: tokensBefore }, strategy, {
      ...(input.count ? { count: input.count } : {}),
      now: new Date(0),
    });
    compacted = { state, firstKeptIndex: cut.index, saved: tokensSaved(messages, tokens, cut.index, state, input.count) };
    const event: ReplayCompaction = {
      trigger,
      beforeCallIndex: call.index,
      firstKeptMessageId: state.first_kept_message_id,
      tokensBefore,
      tokensAfter: afterInput(call, compacted),
      summaryTokens: state.summary_tokens,
      summarizerUsage: state.usage ? { input: state.usage.input_tokens, output: state.usage.output_tokens } : null,
      state,
    };
    return event;
  };

  const results: ReplayTurn[] = [];
  for (const turn of turns) {
    const events: ReplayCompaction[] = [];
    let inputBefore = 0;
    let inputAfter = 0;
    let outputTokens = 0;
    let baselineAfter = 0;
    for (const [position, call] of turn.calls.entries()) {
      if (position === 0 && shouldCompact(afterInput(call, compacted), policy)) {
        const event = await compactBefore(call, policy, 'proactive');
        if (event) events.push(event);
      }
      if (afterInput(call, compacted) > policy.contextLimit) {
        const event = await compactBefore(call, emergencyPolicy(policy), 'overflow');
        if (event) events.push(event);
      }
      const sent = afterInput(call, compacted);
      if (position === 0) baselineAfter = sent;
      inputBefore += call.input;
      inputAfter += sent;
      outputTokens += call.output;
    }
    results.push({
      turn: turn.turn,
      requests: turn.calls.length,
      baselineBefore: turn.calls[0]?.input ?? 0,
      baselineAfter,
      inputTokensBefore: inputBefore,
      inputTokensAfter: inputAfter,
      outputTokens,
      compactions: events,
    });
  }
  return { turns: results, totals: totalsOf(results) };
}

function totalsOf(turns: readonly ReplayTurn[]): ReplayResult['totals'] {
  let requests = 0;
  let before = 0;
  let after = 0;
  let output = 0;
  let compactions = 0;
  let summarizerIn = 0;
  let summarizerOut = 0;
  for (const turn of turns) {
    requests += turn.requests;
    before += turn.inputTokensBefore;
    after += turn.inputTokensAfter;
    output += turn.outputTokens;
    compactions += turn.compactions.length;
    for (const event of turn.compactions) {
      summarizerIn += event.summarizerUsage?.input ?? 0;
      summarizerOut += event.summarizerUsage?.output ?? 0;
    }
  }
  return {
    requests,
    inputTokensBefore: before,
    inputTokensAfter: after,
    outputTokens: output,
    reduction: before > 0 ? 1 - after / before : 0,
    compactions,
    summarizerInputTokens: summarizerIn,
    summarizerOutputTokens: summarizerOut,
  };
}
