/**
 * `replay` reproduces the bill (issue 30 item 4): the recorded session costs what it billed, and
 * a policy that changes nothing saves nothing. A property over random sessions (reported usage
 * that grows and shrinks as an agent's own compactions make it, calls with no usage, copies,
 * cache expiries, one-hour writes, random prices) and random policies that never compact; and the
 * same on every real fixture through the command line.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactionPolicy } from '../../src/compaction/policy.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import type { CostSplit } from '../../src/cost/billing.js';
import type { Rates } from '../../src/pricing/catalog.js';
import { flatRate } from '../../src/pricing/catalog.js';
import type { PresetName } from '../../src/replay/presets.js';
import { PRESET_NAMES, presetPolicy } from '../../src/replay/presets.js';
import { policyCosts, recordedCalls, recordedCost } from '../../src/replay/savings.js';
import { replayReport } from '../../src/replay/simulate.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

/** Far above any prompt below: no policy reaches its trigger, none overflows. */
const NEVER = 1_000_000_000;

const callSpec = fc.record({
  /** The reported prompt (null: no usage), which may shrink as after an agent's compaction. */
  prompt: fc.option(fc.integer({ min: 1, max: 400_000 }), { nil: null }),
  output: fc.nat({ max: 8_000 }),
  /** How the prompt splits: the cached share read, the share written, the one-hour share of the writes. */
  read: fc.double({ min: 0, max: 1, noNaN: true }),
  written: fc.double({ min: 0, max: 1, noNaN: true }),
  oneHour: fc.boolean(),
  /** Minutes since the previous message: some beyond five minutes, some beyond an hour. */
  gap: fc.oneof(fc.nat({ max: 4 }), fc.integer({ min: 6, max: 59 }), fc.integer({ min: 61, max: 300 })),
  copied: fc.boolean(),
  tool: fc.option(fc.nat({ max: 3_000 }), { nil: null }),
});

const sessionSpec = fc.array(fc.record({ prompt: fc.nat({ max: 2_000 }), calls: fc.array(callSpec, { minLength: 1, maxLength: 6 }) }), { minLength: 1, maxLength: 10 });

type SessionSpec = typeof sessionSpec extends fc.Arbitrary<infer T> ? T : never;

/** Turns of a user prompt and assistant calls, a tool result after each call that asks for one. */
function buildSession(spec: SessionSpec): Message[] {
  const messages: Message[] = [];
  let minutes = 0;
  const at = () => new Date(Date.UTC(2026, 0, 1) + minutes * 60_000).toISOString();
  const push = (message: Omit<Message, 'id' | 'line' | 'timestamp'>) => messages.push({ ...message, id: `m${messages.length + 1}`, line: messages.length + 1, timestamp: at() });
  const text = (length: number): ContentBlock[] => [{ type: 'text', text: 'x'.repeat(length) }];
  let tool = 0;
  for (const turn of spec) {
    push({ role: 'user', content: text(turn.prompt) });
    turn.calls.forEach((call, position) => {
      minutes += call.gap;
      const asks = call.tool !== null && position < turn.calls.length - 1;
      const id = `t${++tool}`;
      const content: ContentBlock[] = asks ? [{ type: 'tool_request', id, name: 'read', arguments: { path: id } }] : text(40);
      const usage =
        call.prompt === null
          ? undefined
          : (() => {
              const cacheRead = Math.floor(call.prompt * call.read);
              const cacheWrite = Math.floor((call.prompt - cacheRead) * call.written);
              return { input: call.prompt - cacheRead - cacheWrite, output: call.output, cacheRead, cacheWrite, ...(call.oneHour ? { cacheWrite1h: cacheWrite } : {}) };
            })();
      push({ role: 'assistant', content, ...(usage ? { usage } : {}), ...(call.copied ? { copiedFrom: 'parent.jsonl' } : {}) });
      if (asks) push({ role: 'user', content: [{ type: 'tool_result', tool_request_id: id, output: 'y'.repeat(call.tool ?? 0), is_error: false }] });
    });
  }
  return messages;
}

const usd = fc.double({ min: 0, max: 100, noNaN: true });
const ratesSpec = fc.record({ input: usd, output: usd, cacheRead: usd, cacheWrite: usd, cacheWrite1h: usd }).map(
  (prices): Rates => ({
    input: flatRate(prices.input),
    output: flatRate(prices.output),
    cacheRead: flatRate(prices.cacheRead),
    cacheWrite: flatRate(prices.cacheWrite),
    cacheWrite1h: flatRate(prices.cacheWrite1h),
  }),
);

/** A preset at a window no prompt reaches, or our own policy with a trigger no prompt reaches. */
const policySpec: fc.Arbitrary<PresetName | CompactionPolicy> = fc.oneof(
  fc.constantFrom(...PRESET_NAMES),
  fc.record({ keep: fc.nat({ max: 50_000 }), percent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }), rule: fc.constantFrom('tool-safe' as const, 'conservative' as const) }).map(
    ({ keep, percent, rule }): CompactionPolicy => ({
      ...DEFAULT_POLICY,
      contextLimit: NEVER,
      ...(percent === null ? {} : { trigger: { kind: 'percent', percent } }),
      keepRecentTokens: keep,
      cutRule: rule,
    }),
  ),
);

