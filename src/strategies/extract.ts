/**
 * `extract`: a structured checkpoint without an LLM. The user's requests verbatim, the
 * commands run with their outcome, the error lines seen, the assistant's stated decisions and
 * the files read and modified, in the sections of the LLM summary (checkpoint.ts), within a
 * size budget. Deterministic. A previous extract is merged (its items kept, this span's added);
 * a previous summary by another strategy is kept verbatim under Critical Context.
 */
import { formatFileOps } from '../compaction/file-ops.js';
import { previousSummaryText } from '../compaction/state.js';
import { renderCheckpoint } from './checkpoint.js';
import type { ExtractState } from './extract-state.js';
import { EMPTY_EXTRACT_STATE, extractSpan, mergeExtractStates, storedExtractState } from './extract-state.js';
import type { Strategy, SummaryInput, SummaryOutput } from '../compaction/strategy.js';

/**
 * Used when no `--max-summary-tokens` is given: room for the facts of a long real session (the
 * 974-message pi-mono fixture holds about 10,000 tokens of them), and under pi's own limit for
 * its LLM summary (0.8 × 16,384 reserve tokens). README "extract".
 */
export const DEFAULT_EXTRACT_SUMMARY_TOKENS = 12_000;

function previousState(input: SummaryInput): ExtractState {
  if (!input.previous) return EMPTY_EXTRACT_STATE;
  return storedExtractState(input.previous.details) ?? { ...EMPTY_EXTRACT_STATE, earlier: previousSummaryText(input.previous) };
}

export function extractSummary(input: SummaryInput, maxTokens = DEFAULT_EXTRACT_SUMMARY_TOKENS): SummaryOutput {
  const history = mergeExtractStates(previousState(input), extractSpan(input.history));
  const turnPrefix = input.turnPrefix.length > 0 ? mergeExtractStates(EMPTY_EXTRACT_STATE, extractSpan(input.turnPrefix)) : null;
  const checkpoint = renderCheckpoint(history, turnPrefix, formatFileOps(input.fileOps), maxTokens);
  // The next compaction treats this turn prefix as history, so the stored state holds both.
  const stored = turnPrefix ? mergeExtractStates(history, turnPrefix) : history;
  return { summary: checkpoint.summary, turnPrefixSummary: checkpoint.turnPrefixSummary, usage: null, details: { extract: stored } };
}

export function createExtractStrategy(maxTokens = DEFAULT_EXTRACT_SUMMARY_TOKENS): Strategy {
  return { name: 'extract', summarize: async (input) => extractSummary(input, maxTokens) };
}
