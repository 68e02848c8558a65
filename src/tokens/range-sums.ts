/**
 * Sums of token counts over index ranges in O(log n), with point updates (a Fenwick tree). Replay
 * asks for the tokens of a window or a span at every simulated compaction, and a pruning policy
 * shrinks single messages as it goes; summing the range each time made replay quadratic in the
 * session's length. A cut's search asks the converse too (how far back the keep budget reaches,
 * how far forward a span holds enough to summarize), answered by descending the tree. Pure data
 * structure; what the counts mean is left to the callers.
 *
 * Sums of whole numbers below 2^53 are exact in any order, so `sum` equals estimate.ts `sum` over
 * the same values bit for bit. Token counts are whole (chars/4 rounded up, tokenizer counts,
 * reported usage); should a value ever not be, every sum is taken directly, in index order, as
 * estimate.ts takes it, so the answer never depends on the tree. The searches need the running
 * sums to only grow: with a negative count they scan, as `scannedSums` does.
 */
import { sum } from './estimate.js';

/**
 * Sums over index ranges and the two searches a cut makes (compaction/cut-point.ts). Every
 * implementation answers exactly what the scans of `scannedSums` answer.
 */
export interface SpanSums {
  /** Σ counts over [from, to), clamped to the counts. */
  sum(from: number, to: number): number;
  /** The largest i in [start, end) with sum(i, end) >= amount, or start - 1 when there is none. */
  reachBack(start: number, end: number, amount: number): number;
  /** The smallest j in (start, end) with sum(start, j) >= amount, or `end` when there is none. */
  reachForward(start: number, end: number, amount: number): number;
}

function scanBack(counts: readonly number[], start: number, end: number, amount: number): number {
  let total = 0;
  for (let i = end - 1; i >= start; i--) {
    total += counts[i] ?? 0;
    if (total >= amount) return i;
  }
  return start - 1;
}

function scanForward(counts: readonly number[], start: number, end: number, amount: number): number {
  let total = counts[start] ?? 0;
  for (let j = start + 1; j < end; j++) {
    if (total >= amount) return j;
    total += counts[j] ?? 0;
  }
  return end;
}

/** SpanSums by scanning the counts: each answer costs the distance it covers (one cut of a session). */
export function scannedSums(counts: readonly number[]): SpanSums {
  return {
    sum: (from, to) => sum(counts, from, to),
    reachBack: (start, end, amount) => scanBack(counts, start, end, amount),
    reachForward: (start, end, amount) => scanForward(counts, start, end, amount),
  };
}

export class RangeSums implements SpanSums {
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
  private growing = true;
  /** The largest power of two not above the number of counts (where a descent starts). */
  private readonly topStep: number;

  constructor(values: readonly number[]) {
    this.counts = values;
    this.tree = new Float64Array(values.length + 1);
    for (let k = 1; k <= values.length; k++) {
      const value = this.counts[k - 1] ?? 0;
      this.note(value);
      if (value < 0) this.growing = false;
      this.tree[k]! += value;
      const parent = k + (k & -k);
      if (parent <= values.length) this.tree[parent]! += this.tree[k]!;
    }
    let step = 1;
    while (step * 2 <= values.length) step *= 2;
    this.topStep = values.length === 0 ? 0 : step;
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
    if ((this.counts[index] ?? 0) < 0) this.growing = false;
    for (let k = index + 1; k < this.tree.length; k += k & -k) this.tree[k]! += delta;
  }

  /** Σ counts over [from, to), clamped to the array like estimate.ts `sum`. */
  sum(from: number, to: number): number {
    if (!this.whole) return sum(this.counts, from, to);
    const start = Math.max(0, from);
    const end = Math.min(this.counts.length, to);
    return end <= start ? 0 : this.prefix(end) - this.prefix(start);
  }

  reachBack(start: number, end: number, amount: number): number {
    if (!this.searchable()) return scanBack(this.counts, start, end, amount);
    // Past the counts each index counts 0, as in the scan: only an amount of 0 or less is reached there.
    if (amount <= 0) return end - 1 >= start ? end - 1 : start - 1;
    const to = Math.min(end, this.counts.length);
    if (to <= start) return start - 1;
    // sum(i, end) >= amount for every i up to some point: the last i whose prefix is at most
    // prefix(end) - amount, then set exactly (that difference may round when amount is not whole).
    let i = Math.min(this.lastPrefixAtMost(this.prefix(to) - amount), to - 1);
    while (i + 1 < to && this.sum(i + 1, end) >= amount) i++;
    while (i >= start && this.sum(i, end) < amount) i--;
    return i < start ? start - 1 : i;
  }

  reachForward(start: number, end: number, amount: number): number {
    if (!this.searchable()) return scanForward(this.counts, start, end, amount);
    if (start + 1 >= end) return end;
    // The first j whose prefix reaches prefix(start) + amount, then set exactly as above.
    let j = Math.min(Math.max(this.lastPrefixBelow(this.prefix(Math.max(0, start)) + amount) + 1, start + 1), end);
    while (j > start + 1 && this.sum(start, j - 1) >= amount) j--;
    while (j < end && this.sum(start, j) < amount) j++;
    return j;
  }

  /** Whether the descents hold: whole counts (exact sums) that are never negative (sums only grow). */
  private searchable(): boolean {
    return this.whole && this.growing;
  }

  /** The largest k in [0, n] with prefix(k) <= limit (0 when none is: prefix(0) is 0). */
  private lastPrefixAtMost(limit: number): number {
    return this.descend(limit, true);
  }

  /** The largest k in [0, n] with prefix(k) < limit (0 when none is). */
  private lastPrefixBelow(limit: number): number {
    return this.descend(limit, false);
  }

  private descend(limit: number, orEqual: boolean): number {
    let at = 0;
    let left = limit;
    for (let step = this.topStep; step > 0; step >>= 1) {
      const next = at + step;
      if (next >= this.tree.length) continue;
      const node = this.tree[next]!;
      if (orEqual ? node <= left : node < left) {
        at = next;
        left -= node;
      }
    }
    return at;
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
