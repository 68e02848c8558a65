/**
 * Where a forked Codex rollout replays its parent's history. Codex up to 0.147 (`codex fork` in
 * the terminal; the desktop app's fork, 0.119, wrote the same) starts a fork's rollout with its
 * own `session_meta` (naming `forked_from_id`) and then copies the parent's rollout into it,
 * line for line and restamped: the parent's `session_meta` first (a fork of a fork brings its
 * ancestors' too), then its items and its `token_count` events, written in one burst. What the
 * copy records is context of the fork (its first request sends it) but was billed in the
 * parent. Since 0.148 (`history_mode: "paginated"`) a fork refers to its parent's history
 * (`history_base`, `forked_from_ordinal_exclusive`) instead: its rollout holds only its own lines.
 *
 * The copy begins at the second `session_meta` and ends at the first line written more than
 * REPLAY_GAP_MS after the line before it: copying waits on nothing, while the fork's own lines
 * wait on the user or on a model call. Only this file decides it; codex.ts asks, line by line.
 */
import { asRecord } from './convert.js';

/**
 * The longest pause between two lines of one copy. The copy is a loop writing lines, a few
 * microseconds each; a second leaves room for a large line and a loaded machine, and a fork's
 * own first call is a model call away from the copy (the user types its prompt after the fork).
 */
export const REPLAY_GAP_MS = 1000;

/** Copying: `last` is the time of the latest line of the copy (null until a line says one). */
type ReplayState = { readonly kind: 'none' } | { readonly kind: 'copying'; last: number | null } | { readonly kind: 'done' };

export class ForkReplay {
  /** The thread the rollout was forked from (the first session_meta's `forked_from_id`). */
  private parent: string | undefined;
  private metas = 0;
  private state: ReplayState = { kind: 'none' };

  /** The parent thread the current line was copied from, or undefined for a line of this rollout's own. */
  get copiedFrom(): string | undefined {
    return this.state.kind === 'copying' ? this.parent : undefined;
  }

  /** Any line, before it is read: a line written after a pause ends the copy. */
  line(timestamp: string | undefined): void {
    if (this.state.kind !== 'copying') return;
    const at = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
    // A line without a time (a trimmed fixture) says nothing about the burst.
    if (Number.isNaN(at)) return;
    const last = this.state.last;
    if (last !== null && at - last > REPLAY_GAP_MS) this.state = { kind: 'done' };
    else this.state.last = last === null ? at : Math.max(last, at);
  }

  /** A session_meta line: the first is the rollout's own; a later one in a fork starts the copy. */
  meta(payload: Record<string, unknown>, timestamp: string | undefined): void {
    this.metas++;
    if (this.metas === 1) {
      const parent = asRecord(payload)?.['forked_from_id'];
      if (typeof parent === 'string' && parent !== '') this.parent = parent;
      return;
    }
    if (this.parent === undefined || this.state.kind !== 'none') return;
    const at = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
    this.state = { kind: 'copying', last: Number.isNaN(at) ? null : at };
  }
}
