/**
 * The result of a compaction, as stored in the sidecar (the summary, where it cuts, the file lists, plus what
 * idempotency and audit need). Field names are snake_case because this is the on-disk shape.
 */
import type { PrunedOutput } from './prune.js';
import type { DroppedOutput } from './relevance.js';

export const SIDECAR_FORMAT_VERSION = 1;

export interface SummarizerUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/**
 * A sidecar's record as it is stored, both kinds in one flat shape (what the sidecar schema
 * reads). The core works with CompactionState, where the kinds are apart.
 */
export interface StateRecord {
  readonly format_version: typeof SIDECAR_FORMAT_VERSION;
  /** File name of the session this sidecar belongs to. */
  readonly session: string;
  readonly strategy: string;
  /** True when the configured strategy failed and a fallback wrote this summary. */
  readonly fallback: boolean;
  /** Summary of everything before the kept messages (and before a split turn's prefix). */
  readonly summary: string;
  /** Summary of a split turn's already-compacted prefix (the split-turn rule), or null. */
  readonly turn_prefix_summary: string | null;
  /** The session's own id of the first message sent verbatim. */
  readonly first_kept_message_id: string;
  readonly first_kept_index: number;
  /** Context tokens before and after this compaction (estimates, see README "Numbers"). */
  readonly tokens_before: number;
  readonly tokens_after: number;
  /** Tokens of the synthetic summary + acknowledgement messages. */
  readonly summary_tokens: number;
  /** Messages summarized by this compaction, and in all compactions of this session. */
  readonly messages_summarized: number;
  readonly messages_summarized_total: number;
  /** sha256 over messages [0, first_kept_index): a changed session no longer matches. */
  readonly summarized_hash: string;
  readonly read_files: readonly string[];
  readonly modified_files: readonly string[];
  /** How many compactions this state folds together (1 for the first). */
  readonly compactions: number;
  readonly usage: SummarizerUsage | null;
  /** Tool outputs the relevance filter kept from the summarizer, over all compactions ([] for prune). */
  readonly dropped_outputs: readonly DroppedOutput[];
  /**
   * Set by `prune` only: the history was not summarized but kept, with these tool outputs
   * replaced by placeholders (cumulative); `summary` is then empty. Null for every summary.
   */
  readonly pruned_outputs: readonly PrunedOutput[] | null;
  /** Strategy-specific data carried to the next compaction (e.g. truncate's role counts). */
  readonly details: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  readonly tool_version: string;
}

/** A compaction that replaced the history with a summary: it prunes nothing. */
export interface SummaryState extends StateRecord {
  readonly pruned_outputs: null;
}

/** A compaction that kept the history and pruned old tool outputs (`prune`): no summary. */
export interface PruneState extends StateRecord {
  readonly summary: '';
  readonly turn_prefix_summary: null;
  readonly pruned_outputs: readonly PrunedOutput[];
}

/** The result of a compaction, told apart by `pruned_outputs` (null for a summary). */
export type CompactionState = SummaryState | PruneState;

/** The text a later compaction merges with: the history summary and any turn-prefix summary. */
export function previousSummaryText(state: CompactionState): string {
  return state.turn_prefix_summary ? `${state.summary}\n\n${state.turn_prefix_summary}` : state.summary;
}
