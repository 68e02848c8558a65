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
import type { AnyMessage, Message, TextSpan } from '../session/model.js';

/** `M`: full messages for a strategy that reads text, any (slim too) for one that reads structure. */
export interface SummaryInput<M extends AnyMessage = Message> {
  /** Messages folded into the history summary (only the new span when `previous` is set). */
  readonly history: readonly M[];
  /** A split turn's already-done prefix, summarized on its own (the split-turn rule); empty otherwise. */
  readonly turnPrefix: readonly M[];
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

interface SummaryStrategy {
  readonly name: string;
  /** Absent or 'summary': the span is replaced by a summary. */
  readonly kind?: 'summary';
}

/** A strategy that reads message text: its span is full messages. */
export interface TextStrategy extends SummaryStrategy {
  readonly metadataOnly?: false;
  summarize(input: SummaryInput<Message>): Promise<SummaryOutput>;
}

/**
 * A strategy that reads only structure (roles, tool pairing, file paths), never message text:
 * it may be given slim messages (read/slim.ts), so a replay that uses it reads lean.
 */
export interface MetadataStrategy extends SummaryStrategy {
  readonly metadataOnly: true;
  summarize(input: SummaryInput<AnyMessage>): Promise<SummaryOutput>;
}

export type Strategy = TextStrategy | MetadataStrategy;

export interface PruneInput {
  /**
   * The session, so results are read with their calls before `to`. In replay the array runs on
   * past the simulated call (copying each prefix made replay quadratic): read nothing from `to` on.
   * Compact's second read holds in full the span and the calls its results answer, slim messages
   * elsewhere (compaction/text-reads.ts).
   */
  readonly messages: readonly AnyMessage[];
  /** The span's messages in full, whose outputs are measured (all of them when the read was full). */
  readonly text: TextSpan;
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

/** True for a strategy that reads only structure: one that may be handed slim messages. */
export function readsOnlyStructure(strategy: CompactionStrategy): strategy is MetadataStrategy {
  return strategy.kind !== 'prune' && strategy.metadataOnly === true;
}
