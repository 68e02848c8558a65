/**
 * A long record's JSON crosses from a worker as UTF-8 bytes (pipeline/output.ts printedForm) and
 * is written as the same line its text would give; a short one stays text.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { printedForm } from '../src/pipeline/output.js';
import { jsonLinesWriter } from '../src/report/json-lines.js';

function written(json: string | Uint8Array): string {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  jsonLinesWriter(out).writeJson(json);
  return Buffer.concat(chunks).toString('utf8');
}

describe('printedForm', () => {
  it('keeps a short record as text', () => {
    const json = JSON.stringify({ session: 'a.jsonl', turns: [1, 2, 3] });
    expect(printedForm(json)).toBe(json);
  });

  it('gives a long record as bytes in a buffer of their own, written as its text is', () => {
    const json = JSON.stringify({ session: 'déjà vu → ✓', turns: Array.from({ length: 200_000 }, (_, turn) => ({ turn, path: `src/ü${turn}.ts` })) });
    const form = printedForm(json);
    expect(form).toBeInstanceOf(Uint8Array);
    const bytes = form as Uint8Array;
    // Its buffer holds these bytes alone, so the worker can move it (src/worker.ts).
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.byteLength).toBe(bytes.buffer.byteLength);
    expect(written(bytes)).toBe(written(json));
    expect(new TextDecoder().decode(bytes)).toBe(json);
  });
});
