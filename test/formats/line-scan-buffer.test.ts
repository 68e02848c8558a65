/**
 * The read buffer a line scan lends to the next one (formats/json/line-scan.ts): two scans under way at
 * once never share it, a scan left half-way gives it back, and a scan after a long line (a grown
 * buffer) still reads its own bytes; a sniff's peek borrows it too, grows in it, and never takes
 * it from a scan under way. Each line is compared with the file's own text.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peekJsonValues, scanLines } from '../../src/formats/json/line-scan.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-scan-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file of `count` distinct lines of about `width` bytes each (large enough to borrow the buffer). */
async function linesFile(name: string, count: number, width: number): Promise<{ path: string; lines: string[] }> {
  const lines = Array.from({ length: count }, (_, index) => `{"file":"${name}","line":${index},"pad":"${name.repeat(width)}"}`);
  const path = join(dir, `${name}.jsonl`);
  await writeFile(path, `${lines.join('\n')}\n`);
  return { path, lines };
}

describe('the lent read buffer', () => {
  it('is never shared by two scans under way at once', async () => {
    const a = await linesFile('a', 300, 4000);
    const b = await linesFile('b', 300, 4000);
    // A finished scan leaves its buffer to be lent.
    for (const raw of scanLines(a.path)) expect(raw.bytes.length).toBeGreaterThan(0);
    const scanA = scanLines(a.path);
    const scanB = scanLines(b.path);
    for (let index = 0; index < 300; index++) {
      // Each line read only after the other scan has moved on.
      const lineA = scanA.next().value!;
      const lineB = scanB.next().value!;
      expect(lineB.bytes.toString('utf8')).toBe(b.lines[index]);
      expect(lineA.bytes.toString('utf8')).toBe(a.lines[index]);
    }
    expect(scanA.next().done).toBe(true);
    expect(scanB.next().done).toBe(true);
  });

  it('comes back from a scan left half-way and after a line longer than itself', async () => {
    const small = await linesFile('c', 200, 2000);
    const long = await linesFile('d', 3, 1_500_000);
    const left = scanLines(small.path);
    left.next();
    left.return(undefined);
    for (const file of [long, small, long, small]) {
      const each: string[] = [];
      for (const raw of scanLines(file.path)) each.push(raw.bytes.toString('utf8'));
      expect(each).toEqual(file.lines);
    }
  });

  it('is lent to a peek, which grows in it and reads its own bytes, never a scan under way', async () => {
    // Lines of 50 KB: the peek's first read (64 KB) holds one, so it grows twice to hold four.
    const peeked = await linesFile('e', 4, 50_000);
    const scanned = await linesFile('f', 300, 4000);
    const parsed = peeked.lines.map((line) => JSON.parse(line) as unknown);
    expect(peekJsonValues(peeked.path, 20, 256 << 10)).toMatchObject({ values: parsed, whole: true });
    const scan = scanLines(scanned.path);
    for (let index = 0; index < 300; index++) {
      // A peek between each of the scan's lines: neither may read the other's bytes.
      expect(peekJsonValues(peeked.path, 20, 256 << 10).values).toEqual(parsed);
      expect(scan.next().value!.bytes.toString('utf8')).toBe(scanned.lines[index]);
    }
    expect(peekJsonValues(peeked.path, 2, 256 << 10)).toMatchObject({ values: parsed.slice(0, 2), whole: true });
  });
});
