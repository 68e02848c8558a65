/**
 * replay holds its simulated calls, refusals and turns as typed-array columns (replay/columns.ts)
 * and makes the objects only when a report reads them: the objects must be the ones pushed,
 * number for number (nulls, fractions and -0 included), key for key in the simulation's order,
 * across the columns' chunks. And the lists the simulation reads (tool pair marks, the token
 * sums' counts, a slim message's empty content) are held once, not copied.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallColumns, CompactionColumns, RefusalColumns, TurnColumns } from '../../src/replay/columns.js';
import type { ReplayCompaction, ReplayEvent, ReplayRefusal, SimulatedCall } from '../../src/replay/simulate.js';
import { replayColumns, replayReport, replaySession, withoutStates } from '../../src/replay/simulate.js';
import type { CompactionState } from '../../src/compaction/state.js';
import { customPolicy, presetPolicy } from '../../src/replay/presets.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { insideToolPairs } from '../../src/compaction/cut-sites.js';
import { RangeSums } from '../../src/tokens/range-sums.js';
import { slimmer } from '../../src/read/slim.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import type { Message } from '../../src/session/model.js';

const number = fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0));

const call = fc.record({
  index: fc.nat({ max: 2 ** 31 - 1 }),
  turn: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  before: number,
  after: number,
  output: number,
  unchanged: fc.option(number, { nil: null }),
});

const refusal = fc.record({
  refused: fc.constantFrom('no-gain' as const, 'would-thrash' as const),
  trigger: fc.constantFrom('proactive' as const, 'overflow' as const),
  callPosition: fc.nat({ max: 2 ** 31 - 1 }),
  turn: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  tokensBefore: number,
  tokensAfter: fc.option(number, { nil: null }),
  summarizer: fc.option(fc.record({ input: number, output: number, cached: fc.boolean(), estimated: fc.boolean() }), { nil: null }),
});

/** An object as its entries in order, nested ones likewise, -0 told from 0. */
function entries(object: object): unknown[] {
  return Object.entries(object).map(([key, value]) => [key, value !== null && typeof value === 'object' ? entries(value) : Object.is(value, -0) ? '-0' : value]);
}

/** The same values under the same keys in the same order. */
function same(made: readonly object[], pushed: readonly object[]): void {
  expect(made.map(entries)).toEqual(pushed.map(entries));
}