/** The bill as the spend ledger would give it: any split will do, the property is about the difference. */
const billSpec = fc.record({ input: usd, cacheWrite: usd, cacheRead: usd, output: usd }).map((split): CostSplit => ({ ...split, total: split.input + split.cacheWrite + split.cacheRead + split.output }));

describe('a policy that never compacts', () => {
  it('costs exactly the bill and saves $0.00, cache-aware and naive, on any session', async () => {
    await fc.assert(
      fc.asyncProperty(sessionSpec, policySpec, ratesSpec, billSpec, async (spec, policySetting, rates, billed) => {
        const messages = buildSession(spec);
        const tokens = estimateAll(messages);
        const policy = typeof policySetting === 'string' ? presetPolicy(policySetting, NEVER) : policySetting;
        const result = await replayReport({ sessionName: 's', messages, tokens, policy, strategy: truncateStrategy });
        // opencode prunes without compacting; these sessions are too small for it to, but say so.
        expect(result.totals.prunes).toBe(0);
        expect(result.totals.compactions).toBe(0);
        const facts = recordedCalls(messages, providerCalls(messages, tokens));
        const recorded = recordedCost(result, rates, facts, billed);
        const costs = policyCosts(result, rates, facts, recorded);
        expect(costs.savedCachedUsd).toBe(0);
        expect(costs.savedNaiveUsd).toBe(0);
        // The bill, and the estimate for calls with no usage (apart from the bill) when there are any.
        expect(costs.costUsd).toBe(recorded.startUsd);
        if (recorded.estimatedCalls === 0) expect(costs.costUsd).toBe(billed.total);
        else expect(recorded.startUsd).toBe(billed.total + recorded.estimated.total);
        expect(Math.round(costs.savedCachedUsd * 100)).toBe(0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('on every real fixture', () => {
  it('every preset that only compacts, and the default policy, at a window never reached, cost the recorded figure, and it is the bill inspect prints', async () => {
    // opencode prunes old tool outputs whatever the window: it is not a policy that changes nothing.
    const policies = ['custom', ...PRESET_NAMES.filter((name) => name !== 'opencode')].join(',');
    const dir = join(FIXTURES, 'real');
    const replayed = jsonLines((await runCli(['replay', '--json', '--jobs', '1', '--policy', policies, '--context-limit', String(NEVER), dir])).stdout);
    const inspected = jsonLines((await runCli(['inspect', '--json', '--jobs', '1', dir])).stdout);
    const spend = new Map(inspected.filter((record) => record['session']).map((record) => [record['session'], record['spend']]));
    // The sessions whose own model has a price (the others have no what-if in dollars) and whose every billed call has one.
    const sessions = replayed.filter((record) => record['session'] && record['cost'] && record['policies'][0].costs);
    expect(sessions.length).toBeGreaterThanOrEqual(10);
    for (const record of sessions) {
      // The recorded figure is the bill, to the cent and beyond; the no-usage estimate is apart.
      expect(record['cost'].total_usd).toBe(spend.get(record['session']).cost.total_usd);
      const start = record['estimated_requests'] > 0 ? record['cost_priced_usd'] + record['cost_estimated_usd'] : record['cost'].total_usd;
      for (const policy of record['policies']) {
        expect(policy.totals.compactions + policy.totals.prunes).toBe(0);
        expect(policy.savings).toEqual({ naive_usd: 0, cache_aware_usd: 0 });
        expect(policy.costs.cost_usd).toBe(start);
      }
    }
  });
});

describe("docs/audit.md's worked example", () => {
  it('codex at 100,000 on the marot/spotter session: the bill less the simulated difference', async () => {
    const session = join(FIXTURES, 'real', 'claude-code', 'marot_spotter', '258c7280-ae70-4798-800f-63464d01a85d.jsonl');
    const [record] = jsonLines((await runCli(['replay', '--json', '--policy', 'codex', '--context-limit', '100000', session])).stdout);
    const inspected = jsonLines((await runCli(['inspect', '--json', session])).stdout)[0]!;
    const codex = record!['policies'][0];
    const round = (value: number) => Number(value.toFixed(4));
    expect(record!['cost'].total_usd).toBe(inspected['spend'].cost.total_usd);
    expect(round(record!['cost'].total_usd)).toBe(12.2257);
    expect(record!['billed_requests']).toBe(156);
    expect(codex.totals).toMatchObject({ compactions: 3, input_tokens_before: 15_121_271, input_tokens_after: 10_341_645, summarizer_input_tokens: 282_831, summarizer_output_tokens: 1335 });
    const { cache_model: cache, naive, summarizer } = codex.costs;
    expect([cache.before.total_usd, cache.after.total_usd, cache.after.total_usd - summarizer.total_usd, summarizer.total_usd].map(round)).toEqual([10.6062, 9.3243, 9.1495, 0.1748]);
    expect(round(codex.savings.cache_aware_usd)).toBe(1.2819);
    expect(codex.savings.cache_aware_usd).toBe(cache.before.total_usd - cache.after.total_usd);
    expect(record!['estimated_requests']).toBe(0);
    expect(codex.costs.cost_usd).toBe(record!['cost'].total_usd - codex.savings.cache_aware_usd);
    expect(round(codex.costs.cost_usd)).toBe(10.9438);
    expect([naive.before.total_usd, naive.after.total_usd, codex.savings.naive_usd].map(round)).toEqual([76.5788, 54.1282, 22.4506]);
  });
});
