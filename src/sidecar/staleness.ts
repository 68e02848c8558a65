/**
 * Does a sidecar still describe this session? Its first kept message must exist and the
 * messages before it must hash the same as when it was written. Pure.
 */
import type { CompactionState } from '../compaction/state.js';
import { hashMessages } from '../session/hash.js';
import type { Message } from '../session/model.js';

export type Freshness =
  | { readonly kind: 'fresh'; readonly firstKeptIndex: number }
  | { readonly kind: 'stale'; readonly reason: string };

export function checkFreshness(state: CompactionState, messages: readonly Message[]): Freshness {
  const index = messages.findIndex((message) => message.id === state.first_kept_message_id);
  if (index < 0) return { kind: 'stale', reason: `its first kept message ${state.first_kept_message_id} is no longer in the session` };
  if (hashMessages(messages, 0, index) !== state.summarized_hash) {
    return { kind: 'stale', reason: 'the summarized messages changed since it was written' };
  }
  return { kind: 'fresh', firstKeptIndex: index };
}
