/**
 * A long record's JSON crosses from a worker as UTF-8 bytes made in pieces (pipeline/output.ts
 * printedJson, report/json-pieces.ts) and is written as the same line `JSON.stringify`'s text
 * would give; a short one stays text.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Printed } from '../../src/pipeline/output.js';
import { printedJson, printedText } from '../../src/pipeline/output.js';
import { jsonLinesWriter } from '../../src/report/json-lines.js';
import { JsonList } from '../../src/report/json-pieces.js';

function written(json: Printed): string {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  jsonLinesWriter(out).writeJson(json);
  return Buffer.concat(chunks).toString('utf8');
}

/** A record as long as a long session's replay, with what JSON.stringify leaves out or writes as null. */
function longRecord() {
  const turns = Array.from({ length: 60_000 }, (_, turn) => ({ turn, path: `src/ü${turn}.ts`, gone: undefined, note: turn % 7 === 0 ? '→ ✓ 😀' : null }));
  return {
    session: 'déjà vu → ✓',
    skipped: undefined,
    run: () => 1,
    nested: { deeper: { deepest: { list: [1, undefined, 'x'], when: new Date(0) } }, holes: [undefined, () => 2, Symbol('s')] },
    turns: new JsonList(turns, (turn) => ({ ...turn, double: turn.turn * 2 })),
    policies: [{ name: 'custom', turns: new JsonList(turns, (turn) => ({ turn: turn.turn })) }],
    ratio: Number.NaN,
  };
}

describe('printedJson', () => {
  it('keeps a short record as text', () => {
    const record = { session: 'a.jsonl', turns: new JsonList([1, 2, 3], (n) => ({ n })) };
    expect(printedJson(record)).toBe(JSON.stringify(record));
  });

  it('gives a long record as bytes in pieces, each in a buffer of its own, written as JSON.stringify writes it', () => {
    const record = longRecord();
    const json = JSON.stringify(record);
    expect(json.length).toBeGreaterThan(3 << 20);
    const form = printedJson(record);
    expect(Array.isArray(form)).toBe(true);
    const pieces = form as readonly Uint8Array[];
    expect(pieces.length).toBeGreaterThan(1);
    // Each piece's buffer holds its bytes alone, so the worker can move it (src/worker.ts).
    for (const piece of pieces) {
      expect(piece.byteOffset).toBe(0);
      expect(piece.byteLength).toBe(piece.buffer.byteLength);
    }
    expect(written(form)).toBe(written(json));
    expect(printedText(form)).toBe(json);
  });
});
