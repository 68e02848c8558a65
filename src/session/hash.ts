/**
 * A content hash of a run of messages, so a sidecar can tell whether the part of the session it
 * summarized is still the same. Only what the model saw is hashed (ids, roles, blocks), so only
 * full messages can be hashed: a slim message (SlimMessage) has no text to hash, and the type
 * says so. A lean read hashes while it reads and hands the digests over as data (PrefixHashes,
 * read/); nothing is remembered here.
 */
import type { Hash } from 'node:crypto';
import { lazyCrypto } from '../lazy-builtins.js';
import type { Message } from './model.js';

/** Digests of a session's message prefixes: `at(end)` is the hash of messages [0, end), where known. */
export interface PrefixHashes {
  at(end: number): string | undefined;
}

/** The digest a running hash has reached, in the form a sidecar stores. */
export function digestOf(hash: Hash): string {
  return `sha256:${hash.digest('hex')}`;
}

/** Adds one message to a running prefix hash (the same bytes hashMessages hashes). */
export function updateMessageHash(hash: Hash, message: Message): void {
  hash.update(JSON.stringify([message.id, message.role, message.content]));
  hash.update('\n');
}

export function hashMessages(messages: readonly Message[], from = 0, to = messages.length): string {
  const hash = lazyCrypto().createHash('sha256');
  for (let i = from; i < to; i++) updateMessageHash(hash, messages[i]!);
  return digestOf(hash);
}

/**
 * hashMessages(messages, 0, end) for a caller that asks for ever longer prefixes of one session
 * (replay's simulated states, read in order when they cross to the main thread): one running
 * hash, copied at each end, where hashing every prefix afresh made replay quadratic. A shorter
 * prefix than the last one asked is hashed afresh.
 */
export function prefixHasher(messages: readonly Message[]): (end: number) => string {
  const hash = lazyCrypto().createHash('sha256');
  let hashed = 0;
  return (end) => {
    if (end < hashed) return hashMessages(messages, 0, end);
    for (; hashed < end; hashed++) updateMessageHash(hash, messages[hashed]!);
    return digestOf(hash.copy());
  };
}

/** The prefix hashes of full messages, each taken when first asked (prefixHasher). */
export function prefixHashesOf(messages: readonly Message[]): PrefixHashes {
  const hasher = prefixHasher(messages);
  return { at: (end) => (end <= messages.length ? hasher(end) : undefined) };
}
