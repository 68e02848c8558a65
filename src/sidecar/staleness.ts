/**
 * Does a sidecar still describe this session? Its first kept message must exist, at the index the
 * sidecar gives, and the messages before it must hash the same as when it was written. Pure.
 */
import type { CompactionState } from '../compaction/state.js';
import type { PrefixHashes } from '../session/hash.js';
import { prefixHashesOf } from '../session/hash.js';
import type { AnyMessage, Message } from '../session/model.js';

export type Freshness =
  | { readonly kind: 'fresh'; readonly firstKeptIndex: number }
  | { readonly kind: 'stale'; readonly reason: string };

/** Full messages are hashed here; slim ones come with the prefix hashes their read took (read/). */
export function checkFreshness(state: CompactionState, messages: readonly Message[]): Freshness;
export function checkFreshness(state: CompactionState, messages: readonly AnyMessage[], hashes: PrefixHashes): Freshness;
export function checkFreshness(...args: [CompactionState, readonly Message[]] | [CompactionState, readonly AnyMessage[], PrefixHashes]): Freshness {
  const [state, messages] = args;
  const index = messages.findIndex((message) => message.id === state.first_kept_message_id);
  if (index < 0) return { kind: 'stale', reason: `its first kept message ${state.first_kept_message_id} is no longer in the session` };
  // The index is stored beside the id (a hand-edited one can point anywhere): both must name one message.
  if (state.first_kept_index !== index) {
    const where = state.first_kept_index >= messages.length ? `outside the session's ${messages.length} messages` : `message ${messages[state.first_kept_index]!.id}`;
    return { kind: 'stale', reason: `its first_kept_index ${state.first_kept_index} is ${where}; its first kept message ${state.first_kept_message_id} is at ${index}` };
  }
  // Full messages come without hashes: then they are hashed here.
  const digest = (args.length === 2 ? prefixHashesOf(args[1]) : args[2]).at(index);
  if (digest !== state.summarized_hash) {
    return { kind: 'stale', reason: 'the summarized messages changed since it was written' };
  }
  return { kind: 'fresh', firstKeptIndex: index };
}
