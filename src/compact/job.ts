/**
 * What compacting one session is asked to do, as plain data (no command-line types): built once
 * by a command from its flags and settings, or by the library from its options, and used as it
 * is on this thread and as a worker's payload (it crosses threads by structured clone). The
 * things a run holds that are not data (the built strategy, the token counter, the signal) travel
 * beside it as CompactTools, down into the run and never back up.
 */
import type { CompactionPolicy } from '../compaction/policy.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { PolicyValues } from '../config/policy.js';
import type { OnError } from '../config/settings.js';
import type { ContextWindow } from '../pricing/window.js';
import type { StrategyName, StrategyOptions } from '../strategies/index.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { TokenizerName } from '../tokens/tokenizers.js';

/**
 * The policy a session is planned with: the settings, taken at each session's own window
 * (pricing/window.ts) unless they name one; or one policy at one window for every session.
 */
export type PolicyChoice =
  | { readonly kind: 'settings'; readonly values: PolicyValues }
  | { readonly kind: 'fixed'; readonly policy: CompactionPolicy; readonly window: ContextWindow };

export interface CompactJob {
  /** A format name, or `auto`. */
  readonly format: string;
  readonly tokenizer: TokenizerName;
  /** `--strict`: any warning fails the session. */
  readonly strict: boolean;
  readonly policy: PolicyChoice;
  /** Decide and report, write nothing. */
  readonly dryRun: boolean;
  /** Mask secrets in what is summarized and stored. */
  readonly redact: boolean;
  /** The relevance filter on the span a strategy summarizes (compaction/relevance.ts); `--no-relevance` switches it off. */
  readonly relevance: boolean;
  readonly strategy: StrategyName;
  /** The offline strategies' options (a summarizer's live client is built into CompactTools.strategy). */
  readonly strategyOptions: StrategyOptions;
  /** What a failed summarizer leaves: the session failed, skipped, or a truncate sidecar. */
  readonly onError: OnError;
}

/** What a run holds beside the job: built once per run, handed down, never called back up. */
export interface CompactTools {
  readonly strategy: CompactionStrategy;
  readonly count: TextCounter | undefined;
  /** Aborted on SIGINT/SIGTERM: the session in flight is abandoned. */
  readonly signal: AbortSignal;
}

/** Offline strategies: no client, so they can run in a worker. */
export type OfflineStrategyName = Exclude<StrategyName, 'summarize'>;

export function isOffline(name: StrategyName): name is OfflineStrategyName {
  return name !== 'summarize';
}
