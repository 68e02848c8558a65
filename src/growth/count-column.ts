import { grown } from '../formats/grown.js';

/**
 * A column of token counts appended one at a time (growth facts, a few a message): 4 bytes a
 * count while every count is a 32-bit whole number, where a number[] grown by push takes 8 and
 * reserves up to half again. A count that is not (a tokenizer's fraction, a huge one) moves the
 * column to 8-byte floats, so every count reads back exactly as it was pushed.
 */
export class CountColumn {
  private values: Int32Array | Float64Array = new Int32Array(1024);
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(count: number): void {
    let values = this.values;
    if (values instanceof Int32Array && (count | 0) !== count) values = Float64Array.from(values);
    if (this.size === values.length) values = grown(values, values.length * 2);
    values[this.size++] = count;
    this.values = values;
  }

  /** The count at `index` (undefined past the end, as an array's). */
  at(index: number): number | undefined {
    return index < this.size ? this.values[index] : undefined;
  }

  /** A column of the counts at `order` (positions in this column). */
  pick(order: readonly number[]): CountColumn {
    const picked = new CountColumn();
    for (const index of order) picked.push(this.values[index]!);
    return picked;
  }
}
