/**
 * What-if replay: the same session under a compaction policy, call by call.
 *
 * Every provider call is rebuilt (input = everything before it, as reported or estimated). The
 * policy is applied at each turn start (proactive) and whenever a call would exceed the window
 * (overflow: emergency compaction, keep = limit / 5, forced; seed 000). A compaction replaces
 * messages [0, first kept) by the strategy's real summary, so later calls carry
 * `input − replaced estimates + summary tokens`. Pure apart from what the strategy does.
 *
 * Compactions the agent recorded itself are already in the reported inputs ("before"); ours
 * apply on top of them, summarizing only from the agent's window start, and one the agent
 * compacted past stops counting. Each turn lists the recorded ones that happened in it.
 */
import type { CompactionState } from '../compaction/state.js';
import { runCompaction, contextAfterCompaction } from '../compaction/compact.js';
import { findCutPoint } from '../compaction/cut-point.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { emergencyPolicy, shouldCompact } from '../compaction/policy.js';
import type { Message, RecordedCompaction } from '../session/model.js';
import { windowStartAt } from '../session/model.js';
import type { Strategy } from '../strategies/strategy.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import { providerCalls } from '../tokens/provider-calls.js';
import type { RecordedCompactionEffect } from './recorded.js';
import { effectsInTurn, recordedCompactionEffects } from './recorded.js';
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
  /** Compactions the agent itself recorded during this turn, with their real effect. */
  readonly recorded: readonly RecordedCompactionEffect[];
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
  readonly strategy: Strategy;
  readonly count?: TextCounter;
  /** Compactions the agent recorded in the session (Session.recordedCompactions). */
  readonly recorded?: readonly RecordedCompaction[];
}

/** The simulated compaction state as replay walks forward. */
interface Compacted {
  readonly state: CompactionState;
  readonly firstKeptIndex: number;
}

export async function replaySession(input: ReplayInput): Promise<ReplayResult> {
  const { messages, tokens, policy, strategy } = input;
  const recorded = input.recorded ?? [];
  const calls = providerCalls(messages, tokens, recorded);
  const turns = groupTurns(messages, calls);
  const effects = recordedCompactionEffects(messages, tokens, recorded, calls);
  let compacted = null as Compacted | null; // assigned inside compactBefore: keep TS from narrowing to null

  /** What `call` sends with our compaction applied on top of the agent's window. */
  const afterInput = (call: ProviderCall): number => {
    const from = windowStartAt(recorded, call.index);
    if (!compacted || compacted.firstKeptIndex <= from) return call.input;
    return contextAfterCompaction(call.input, tokens, compacted.firstKeptIndex, compacted.state.summary_tokens, from);
  };

  /** Compacts messages before `call` under `rules`; returns what happened, or null if no cut was possible. */
  const compactBefore = async (call: ProviderCall, rules: CompactionPolicy, trigger: CompactionTrigger) => {
    const start = Math.max(compacted?.firstKeptIndex ?? 0, windowStartAt(recorded, call.index));
    const end = call.index;
    const cut = findCutPoint(messages, tokens, rules, { start, end });
    if (cut.kind === 'none') return null;
    const tokensBefore = afterInput(call);
    const subject = {
      sessionName: input.sessionName,
      messages: messages.slice(0, end),
      tokens: tokens.slice(0, end),
      previous: compacted,
      recorded,
    };
    const state = await runCompaction(subject, { kind: 'compact', cut, start, contextTokens: tokensBefore }, strategy, {
      ...(input.count ? { count: input.count } : {}),
      now: new Date(0),
    });
    compacted = { state, firstKeptIndex: cut.index };
    const event: ReplayCompaction = {
      trigger,
      beforeCallIndex: call.index,
      firstKeptMessageId: state.first_kept_message_id,
      tokensBefore,
      tokensAfter: afterInput(call),
      summaryTokens: state.summary_tokens,
      summarizerUsage: state.usage ? { input: state.usage.input_tokens, output: state.usage.output_tokens } : null,
    };
    return event;
  };

  const results: ReplayTurn[] = [];
  for (const [turnPosition, turn] of turns.entries()) {
    const events: ReplayCompaction[] = [];
    let inputBefore = 0;
    let inputAfter = 0;
    let outputTokens = 0;
    let baselineAfter = 0;
    for (const [position, call] of turn.calls.entries()) {
      // The agent compacted past our cut: its own summary replaced ours.
      if (compacted && compacted.firstKeptIndex < windowStartAt(recorded, call.index)) compacted = null;
      if (position === 0 && shouldCompact(afterInput(call), policy)) {
        const event = await compactBefore(call, policy, 'proactive');
        if (event) events.push(event);
      }
      if (afterInput(call) > policy.contextLimit) {
        const event = await compactBefore(call, emergencyPolicy(policy), 'overflow');
        if (event) events.push(event);
      }
      const sent = afterInput(call);
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
      recorded: effectsInTurn(effects, turns, turnPosition),
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
