/**
 * The one path by which a compaction's sidecar is written, for this thread (one session) and a
 * worker's batch (several, their names made and their fsyncs waited for together: store.ts): the
 * sidecars the sessions' decisions hold are staged and committed, and each decision becomes its
 * outcome, `compacted` with the sidecar's path or `failed` with why it could not be written, its
 * `compaction_end` event added. A sidecar that fails fails alone.
 */
import { describeError } from '../errors.js';
import type { LogFields } from '../pipeline/log.js';
import { commitSidecars, stageSidecars } from '../sidecar/store.js';
import type { CompactOutcome, OutcomeOf } from './outcome.js';

/** A session decided (session.ts): its outcome, or a sidecar to write and the outcome it becomes once written. */
export type Decided =
  | { readonly kind: 'done'; readonly outcome: CompactOutcome }
  | {
      readonly kind: 'write';
      /** Where the sidecar goes: its path, checked by the read under the session's lock. */
      readonly sidecar: string;
      /** When the session's compaction started (performance.now()), for the end event's duration. */
      readonly started: number;
      readonly compacted: OutcomeOf<'compacted'>;
      /** The session's span and the end event's fields once written. */
      readonly span: LogFields;
      readonly end: LogFields;
    };

/**
 * Writes the sidecars of the decisions that hold one, together, `group` at a time (each staged
 * file stays open until its group commits: ulimit -n bounds them, sidecar/open-files.ts); every
 * decision's outcome, in order.
 */
export async function writeSidecars(decided: readonly Decided[], group = Number.MAX_SAFE_INTEGER): Promise<CompactOutcome[]> {
  const writes = decided.flatMap((entry) => (entry.kind === 'write' ? [{ path: entry.sidecar, state: entry.compacted.state }] : []));
  const committed: Awaited<ReturnType<typeof commitSidecars>> = [];
  for (let from = 0; from < writes.length; from += Math.max(1, group)) {
    committed.push(...(await commitSidecars(await stageSidecars(writes.slice(from, from + Math.max(1, group))))));
  }
  let next = 0;
  return decided.map((entry): CompactOutcome => {
    if (entry.kind === 'done') return entry.outcome;
    const written = committed[next++]!;
    const end = (fields: LogFields) => ({
      time: new Date().toISOString(),
      event: 'compaction_end',
      fields: { ...entry.span, ...fields, duration_ms: Math.round(performance.now() - entry.started) },
    });
    const { compacted } = entry;
    if (typeof written !== 'string') {
      const error = describeError(written);
      return { status: 'failed', session: compacted.session, error, stopsRun: false, warnings: compacted.warnings, events: [...compacted.events, end({ status: 'failed', error })] };
    }
    return { ...compacted, sidecar: written, events: [...compacted.events, end({ ...entry.end, sidecar: written })] };
  });
}
