/**
 * The previous compaction of a session, the sidecar room's part of a read: the sidecar beside the
 * session loaded (none for stdin, which has no place beside it) by the caller before the read,
 * what the read must take of it said as plain data (sidecarReading), and, once the session is
 * read, the sidecar checked against it: fresh, it is the compaction to build on; stale, a warning
 * and a compaction from scratch, or the session's one error where nothing else can be shown
 * (`context`, `fork`). Out comes the subject the compaction core works on (heldSubject).
 */
import { basename } from 'node:path';
import type { CompactionSubject } from '../compaction/compact.js';
import { livePrevious } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { failOnWarnings, InputError } from '../errors.js';
import { isStdin } from '../formats/json/input-source.js';
import type { PrefixHashes } from '../session/hash.js';
import type { AnyMessage, Diagnostic, Session } from '../session/model.js';
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

/**
 * What a read must take of this sidecar (read/index.ts SidecarReading): the prefix before its
 * first kept message is hashed to check it, and a prune sidecar's session is read in full (its
 * saving is each pruned message's estimate before minus after, compaction/prune.ts
 * pruningSavings: what stays of the message is sized from its text).
 */
export function sidecarReading(state: CompactionState | null): { readonly firstKeptId: string; readonly inFull: boolean } | null {
  return state ? { firstKeptId: state.first_kept_message_id, inFull: (state.pruned_outputs?.length ?? 0) > 0 } : null;
}

/** How a session's previous compaction is held against it. */
export interface HoldOptions {
  /**
   * A sidecar that no longer matches the session: `recompact` (default), a warning that the
   * compaction starts from scratch; `fail`, the session's one error (`context`, which only shows
   * the sidecar's view, has nothing to fall back on).
   */
  readonly stale?: 'recompact' | 'fail';
  /** `--strict`: the first warning, the read's or this check's, fails the session. */
  readonly strict?: boolean;
}

/**
 * A session as read, with the sidecar loaded before the read (`state`, null for none) held
 * against it: the subject the compaction core works on (its previous compaction the sidecar if
 * fresh), and the read's warnings followed by this check's.
 */
export function heldSubject<M extends AnyMessage>(
  path: string,
  read: { readonly session: Session<M>; readonly tokens: readonly number[]; readonly prefixHashes: PrefixHashes },
  state: CompactionState | null,
  options: HoldOptions = {},
): { readonly subject: CompactionSubject<M>; readonly warnings: readonly Diagnostic[] } {
  const { session } = read;
  const warnings: Diagnostic[] = [...session.warnings];
  let previous: CompactionSubject['previous'] = null;
  if (state) {
    const held = previousCompaction(path, state, session.messages, read.prefixHashes, options.stale ?? 'recompact');
    previous = held.previous;
    if (held.warning) warnings.push(held.warning);
  }
  // No prefix hashes in the subject: a lean read's reach only the sidecar's first kept message,
  // and full messages hash themselves; compact's second read brings its own (RunnableSubject).
  const subject: CompactionSubject<M> = { sessionName: basename(path), messages: session.messages, tokens: read.tokens, previous, recorded: session.recordedCompactions };
  if (previous && !livePrevious(subject)) {
    warnings.push({ file: sidecarPath(path), message: 'the agent compacted the session past this sidecar; starting from its compaction' });
  }
  if (options.strict) failOnWarnings(warnings);
  return { subject, warnings };
}
