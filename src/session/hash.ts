/**
 * A content hash of a run of messages, so a sidecar can tell whether the part of the session it
 * summarized is still the same. Only what the model saw is hashed (ids, roles, blocks).
 *
 * The lean path (session/slim.ts) drops message text after reading, so it hashes while reading
 * and remembers the digest of the prefix before each message here; `hashMessages` answers from
 * that memory and refuses to hash slim text it would get wrong.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Message } from './model.js';
import { isSlim } from './slim.js';

/** Digest of messages [0, index) of the session `message` was read from, at `index`. */
const prefixDigests = new WeakMap<Message, { readonly index: number; readonly digest: string }>();

function digestOf(hash: Hash): string {
  return `sha256:${hash.digest('hex')}`;
}

/** Adds one message to a running prefix hash (the same bytes hashMessages hashes). */
export function updateMessageHash(hash: Hash, message: Message): void {
  hash.update(JSON.stringify([message.id, message.role, message.content]));
  hash.update('\n');
}

/** Remembers that messages [0, index) hash to the running `hash`'s current digest. */
export function rememberPrefixHash(message: Message, index: number, hash: Hash): void {
  prefixDigests.set(message, { index, digest: digestOf(hash.copy()) });
}

export function hashMessages(messages: readonly Message[], from = 0, to = messages.length): string {
  if (from === 0 && to < messages.length) {
    const known = prefixDigests.get(messages[to]!);
    if (known && known.index === to) return known.digest;
  }
  const hash = createHash('sha256');
  for (let i = from; i < to; i++) {
    const message = messages[i]!;
    // A bug, not bad input: a wrong hash would end up in a sidecar and mark it stale forever.
    if (isSlim(message)) throw new Error(`internal: cannot hash message ${message.id}: its text was not kept (lean read)`);
    updateMessageHash(hash, message);
  }
  return digestOf(hash);
}