describe('replay columns', () => {
  it('give back each simulated call as pushed, then as sent', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 50 }), (calls: SimulatedCall[]) => {
        const columns = new CallColumns(calls.length);
        for (const { index, turn, before, output } of calls) columns.push({ index, turn, before, after: 0, output, unchanged: null });
        calls.forEach((pushed, position) => columns.sent(position, pushed.after, pushed.unchanged));
        const made = columns.objects();
        expect(made).toHaveLength(calls.length);
        same(made, calls);
        calls.forEach((pushed, position) => expect(columns.call(position)).toEqual({ index: pushed.index, input: pushed.before, output: pushed.output }));
      }),
    );
  });

  it('refuse more calls than they were made for', () => {
    const columns = new CallColumns(1);
    columns.push({ index: 0, turn: 1, before: 1, after: 1, output: 1, unchanged: null });
    expect(() => columns.push({ index: 1, turn: 1, before: 1, after: 1, output: 1, unchanged: null })).toThrow(/internal/);
  });

  it('give back refusals by range, summarizer calls in order, across chunks', () => {
    fc.assert(
      fc.property(fc.array(refusal, { minLength: 4_000, maxLength: 9_000 }), fc.array(fc.nat(), { maxLength: 6 }), (refusals: ReplayRefusal[], cuts) => {
        const columns = new RefusalColumns();
        for (const pushed of refusals) columns.push(pushed);
        expect(columns.length).toBe(refusals.length);
        const bounds = [0, ...cuts.map((cut) => cut % (refusals.length + 1)).sort((a, b) => a - b), refusals.length];
        const cursor = { summarizers: 0 };
        const made = bounds.slice(1).flatMap((to, k) => columns.objects(bounds[k]!, to, cursor));
        expect(made).toHaveLength(refusals.length);
        same(made, refusals);
      }),
      { numRuns: 5 },
    );
  });

  it('give back compactions by range as events, without their states, across chunks', () => {
    const compaction = fc.record({
      trigger: fc.constantFrom('proactive' as const, 'overflow' as const),
      beforeCallIndex: fc.nat({ max: 2 ** 31 - 1 }),
      callPosition: fc.nat({ max: 2 ** 31 - 1 }),
      turn: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      firstKeptMessageId: fc.string({ maxLength: 12 }),
      tokensBefore: number,
      tokensAfter: number,
      summaryTokens: number,
      carriedUserTokens: number,
      summarizer: fc.option(fc.record({ input: number, output: number, cached: fc.boolean(), estimated: fc.boolean() }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(compaction, { minLength: 4_000, maxLength: 9_000 }), fc.array(fc.nat(), { maxLength: 6 }), (events: ReplayEvent[], cuts) => {
        const columns = new CompactionColumns();
        for (const event of events) columns.push({ ...event, state: {} as CompactionState } satisfies ReplayCompaction);
        expect(columns.length).toBe(events.length);
        const bounds = [0, ...cuts.map((cut) => cut % (events.length + 1)).sort((a, b) => a - b), events.length];
        const made = bounds.slice(1).flatMap((to, k) => columns.objects(bounds[k]!, to));
        expect(made).toHaveLength(events.length);
        same(made, events);
      }),
      { numRuns: 5 },
    );
  });

  it("give back each turn's numbers", () => {
    const sums = [
      { requests: 3, baselineBefore: 10, baselineAfter: 8.5, inputTokensBefore: 30, inputTokensAfter: -0, outputTokens: 2 ** 40 },
      { requests: 0, baselineBefore: 0, baselineAfter: 0, inputTokensBefore: 0, inputTokensAfter: 0, outputTokens: 0 },
    ];
    const columns = new TurnColumns(sums.length);
    for (const turn of sums) columns.push(turn);
    same([columns.at(0), columns.at(1)], sums);
    expect(() => columns.push(sums[0]!)).toThrow(/internal/);
  });
});

