/**
 * Sums of token counts over index ranges in O(log n), with point updates (a Fenwick tree). Replay
 * asks for the tokens of a window or a span at every simulated compaction, and a pruning policy
 * shrinks single messages as it goes; summing the range each time made replay quadratic in the
 * session's length. Pure data structure; what the counts mean is left to the callers.
 *
 * Sums of whole numbers below 2^53 are exact in any order, so `sum` equals estimate.ts `sum` over
 * the same values bit for bit. Token counts are whole (chars/4 rounded up, tokenizer counts,
 * reported usage); should a value ever not be, every sum is taken directly, in index order, as
 * estimate.ts takes it, so the answer never depends on the tree.
 */
import { sum } from './estimate.js';

export class RangeSums {
  /**
   * The counts: the caller's own array until the first `add` copies it. Most sums never change
   * (only a pruning replay adds), and a copy of a long session's estimates is 8 bytes a message.
   */
  private counts: readonly number[];
  private copied = false;
  /** tree[k] (1-based) holds the sum of counts (k - lowbit(k), k]. */
  private readonly tree: Float64Array;
  private magnitude = 0;
  private whole = true;

  constructor(values: readonly number[]) {
    this.counts = values;
    this.tree = new Float64Array(values.length + 1);
    for (let k = 1; k <= values.length; k++) {
      const value = this.counts[k - 1] ?? 0;
      this.note(value);
      this.tree[k]! += value;
      const parent = k + (k & -k);
      if (parent <= values.length) this.tree[parent]! += this.tree[k]!;
    }
  }

  /** The counts as they are now (a live view once `add` has been called: later adds change it). */
  get values(): readonly number[] {
    return this.counts;
  }

  /** Adds `delta` to the count at `index`. */
  add(index: number, delta: number): void {
    if (!this.copied) {
      this.counts = [...this.counts];
      this.copied = true;
    }
    (this.counts as number[])[index] = (this.counts[index] ?? 0) + delta;
    this.note(delta);
    for (let k = index + 1; k < this.tree.length; k += k & -k) this.tree[k]! += delta;
  }

  /** Σ counts over [from, to), clamped to the array like estimate.ts `sum`. */
  sum(from: number, to: number): number {
    if (!this.whole) return sum(this.counts, from, to);
    const start = Math.max(0, from);
    const end = Math.min(this.counts.length, to);
    return end <= start ? 0 : this.prefix(end) - this.prefix(start);
  }

  private prefix(end: number): number {
    let total = 0;
    for (let k = end; k > 0; k -= k & -k) total += this.tree[k]!;
    return total;
  }

  /** Keeps track of whether every partial sum is still an exact whole number. */
  private note(value: number): void {
    this.magnitude += Math.abs(value);
    if (!Number.isInteger(value) || this.magnitude > Number.MAX_SAFE_INTEGER) this.whole = false;
  }
}
