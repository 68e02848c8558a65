/**
 * A long session's `replay --json` record goes out as it is made, not held whole until the
 * session's result comes back (68 MB of JSON under a preset on the 909 MB canonical session):
 * the task hands its warnings and then its record's pieces to a sink before it resolves, and
 * the main thread writes them in input order, each session's line whole (pipeline/record-parts.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { replaySessionTask } from '../../src/commands/replay.js';
import { DEFAULT_POLICY_VALUES } from '../../src/config/policy.js';
import type { Outcome } from '../../src/pipeline/batch.js';
import type { CommandOutput, Printed } from '../../src/pipeline/output.js';
import { printedText } from '../../src/pipeline/output.js';
import type { RecordPart } from '../../src/pipeline/record-parts.js';
import { RecordParts } from '../../src/pipeline/record-parts.js';
import { jsonPieces, jsonPiecesTo } from '../../src/report/json-pieces.js';
import { agentTurns, writeSession } from '../helpers/sessions.js';

const options = {
  format: 'auto',
  tokenizer: 'heuristic',
  strict: false,
  names: ['pi'],
  policy: { ...DEFAULT_POLICY_VALUES, context_limit: 20_000 },
  model: undefined,
  overrides: {},
  limits: {},
  simulatedSummaryTokens: null,
  relevance: true,
  json: true,
  chart: false,
  html: false,
  batch: false,
  strategy: 'truncate',
  strategyOptions: {},
} as const;

describe('jsonPiecesTo', () => {
  const record = { a: 'x'.repeat(3_000_000), list: Array.from({ length: 40 }, (_, i) => ({ i, s: 'é'.repeat(50_000) })) };

  it('hands each piece over as it is made, the pieces making JSON.stringify’s text', () => {
    const pieces: string[] = [];
    expect(jsonPiecesTo(record, 1 << 20, (piece) => pieces.push(piece))).toBeNull();
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    expect(pieces.join('')).toBe(JSON.stringify(record));
    // The same pieces as jsonPieces gives in bytes.
    const bytes = jsonPieces(record, 1 << 20);
    expect(printedText(bytes)).toBe(pieces.join(''));
  });

  it('gives a short record back as its text, handing nothing over', () => {
    const pieces: string[] = [];
    expect(jsonPiecesTo({ a: 1 }, 1 << 20, (piece) => pieces.push(piece))).toBe('{"a":1}');
    expect(pieces).toEqual([]);
  });
});

describe('replay task with a sink for its parts', () => {
  let dir: string;
  let path: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'record-parts-'));
    path = join(dir, 'long.jsonl');
    await writeSession(path, agentTurns(0, 4_000));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hands the record over in pieces before it resolves, and returns nothing more to print', async () => {
    const whole = await replaySessionTask.run({ path }, options);
    const wholeText = printedText(whole.printed);
    expect(wholeText.length).toBeGreaterThan(2 << 20);
    const parts: RecordPart[] = [];
    let resolved = false;
    const run = replaySessionTask.run({ path }, options, (part) => {
      expect(resolved).toBe(false);
      parts.push(part);
    });
    const streamed = await run.then((result) => {
      resolved = true;
      return result;
    });
    expect(streamed.printed).toEqual([]);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.every((part) => typeof part === 'string')).toBe(true);
    expect(parts.join('')).toBe(wholeText);
    expect(streamed.breaches).toEqual(whole.breaches);
  });
});

/** An output that notes what is written, in order. */
function notingOutput(): { output: CommandOutput; written: string[] } {
  const written: string[] = [];
  const output: CommandOutput = {
    json: true,
    record: (record) => written.push(`${JSON.stringify(record)}\n`),
    rendered: (text: Printed) => written.push(`${printedText(text)}\n`),
    piece: (text) => written.push(text),
    warn: (warning) => written.push(`warn ${String(warning)}\n`),
    close: async () => {},
  };
  return { output, written };
}

describe('RecordParts', () => {
  const inputs = [{ path: 'a' }, { path: 'b' }, { path: 'c' }];

  it('writes the session printed next as its parts come, and holds a later one’s until its turn', () => {
    const { output, written } = notingOutput();
    const records = new RecordParts(inputs, output);
    const emit = records.emit((outcome: Outcome<Printed>) => (outcome.ok ? output.rendered(outcome.value) : output.record({ session: outcome.path, status: 'failed' })));
    records.sink(inputs[1]!)({ warnings: ['b warned'] });
    records.sink(inputs[1]!)('{"b":');
    records.sink(inputs[0]!)('{"a":');
    expect(written).toEqual(['{"a":']);
    records.sink(inputs[0]!)('1}');
    records.sink(inputs[1]!)('2}');
    emit({ path: 'a', ok: true, value: [] });
    expect(written.join('')).toBe('{"a":1}\nwarn b warned\n{"b":2}');
    emit({ path: 'b', ok: true, value: [] });
    emit({ path: 'c', ok: true, value: '{"c":3}' });
    expect(written.join('')).toBe('{"a":1}\nwarn b warned\n{"b":2}\n{"c":3}\n');
  });

  it('ends a record cut short by its worker’s death, so that the failure is a line of its own', () => {
    const { output, written } = notingOutput();
    const records = new RecordParts(inputs.slice(0, 1), output);
    const emit = records.emit((outcome: Outcome<Printed>) => (outcome.ok ? output.rendered(outcome.value) : output.record({ session: outcome.path, status: 'failed' })));
    records.sink(inputs[0]!)('{"a":');
    emit({ path: 'a', ok: false, error: 'worker exited' });
    expect(written.join('').split('\n')).toEqual(['{"a":', '{"session":"a","status":"failed"}', '']);
  });
});

/** What the mocked process.exit throws, as the real one never returns. */
class Exited extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

describe('a signal while a record is printed in pieces', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.resetModules();
  });

  /** The interruption's module fresh (its state is the process's), its handlers installed as the CLI's. */
  async function interrupted() {
    const interrupt = await import('../../src/pipeline/interrupt.js');
    vi.spyOn(process, 'exit').mockImplementation(((code: number) => {
      throw new Exited(code);
    }) as never);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    interrupt.stopAtOnceOnSignal();
    return interrupt.installInterruptHandlers(130);
  }

  it('stops the run once the open record is whole, not in the middle of its line', async () => {
    const uninstall = await interrupted();
    try {
      const { RecordParts: Parts } = await import('../../src/pipeline/record-parts.js');
      const { output, written } = notingOutput();
      const inputs = [{ path: 'a' }, { path: 'b' }];
      const records = new Parts(inputs, output);
      const emit = records.emit((outcome: Outcome<Printed>) => outcome.ok && output.rendered(outcome.value));
      records.sink(inputs[0]!)('{"a":');
      process.emit('SIGINT', 'SIGINT');
      records.sink(inputs[0]!)('1}');
      records.sink(inputs[1]!)('{"b":2}');
      expect(() => emit({ path: 'a', ok: true, value: [] })).toThrow(new Exited(130));
      expect(written.join('')).toBe('{"a":1}\n');
    } finally {
      uninstall();
    }
  });

  it('stops at once when no record is open', async () => {
    const uninstall = await interrupted();
    try {
      expect(() => process.emit('SIGINT', 'SIGINT')).toThrow(new Exited(130));
    } finally {
      uninstall();
    }
  });
});