/** A session that compacts and refuses often under a small window: prompts, tool calls, replies. */
function session(): Message[] {
  const messages: Message[] = [];
  let prompt = 500;
  for (let turn = 0; turn < 40; turn++) {
    messages.push({ id: `u${turn}`, role: 'user', content: [{ type: 'text', text: 'please '.repeat(40) }], line: messages.length + 1 });
    // From turn 20 on, a larger system prompt: no compaction gets the prompt under the trigger.
    if (turn === 20) prompt += 6_000;
    for (let step = 0; step < 3; step++) {
      prompt += 400;
      const id = `t${turn}-${step}`;
      messages.push({
        id: `a${turn}-${step}`,
        role: 'assistant',
        content: [{ type: 'tool_request', id, name: 'Read', arguments: { file_path: `/src/${step}.ts` } }],
        usage: { input: prompt, output: 20, cacheRead: 0, cacheWrite: 0 },
        line: messages.length + 1,
      });
      messages.push({ id: `r${turn}-${step}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: id, output: 'x'.repeat(1_500), is_error: false }], line: messages.length + 1 });
    }
    messages.push({ id: `a${turn}`, role: 'assistant', content: [{ type: 'text', text: 'done' }], usage: { input: prompt, output: 30, cacheRead: 0, cacheWrite: 0 }, line: messages.length + 1 });
  }
  return messages;
}

describe('replayColumns', () => {
  it("report() is replayReport's report, its calls and refusals keyed as the simulation makes them", async () => {
    const messages = session();
    const tokens = estimateAll(messages);
    const seen = { compactions: 0, refusals: 0 };
    for (const policy of [
      customPolicy({ ...DEFAULT_POLICY, contextLimit: 6_000, keepRecentTokens: 1_000, trigger: { kind: 'reserve', tokens: 2_000 } }),
      presetPolicy('codex', 8_000),
      presetPolicy('pi', 5_000),
    ]) {
      const input = { sessionName: 's', messages, tokens, policy, strategy: truncateStrategy };
      const report = (await replayColumns(input)).report();
      expect(report).toEqual(await replayReport(input));
      // The compactions as the simulation made them, less their states, key for key.
      const kept = withoutStates(await replaySession(input));
      expect(report.turns.map((turn) => turn.compactions.map(entries))).toEqual(kept.turns.map((turn) => turn.compactions.map(entries)));
      expect(report).toEqual(kept);
      expect(report.calls).toHaveLength(messages.filter((message) => message.role === 'assistant').length);
      for (const simulated of report.calls) expect(Object.keys(simulated)).toEqual(['index', 'turn', 'before', 'after', 'output', 'unchanged']);
      const refusals = report.turns.flatMap((turn) => turn.refusals);
      for (const refused of refusals) expect(Object.keys(refused)).toEqual(['refused', 'trigger', 'callPosition', 'turn', 'tokensBefore', 'tokensAfter', 'summarizer']);
      expect(report.totals.noGain + report.totals.wouldThrash).toBe(refusals.length);
      seen.compactions += report.totals.compactions;
      seen.refusals += refusals.length;
    }
    // Not vacuous: the policies compact and refuse (the refusals' summarizer calls are the unit test's above).
    expect(seen.compactions).toBeGreaterThan(10);
    expect(seen.refusals).toBeGreaterThan(0);
  });
});

describe('lists held once', () => {
  it('tool pair marks are a byte a message', () => {
    const marks = insideToolPairs(session());
    expect(marks).toBeInstanceOf(Uint8Array);
    expect([...marks.slice(0, 4)]).toEqual([0, 0, 1, 0]);
  });

  it("token sums read the caller's counts until one changes, and never change the caller's", () => {
    const counts = [1, 2, 3, 4];
    const sums = new RangeSums(counts);
    expect(sums.values).toBe(counts);
    sums.add(1, 10);
    expect(counts).toEqual([1, 2, 3, 4]);
    expect(sums.values).toEqual([1, 12, 3, 4]);
    const live = sums.values;
    sums.add(2, 1);
    expect(live).toEqual([1, 12, 4, 4]);
    expect(sums.sum(0, 4)).toBe(21);
  });

  it('slim messages without tool blocks share one empty list', () => {
    const slim = slimmer();
    const [first, second, tool] = session().map(slim);
    expect(first!.content).toHaveLength(0);
    expect(second!.content).not.toHaveLength(0);
    const text = slim({ id: 'x', role: 'assistant', content: [{ type: 'text', text: 'hi' }], line: 1 });
    expect(text.content).toBe(first!.content);
    expect(tool!.content).toHaveLength(1);
  });

  it("tool calls naming the same files share one arguments object, and keep each call's own", () => {
    const slim = slimmer();
    const call = (id: string, args: Record<string, unknown>) =>
      slim({ id, role: 'assistant', content: [{ type: 'tool_request', id, name: 'Edit', arguments: args }], line: 1 }).content[0] as { arguments: object };
    const first = call('a', { file_path: '/src/a.ts', old_string: 'x', new_string: 'y' });
    const again = call('b', { file_path: '/src/a.ts', old_string: 'z', new_string: 'w' });
    const other = call('c', { file_path: '/src/b.ts' });
    const edit = call('d', { command: 'view', path: '/src/a.ts' });
    expect(first.arguments).toEqual({ file_path: '/src/a.ts' });
    expect(again.arguments).toBe(first.arguments);
    expect(other.arguments).toEqual({ file_path: '/src/b.ts' });
    expect(edit.arguments).toEqual({ command: 'view', path: '/src/a.ts' });
    expect(call('e', { path: '/src/a.ts', command: 'view' }).arguments).toEqual({ path: '/src/a.ts', command: 'view' });
    expect(call('f', { command: 'view', path: '/src/a.ts' }).arguments).toBe(edit.arguments);
  });
});
