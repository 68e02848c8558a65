/**
 * The one interface every summarizing strategy implements: (span, previous) → summary + usage.
 * The core decides what to summarize and computes the file lists; a strategy only writes text.
 * `prune` keeps the span instead of summarizing it, so it has an interface of its own:
 * (span) → the tool outputs to replace; `CompactionStrategy` is either.
 */
import type { FileOps } from './file-ops.js';
import type { PrunedOutput } from './prune.js';
import type { CompactionState } from './state.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { AnyMessage, Message } from '../session/model.js';

export interface SummaryInput {
  /** Messages folded into the history summary (only the new span when `previous` is set). */
  readonly history: readonly Message[];
  /** A split turn's already-done prefix, summarized on its own (the split-turn rule); empty otherwise. */
  readonly turnPrefix: readonly Message[];
  /** The previous compaction, to merge with instead of starting over (an incremental compaction). */
  readonly previous: CompactionState | null;
  /** Read / modified files, cumulative over compactions, computed by the core. */
  readonly fileOps: FileOps;
  readonly signal?: AbortSignal;
}

export interface SummaryOutput {
  readonly summary: string;
  readonly turnPrefixSummary: string | null;
  /** Tokens the summarizer itself consumed; null for offline strategies. */
  readonly usage: { readonly input: number; readonly output: number } | null;
  /** Stored in the sidecar and handed back as `previous.details` next time. */
  readonly details: Readonly<Record<string, unknown>>;
  /** Set when this summary came from a fallback after the configured strategy failed. */
  readonly fallback?: boolean;
}

export interface Strategy {
  readonly name: string;
  /**
   * True when the strategy reads only structure (roles, tool pairing, file paths), never message
   * text: it then gets slim messages (read/slim.ts) and memory stays flat. Absent = false.
   */
  readonly metadataOnly?: boolean;
  /** Absent or 'summary': the span is replaced by a summary. */
  readonly kind?: 'summary';
  summarize(input: SummaryInput): Promise<SummaryOutput>;
}

export interface PruneInput {
  /**
   * The session, so results are read with their calls before `to`. In replay the array runs on
   * past the simulated call (copying each prefix made replay quadratic): read nothing from `to` on.
   * Compact's second read holds in full the span and the calls its results answer, slim messages
   * elsewhere (compaction/text-reads.ts).
   */
  readonly messages: readonly AnyMessage[];
  /** The span whose outputs may be pruned: [from, to), `to` being the first kept message. */
  readonly from: number;
  readonly to: number;
  readonly count: TextCounter;
}

/** Keeps the span and names the tool outputs the provider view replaces by placeholders. */
export interface PruneStrategy {
  readonly name: string;
  readonly kind: 'prune';
  prune(input: PruneInput): readonly PrunedOutput[];
}

export type CompactionStrategy = Strategy | PruneStrategy;
