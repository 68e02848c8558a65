/**
 * The bench's single-session yardstick reads 1 MiB at a time (scripts/bench/bare-lines.js): it must
 * parse every line the whole-file loop parses, including lines cut at a piece's edge, a line longer
 * than a piece, and a last line with no newline. The floor that counts characters must count
 * them as JavaScript does (UTF-16 units), or its row would undercount the work it stands for.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script of the bench, with no types
import { parseEveryLine, parseEveryLineInPieces, parseUsageLines } from '../../scripts/bench/bare-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'yardstick-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function values(read: (file: string, onValue: (value: unknown) => void) => void, file: string): unknown[] {
  const out: unknown[] = [];
  read(file, (value) => out.push(value));
  return out;
}

describe('the yardstick in pieces', () => {
  const cases: Array<[string, string]> = [
    ['lines of every length across piece edges', Array.from({ length: 5000 }, (_, i) => JSON.stringify({ i, text: 'x'.repeat((i * 7919) % 2000) })).join('\n') + '\n'],
    ['a line of 3 MiB between short ones', `{"a":1}\n${JSON.stringify({ long: 'y'.repeat(3 << 20) })}\n{"b":2}\n`],
    ['a last line with no newline, and empty lines', `{"a":1}\n\n\n{"b":"é→"}`],
    ['an empty file', ''],
  ];
  for (const [name, text] of cases) {
    it(name, () => {
      const file = join(dir, `${name.length}.jsonl`);
      writeFileSync(file, text);
      const whole = values(parseEveryLine, file);
      expect(values(parseEveryLineInPieces, file)).toEqual(whole);
      expect(whole.length).toBe(text.split('\n').filter(Boolean).length);
    });
  }
});

describe('the floor that counts characters', () => {
  it('counts every line without "usage": as JavaScript counts its characters, and parses the others', () => {
    // Characters of one to four bytes at every offset from a word's edge (the count goes four bytes at a time).
    const mixed = Array.from({ length: 8 }, (_, shift) => JSON.stringify({ text: `${'x'.repeat(shift)}${'é→ 😀 三 a'.repeat(9)}` }));
    const lines = ['{"type":"user","text":"plain"}', '{"type":"assistant","message":{"usage":{"input_tokens":3}}}', '{"a":"\\u00e9 \\n"}', ...mixed];
    const file = join(dir, 'counted.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const seen = values((path, onValue) => parseUsageLines(path, onValue, true), file);
    const others = lines.filter((_, index) => index !== 1);
    expect(seen).toEqual([JSON.parse(lines[1]!), others.reduce((sum, line) => sum + line.length, 0)]);
    expect(values(parseUsageLines, file)).toEqual([JSON.parse(lines[1]!)]);
  });
});
