/**
 * The previous compaction of a session, the sidecar room's part of a read: the sidecar beside the
 * session loaded (none for stdin, which has no place beside it), and, once the session is read,
 * checked against it: fresh, it is the compaction to build on; stale, a warning and a compaction
 * from scratch, or the session's one error where nothing else can be shown (`context`, `fork`).
 */
import type { CompactionState } from '../compaction/state.js';
import { InputError } from '../errors.js';
import { isStdin } from '../formats/json/input-source.js';
import type { PrefixHashes } from '../session/hash.js';
import type { AnyMessage, Diagnostic } from '../session/model.js';
import { checkFreshness } from './staleness.js';
import { loadSidecar, sidecarPath } from './store.js';

/** A sidecar that still matches its session, and where its kept messages start. */
export interface PreviousCompaction {
  readonly state: CompactionState;
  readonly firstKeptIndex: number;
}

/** The sidecar beside the session, or null (none, or stdin). */
export function loadPrevious(path: string): Promise<CompactionState | null> {
  return isStdin(path) ? Promise.resolve(null) : loadSidecar(path);
}

/**
 * The loaded sidecar held against the session as read (its messages, and for slim ones the prefix
 * hashes the read took): the previous compaction if fresh, else null and why, as a warning
 * (`recompact`) or the session's error (`fail`).
 */
export function previousCompaction(
  path: string,
  state: CompactionState,
  messages: readonly AnyMessage[],
  prefixHashes: PrefixHashes,
  stale: 'recompact' | 'fail',
): { readonly previous: PreviousCompaction | null; readonly warning: Diagnostic | null } {
  const freshness = checkFreshness(state, messages, prefixHashes);
  if (freshness.kind === 'fresh') return { previous: { state, firstKeptIndex: freshness.firstKeptIndex }, warning: null };
  if (stale === 'fail') throw new InputError(`stale sidecar (${freshness.reason}); run compact again`, sidecarPath(path));
  return { previous: null, warning: { file: sidecarPath(path), message: `stale sidecar (${freshness.reason}); compacting from scratch` } };
}
