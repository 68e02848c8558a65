/**
 * What the provider sees after a compaction:
 * [summary as a user message, a short assistant acknowledgement, kept messages…]; after a
 * prune, every message with the pruned tool outputs replaced by placeholders. The session's own
 * tool-pairing breakage is repaired in the view (view-repair.ts), so that what we build keeps the
 * provider's rules; checking that it does is view-rules.ts's. Pure.
 */
import { applyPruning } from './prune.js';
import type { CompactionState } from './state.js';
import { InputError } from '../errors.js';
import type { AnyMessage, Message } from '../session/model.js';
import type { ViewRepair } from '../session/view-repair.js';
import { applyViewRepair, planViewRepair } from '../session/view-repair.js';

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

/**
 * A view that is a cut of the window: the summary pair (none without a compaction) and the
 * repaired messages from `from` on. What `context` needs to write a view while it reads the
 * session again, message by message (session/view-repair.ts repairStream).
 */
export interface CutView {
  readonly summary: readonly Message[];
  /** The first message of the window shown (the compaction's first kept one, or 0). */
  readonly from: number;
  readonly repair: ViewRepair;
}

/** The cut view of `messages` under `state`, or null for a prune (every message rewritten in place). */
export function cutView(messages: readonly AnyMessage[], state: CompactionState | null, repair: ViewRepair = planViewRepair(messages)): CutView | null {
  if (!state) return { summary: [], from: 0, repair };
  const index = messages.findIndex((message) => message.id === state.first_kept_message_id);
  if (index < 0) {
    throw new InputError(`sidecar names message ${JSON.stringify(state.first_kept_message_id)}, which is not in the session`);
  }
  if (state.pruned_outputs) return null;
  return { summary: summaryMessages(state.summary, state.turn_prefix_summary), from: index, repair };
}

/**
 * The view of `messages` (the context window: the session from the agent's own last compaction
 * on): all messages without a compaction; otherwise the summary pair and the kept messages, or
 * the pruned conversation. Either way with the session's tool-pairing breakage repaired; `repair`
 * is planViewRepair(messages), for a caller that has it already.
 */
export function buildProviderContext<M extends AnyMessage>(
  messages: readonly M[],
  state: CompactionState | null,
  repair: ViewRepair = planViewRepair(messages),
): (M | Message)[] {
  const cut = cutView(messages, state, repair);
  if (!cut) {
    const pruned = applyPruning(messages, state!.pruned_outputs!);
    return applyViewRepair(pruned, 0, repair);
  }
  if (cut.from === 0 && cut.summary.length === 0) return applyViewRepair(messages, 0, repair);
  return [...cut.summary, ...applyViewRepair(messages.slice(cut.from), cut.from, repair)];
}
