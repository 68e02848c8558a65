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

/** The digest remembered while reading for messages [0, to), if any. */
function rememberedPrefix(messages: readonly Message[], to: number): string | undefined {
  if (to >= messages.length) return undefined;
  const known = prefixDigests.get(messages[to]!);
  return known && known.index === to ? known.digest : undefined;
}

function hashFull(hash: Hash, message: Message): void {
  // A bug, not bad input: a wrong hash would end up in a sidecar and mark it stale forever.
  if (isSlim(message)) throw new Error(`internal: cannot hash message ${message.id}: its text was not kept (lean read)`);
  updateMessageHash(hash, message);
}

export function hashMessages(messages: readonly Message[], from = 0, to = messages.length): string {
  const known = from === 0 ? rememberedPrefix(messages, to) : undefined;
  if (known) return known;
  const hash = createHash('sha256');
  for (let i = from; i < to; i++) hashFull(hash, messages[i]!);
  return digestOf(hash);
}

/**
 * hashMessages(messages, 0, end) for a caller that asks for ever longer prefixes of one session
 * (replay's simulated states, read in order when they cross to the main thread): one running
 * hash, copied at each end, where hashing every prefix afresh made replay quadratic. A shorter
 * prefix than the last one asked is hashed afresh.
 */
export function prefixHasher(messages: readonly Message[]): (end: number) => string {
  const hash = createHash('sha256');
  let hashed = 0;
  return (end) => {
    const known = rememberedPrefix(messages, end);
    if (known) return known;
    if (end < hashed) return hashMessages(messages, 0, end);
    for (; hashed < end; hashed++) hashFull(hash, messages[hashed]!);
    return digestOf(hash.copy());
  };
}
