/**
 * What the provider sees after a compaction (seed 004 build_provider_context):
 * [summary as a user message, a short assistant acknowledgement, kept messages…]; after a
 * prune, every message with the pruned tool outputs replaced by placeholders. Pure.
 */
import { applyPruning } from '../compaction/prune.js';
import type { CompactionState } from '../compaction/state.js';
import { InputError } from '../errors.js';
import type { Message } from './model.js';

export const SUMMARY_PREAMBLE =
  'The conversation history before this point was compacted into the following summary:';
export const SUMMARY_ACKNOWLEDGEMENT = 'Understood. I have the context from the summary and will continue from there.';

/** The summary text as the user message carries it. */
export function summaryMessageText(summary: string, turnPrefixSummary: string | null): string {
  const prefix = turnPrefixSummary
    ? `\n\nThe current turn was already in progress; what it did so far:\n\n<turn-prefix-summary>\n${turnPrefixSummary}\n</turn-prefix-summary>`
    : '';
  return `${SUMMARY_PREAMBLE}\n\n<summary>\n${summary}\n</summary>${prefix}`;
}

/** The two synthetic messages that stand in for the summarized history. */
export function summaryMessages(summary: string, turnPrefixSummary: string | null): [Message, Message] {
  return [
    { id: 'compaction-summary', role: 'user', content: [{ type: 'text', text: summaryMessageText(summary, turnPrefixSummary) }], line: 0 },
    { id: 'compaction-ack', role: 'assistant', content: [{ type: 'text', text: SUMMARY_ACKNOWLEDGEMENT }], line: 0 },
  ];
}

/** All messages unchanged without a compaction; otherwise the summary pair and the kept messages, or the pruned conversation. */
export function buildProviderContext(messages: readonly Message[], state: CompactionState | null): Message[] {
  if (!state) return [...messages];
  const index = messages.findIndex((message) => message.id === state.first_kept_message_id);
  if (index < 0) {
    throw new InputError(`sidecar names message ${JSON.stringify(state.first_kept_message_id)}, which is not in the session`);
  }
  if (state.pruned_outputs) return applyPruning(messages, state.pruned_outputs);
  return [...summaryMessages(state.summary, state.turn_prefix_summary), ...messages.slice(index)];
}
