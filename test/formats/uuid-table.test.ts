/**
 * The chain's table of uuids (src/formats/uuid-table.ts) answers as a Map of the strings does:
 * uuids in their usual spelling (kept as bytes), the same uuid in capitals (another string),
 * near-uuids and ids of any other shape (kept as strings), through the table's growth.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UuidTable } from '../../src/formats/uuid-table.js';

/** A deterministic mix of keys: random uuids, sequential ones (far from random), their capitals, near misses. */
function keys(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const uuid = randomUUID();
    out.push(uuid);
    out.push(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    if (i % 7 === 0) out.push(uuid.toUpperCase());
    if (i % 11 === 0) out.push(`${uuid.slice(0, 35)}g`, uuid.replace(/-/g, ''), `${uuid}-`, `msg-${i}`);
  }
  return out;
}

describe('UuidTable', () => {
  it('finds what a Map finds, and misses what it misses', () => {
    const table = new UuidTable();
    const map = new Map<string, number>();
    const all = keys(5000);
    all.forEach((key, index) => {
      if (index % 3 === 2) return; // left out: must be missed
      expect(table.has(key)).toBe(map.has(key));
      table.set(key, index);
      map.set(key, index);
    });
    expect(table.size).toBe(map.size);
    for (const key of [...all, ...keys(200)]) expect(table.get(key)).toBe(map.get(key));
  });

  it('sets a new value for a key already there', () => {
    const table = new UuidTable();
    const uuid = randomUUID();
    table.set(uuid, 1);
    table.set(uuid, 2);
    expect(table.get(uuid)).toBe(2);
    expect(table.size).toBe(1);
  });
});
