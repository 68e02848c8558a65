import { describe, expect, it } from 'vitest';
import { CountColumn } from '../../src/growth/count-column.js';

describe('CountColumn', () => {
  it('reads back every count as pushed, past its first allocation, whole or not', () => {
    const column = new CountColumn();
    const pushed: number[] = [];
    for (let i = 0; i < 5000; i++) {
      // Whole counts first, then a fraction and a count past 32 bits move it to floats.
      const count = i === 3000 ? 2.5 : i === 4000 ? 2 ** 40 : i * 7;
      column.push(count);
      pushed.push(count);
    }
    expect(column.length).toBe(pushed.length);
    expect(pushed.map((_, index) => column.at(index))).toEqual(pushed);
    expect(column.at(pushed.length)).toBeUndefined();
  });

  it('picks the counts at the positions asked, in that order', () => {
    const column = new CountColumn();
    for (const count of [5, 6, 7, 8]) column.push(count);
    const picked = column.pick([3, 0, 2]);
    expect([picked.at(0), picked.at(1), picked.at(2), picked.length]).toEqual([8, 5, 7, 3]);
  });
});
