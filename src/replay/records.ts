/**
 * The replay's records of one simulated session: a provider call under the policy, a compaction
 * it made, one its guards refused, and what the summarizer was asked. Types only; simulate.ts
 * makes them and columns.ts holds them as columns while the simulation runs.
 */
import type { Refusal } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';

export type CompactionTrigger = 'proactive' | 'overflow';

export interface SummarizerCall {
  readonly input: number;
  readonly output: number;
  /** True when the input is the conversation the provider has just cached (ReplayPolicy.summarizerInput). */
  readonly cached: boolean;
  /** True when the strategy called no model and this is the call an LLM summarizer would make. */
  readonly estimated: boolean;
}

export interface ReplayCompaction {
  readonly trigger: CompactionTrigger;
  /** Index of the provider call (assistant message) the compaction happened before. */
  readonly beforeCallIndex: number;
  /** Position of that call in `ReplayResult.calls`. */
  readonly callPosition: number;
  readonly turn: number;
  readonly firstKeptMessageId: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Summary + acknowledgement messages, plus any carried user messages. */
  readonly summaryTokens: number;
  readonly carriedUserTokens: number;
  /** null when no model wrote the summary (custom policy, offline strategy). */
  readonly summarizer: SummarizerCall | null;
  /** The state this compaction produced (what a sidecar written at that point would hold). */
  readonly state: CompactionState;
}

/**
 * A compaction the policy's guards refused (compact.ts runGuardedCompaction): it would not have
 * shrunk the prompt (`no-gain`), or no valid cut brought it under the trigger (`would-thrash`).
 * Nothing changed; `tokensAfter` is what the refused compaction would have left (null when no cut
 * was even tried).
 */
export interface ReplayRefusal {
  readonly refused: Refusal;
  readonly trigger: CompactionTrigger;
  /** Position in `ReplayResult.calls` of the call the refused compaction came before. */
  readonly callPosition: number;
  readonly turn: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number | null;
  /** What the refused attempts cost the summarizer (custom with a summarizer only), else null. */
  readonly summarizer: SummarizerCall | null;
}

export interface SimulatedCall {
  /** Index of the assistant message the call produced. */
  readonly index: number;
  readonly turn: number;
  /** Prompt as the session sent it, and under the policy. */
  readonly before: number;
  readonly after: number;
  readonly output: number;
  /** Prompt tokens unchanged since the previous call when the policy rewrote the prefix; null if append-only. */
  readonly unchanged: number | null;
}

/** A compaction as reports show it: what it did, without the state it produced. */
export type ReplayEvent = Omit<ReplayCompaction, 'state'>;
