/**
 * A content hash of a run of messages, so a sidecar can tell whether the part of the session it
 * summarized is still the same. Only what the model saw is hashed (ids, roles, blocks).
 */
import { createHash } from 'node:crypto';
import type { Message } from './model.js';

export function hashMessages(messages: readonly Message[], from = 0, to = messages.length): string {
  const hash = createHash('sha256');
  for (let i = from; i < to; i++) {
    const { id, role, content } = messages[i]!;
    hash.update(JSON.stringify([id, role, content]));
    hash.update('\n');
  }
  return `sha256:${hash.digest('hex')}`;
}
