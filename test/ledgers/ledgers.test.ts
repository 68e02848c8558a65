/**
 * The two ledgers of a session (spend: every billed call; context: the live conversation), each
 * call priced at its own model's rates and token classes (one-hour cache writes included), and
 * the gates that read them. Sessions are built by hand so the numbers hold whatever the readers
 * produce; the CLI is run on canonical files for what a user sees.
 */
import { describe, expect, it } from 'vitest';
import { cachedTokens, cacheExpiry, cacheLifetime } from '../../src/replay/cache.js';
import { billedCalls, billedCost, buildLedgers } from '../../src/ledgers/ledgers.js';
import type { CostSplit } from '../../src/cost/billing.js';
import { callCost } from '../../src/cost/billing.js';
import { priceSession, pricingWarnings, resolvePricing } from '../../src/commands/pricing.js';
import type { Rates } from '../../src/pricing/catalog.js';
import { flatRate, lookupModel } from '../../src/pricing/catalog.js';
import { ledgersJson, renderLedgers } from '../../src/ledgers/report.js';
import type { Message, OffContextCall, Session, Usage } from '../../src/session/model.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { removeAfterTest, SessionBuilder, writeSessions } from '../helpers/session-builder.js';


function usage(input: number, cacheRead: number, cacheWrite: number, output: number, cacheWrite1h?: number): Usage {
  return { input, output, cacheRead, cacheWrite, ...(cacheWrite1h !== undefined ? { cacheWrite1h } : {}) };
}

function session(messages: readonly Message[], offContext: readonly OffContextCall[] = [], extra: Partial<Session> = {}): Session {
  return { path: 's.jsonl', format: 'canonical', messages, recordedCompactions: [], offContext, warnings: [], ...extra };
}

const user = (id: string, text: string, line: number): Message => ({ id, role: 'user', content: [{ type: 'text', text }], line });
const assistant = (id: string, text: string, line: number, reported?: Usage, model?: string): Message => ({
  id,
  role: 'assistant',
  content: [{ type: 'text', text }],
  line,
  ...(reported ? { usage: reported } : {}),
  ...(model ? { model } : {}),
});

function rates(input: number, output: number, cacheRead: number, cacheWrite: number): Rates {
  return { input: flatRate(input), output: flatRate(output), cacheRead: flatRate(cacheRead), cacheWrite: flatRate(cacheWrite), cacheWrite1h: flatRate(input * 2) };
}

/** The ledgers as inspect builds them: the session's calls, priced through commands/pricing.ts. */
async function ledgersOf(subject: Session, model?: string) {
  const calls = providerCalls(subject.messages, estimateAll(subject.messages), subject.recordedCompactions);
  return priceSession(subject, calls, { model, overrides: {}, contextLimit: undefined });
}

describe('one-hour cache writes', () => {
  it('cost twice the input price: 349,474 one-hour writes on Opus 4.6 add $1.31 to what five-minute ones cost', async () => {
    // The marot/spotter Claude Code 2.1 session: every one of its 349,474 cache writes is a
    // one-hour write; priced as five-minute writes it came to $10.54, where ccusage says $11.85.
    const written = [200_000, 100_000, 49_474];
    const claude = (oneHour: boolean) =>
      session(
        written.flatMap((write, i) => [
          user(`u${i}`, 'go on', 2 * i + 1),
          assistant(`a${i}`, 'done', 2 * i + 2, usage(3, 10_000, write, 100, oneHour ? write : 0), 'claude-opus-4-6'),
        ]),
        [],
        { format: 'claude-code', model: 'claude-opus-4-6' },
      );
    const { ledgers: five } = await ledgersOf(claude(false));
    const { ledgers: hour, pricing } = await ledgersOf(claude(true));
    expect(pricing.rates!.cacheWrite1h.base).toBe(10); // the catalog's one-hour price: 2 x $5 input
    expect(hour.spend).toMatchObject({ cacheWriteTokens: 349_474, cacheWrite1hTokens: 349_474 });
    expect(hour.spend.cost!.cacheWrite).toBeCloseTo((349_474 * 10) / 1e6, 12);
    expect(five.spend.cost!.cacheWrite).toBeCloseTo((349_474 * 6.25) / 1e6, 12);
    expect((hour.spend.cost!.total - five.spend.cost!.total).toFixed(2)).toBe('1.31');
    expect(hour.context.cost).toEqual(hour.spend.cost);
  });

  it('are priced at 2 x input where the catalog lists no one-hour price, and by --price-cache-write-1h', async () => {
    const subject = session([user('u1', 'hi', 1), assistant('a1', 'ok', 2, usage(0, 0, 1_000_000, 0, 1_000_000))]);
    const flagged = await resolvePricing(subject, undefined, { input: 3 });
    expect(flagged.rates!.cacheWrite1h.base).toBe(6);
    expect(callCost({ input: 0, cacheRead: 0, cacheWrite: 1_000_000, cacheWrite1h: 400_000, output: 0 }, flagged.rates!).cacheWrite).toBeCloseTo(0.6 * 3 + 0.4 * 6, 12);
    const overridden = await resolvePricing(subject, 'claude-opus-4-6', { cacheWrite1h: 7 });
    expect(overridden.rates!.cacheWrite1h.base).toBe(7);
    // gpt-5 lists no cache-write price at all: both lifetimes are derived from its input price.
    const gpt = (await lookupModel('gpt-5'))!;
    expect(gpt.rates.cacheWrite1h.base).toBe(gpt.rates.input.base * 2);
  });

  it('make the replayed cache live an hour, and its writes cost the one-hour price', () => {
    const calls = [
      { index: 1, cacheWrite: 1000, cacheWrite1h: 900 },
      { index: 3, cacheWrite: 200, cacheWrite1h: 200 },
    ];
    expect(cacheLifetime(calls)).toBe('1h');
    expect(cacheLifetime([{ cacheWrite: 1000, cacheWrite1h: 400 }])).toBe('5m');
    expect(cacheLifetime([{ cacheWrite: 0, cacheWrite1h: 0 }])).toBe('5m');
    const messages = [
      user('u1', 'a', 1),
      { ...assistant('a1', 'b', 2), timestamp: '2026-01-01T10:00:00Z' },
      user('u2', 'c', 3),
      { ...assistant('a2', 'd', 4), timestamp: '2026-01-01T10:30:00Z' },
    ];
    expect(cacheExpiry(messages, calls, '5m')).toEqual([false, true]);
    expect(cacheExpiry(messages, calls, '1h')).toEqual([false, false]);
    const steps = [
      { prompt: 1000, output: 0, unchanged: null, expired: false },
      { prompt: 1500, output: 0, unchanged: null, expired: false },
    ];
    expect(cachedTokens(steps, '1h').map((tokens) => tokens.cacheWrite1h)).toEqual([1000, 500]);
    expect(cachedTokens(steps).map((tokens) => tokens.cacheWrite1h)).toEqual([0, 0]);
  });
});

describe('spend and context', () => {
  // Prices a thousand times real ones, so the small calls below come to whole cents.
  const main = rates(10_000, 20_000, 1_000, 12_500);
  const small = rates(1_000, 2_000, 100, 1_250);
  const priceOf = (model: string | null) => (model === 'small' ? small : model === 'main' ? main : null);
  const offContext: OffContextCall[] = [
    { cause: 'abandoned-branch', usage: usage(10, 500, 0, 20), file: 's.jsonl', line: 5 },
    { cause: 'subagent', usage: usage(5, 0, 2000, 100), model: 'small', file: 'agent-1.jsonl', line: 2 },
    { cause: 'subagent', usage: usage(5, 2000, 320, 50), model: 'small', file: 'agent-1.jsonl', line: 4 },
    { cause: 'review', usage: usage(100, 0, 0, 10), file: 's.jsonl', line: 9 },
    { cause: 'aborted', usage: usage(0, 1000, 0, 0), file: 's.jsonl', line: 11 },
    { cause: 'unmatched', usage: usage(50, 0, 0, 5), file: 's.jsonl', line: 12 },
  ];
  const subject = session(
    [user('u1', 'hi', 1), assistant('a1', 'ok', 2, usage(100, 0, 1000, 50)), user('u2', 'x'.repeat(400), 3), assistant('a2', 'y'.repeat(40), 4)],
    offContext,
    { model: 'main' },
  );
  const calls = providerCalls(subject.messages, estimateAll(subject.messages));
  const billed = billedCalls(subject, calls);
  const ledgers = buildLedgers(billed, billed.map((call) => billedCost(call, priceOf)));
  /** Tokens x the prices above divided by 1,000: dollars. */
  const dollars = (thousandths: number) => thousandths / 1e3;
  const usd = (value: number) => `$${value.toFixed(2)}`;

  it('counts every billed call in spend and the conversation in context, one difference per cause', () => {
    const estimate = calls[1]!;
    expect(estimate.estimated).toBe(true);
    expect(ledgers.context).toMatchObject({ requests: 2, inputTokens: 1100 + estimate.input, cacheWriteTokens: 1000, outputTokens: 50 + estimate.output });
    expect(ledgers.spend).toMatchObject({ requests: 7, inputTokens: 1100 + 510 + 2005 + 2325 + 100 + 1000 + 50, cacheReadTokens: 3500, cacheWriteTokens: 3320 });
    expect(ledgers.notInContext.map((part) => [part.cause, part.ledger.requests])).toEqual([
      ['abandoned-branch', 1],
      ['subagent', 2],
      ['review', 1],
      ['aborted', 1],
      ['unmatched', 1],
    ]);
    expect(ledgers.notInSpend.map((part) => [part.cause, part.ledger.requests, part.ledger.inputTokens])).toEqual([['estimated', 1, estimate.input]]);
    const contextCall = dollars(100 * 10 + 1000 * 12.5 + 50 * 20);
    expect(ledgers.spend.cost!.total).toBeCloseTo(
      contextCall +
        dollars(10 * 10 + 500 * 1 + 20 * 20) +
        dollars(10 * 1 + 320 * 1.25 + 2000 * 0.1 + 2000 * 1.25 + 150 * 2) +
        dollars(100 * 10 + 10 * 20) +
        dollars(1000 * 1) +
        dollars(50 * 10 + 5 * 20),
      12,
    );
    expect(ledgers.context.cost!.total).toBeCloseTo(contextCall + dollars(estimate.input * 10 + estimate.output * 20), 12);
  });

  it('prices a subagent call at its own model', () => {
    const subagents = ledgers.notInContext.find((part) => part.cause === 'subagent')!.ledger;
    const expected = { input: dollars(10 * 1), cacheWrite: dollars(2320 * 1.25), cacheRead: dollars(2000 * 0.1), output: dollars(150 * 2) };
    for (const [key, value] of Object.entries(expected)) expect(subagents.cost![key as keyof typeof expected]).toBeCloseTo(value, 15);
    expect(subagents.cost!.total).toBeCloseTo(dollars(10 + 2320 * 1.25 + 200 + 300), 15);
  });

  it('says why the ledgers differ, one line per cause, with tokens and dollars', () => {
    const estimate = calls[1]!;
    const lines = renderLedgers(ledgers);
    const split = ({ input, cacheWrite, cacheRead, output, total }: CostSplit) =>
      `  input $${input.toFixed(2)}, cache write $${cacheWrite.toFixed(2)}, cache read $${cacheRead.toFixed(2)}, output $${output.toFixed(2)}, total $${total.toFixed(2)}`;
    expect(lines.slice(0, 5)).toEqual(['  spend: 7 calls', split(ledgers.spend.cost!), '  context: 2 calls', split(ledgers.context.cost!), '  why they differ:']);
    expect(lines.slice(5)).toEqual([
      `    abandoned branch: 1 call, 530 tokens, ${usd(dollars(10 * 10 + 500 * 1 + 20 * 20))}`,
      `    subagents: 2 calls, 4,480 tokens, ${usd(dollars(10 * 1 + 2320 * 1.25 + 2000 * 0.1 + 150 * 2))}`,
      `    review: 1 call, 110 tokens, ${usd(dollars(100 * 10 + 10 * 20))}`,
      `    aborted: 1 call, 1,000 tokens, ${usd(dollars(1000 * 1))}`,
      `    unmatched usage: 1 call, 55 tokens, ${usd(dollars(50 * 10 + 5 * 20))}`,
      `    estimated: 1 call, ~${(estimate.input + estimate.output).toLocaleString('en-US')} tokens, not in spend`,
    ]);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('gives --json its spend and context objects, each difference with its tokens and dollars', () => {
    const json = ledgersJson(ledgers);
    expect(Object.keys(json.spend)).toEqual([
      'requests',
      'input_tokens',
      'cache_read_input_tokens',
      'cache_creation_input_tokens',
      'cache_creation_1h_input_tokens',
      'output_tokens',
      'cost',
      'excluded_from_context',
    ]);
    expect(json.spend.excluded_from_context[1]).toEqual({
      cause: 'subagent',
      requests: 2,
      input_tokens: 4330,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 2320,
      cache_creation_1h_input_tokens: 0,
      output_tokens: 150,
      cost: expect.objectContaining({ total_usd: expect.closeTo(dollars(3410), 15) }),
    });
    expect(Object.keys(json.spend.excluded_from_context[1]!.cost!)).toEqual(['input_usd', 'cache_write_usd', 'cache_read_usd', 'output_usd', 'total_usd']);
    expect(json.context.excluded_from_spend).toHaveLength(1);
    expect(json.context.excluded_from_spend[0]).toMatchObject({ cause: 'estimated', requests: 1, cache_read_input_tokens: 0 });
  });

  it('has no cost for a ledger with a call whose model has no price, and says which', () => {
    const unknown = session([user('u1', 'hi', 1), assistant('a1', 'ok', 2, usage(10, 0, 0, 1))], [{ ...offContext[1]!, model: 'mystery' }], { model: 'main' });
    const billedUnknown = billedCalls(unknown, providerCalls(unknown.messages, estimateAll(unknown.messages)));
    const result = buildLedgers(billedUnknown, billedUnknown.map((call) => billedCost(call, priceOf)));
    expect(result.spend.cost).toBeNull();
    expect(result.spend.unpriced).toEqual(['mystery']);
    expect(result.context.cost!.total).toBeCloseTo(dollars(100 + 20), 12);
    expect(renderLedgers(result)[1]).toBe('  cost unknown (a model without prices)');
  });

  it('finds each model in the catalog, and --model replaces them all', async () => {
    const opus = session(
      [user('u1', 'hi', 1), assistant('a1', 'ok', 2, usage(0, 0, 1_000_000, 0), 'claude-opus-4-6')],
      [
        { cause: 'subagent', usage: usage(1_000_000, 0, 0, 0), model: 'claude-haiku-4-5', file: 'agent.jsonl', line: 1 },
        { cause: 'subagent', usage: usage(1_000_000, 0, 0, 0), model: 'no-such-model-9000', file: 'agent.jsonl', line: 2 },
      ],
      { model: 'claude-opus-4-6' },
    );
    const { pricing, ledgers: own } = await ledgersOf(opus);
    expect(pricing.models.map((entry) => [entry.model, entry.catalog?.id ?? null])).toEqual([
      ['claude-opus-4-6', 'claude-opus-4-6'],
      ['claude-haiku-4-5', 'claude-haiku-4-5'],
      ['no-such-model-9000', null],
    ]);
    expect(pricingWarnings(pricing)).toEqual(['model "no-such-model-9000" is not in the price catalog: no cost (pass --price-input/--price-output)']);
    expect(own.spend.cost).toBeNull();
    expect(own.context.cost!.cacheWrite).toBeCloseTo(6.25, 9);
    const { ledgers: asOpus } = await ledgersOf(opus, 'claude-opus-4-6');
    expect(asOpus.spend.cost!.input).toBeCloseTo(2 * 5, 9);
    const haikuOnly = session(opus.messages, [opus.offContext[0]!], { model: 'claude-opus-4-6' });
    expect((await ledgersOf(haikuOnly)).ledgers.notInContext[0]!.ledger.cost!.input).toBeCloseTo(1, 9);
  });
});

describe('inspect and its gates (CLI)', () => {
  // One call reports its usage (1,000 input tokens), the other does not: spend holds only the first.
  const partial = new SessionBuilder().user('read the file').assistant('reading');
  partial.records[1]!.metadata = { input_tokens: 1000, output_tokens: 10 };
  partial.user('and again ' + 'z'.repeat(8000)).assistant('done');
  const withModel = (builder: SessionBuilder) => {
    const copy = new SessionBuilder();
    copy.records.push(...builder.records.map((record) => ({ ...record })));
    (copy.records[1]!.metadata as Record<string, unknown>)['model'] = 'claude-opus-4-1';
    return copy;
  };

  it('reports both ledgers, says estimated calls are not in spend, and keeps totals as the context', async () => {
    const { path } = removeAfterTest(await writeSessions({ 'partial.jsonl': withModel(partial) }));
    const [record] = jsonLines((await runCli(['inspect', '--json', path('partial.jsonl')])).stdout);
    expect(record!.spend).toMatchObject({ requests: 1, input_tokens: 1000, output_tokens: 10, excluded_from_context: [] });
    expect(record!.context.requests).toBe(2);
    expect(record!.context.input_tokens).toBe(record!.totals.input_tokens);
    expect(record!.context.excluded_from_spend).toEqual([expect.objectContaining({ cause: 'estimated', requests: 1 })]);
    expect(record!.cost).toEqual(record!.context.cost);
    expect(record!.spend.cost.total_usd).toBeCloseTo((1000 * 15 + 10 * 75) / 1e6, 12);
    const estimated = record!.context.excluded_from_spend[0];
    const human = await runCli(['inspect', path('partial.jsonl')]);
    expect(human.stdout).toContain(`    estimated: 1 call, ~${(estimated.input_tokens + estimated.output_tokens).toLocaleString('en-US')} tokens, not in spend`);
    expect(human.stdout).toContain('  spend: 1 call\n');
  });

  it('gates spend unless --gate-ledger context is given; --max-baseline reads the context', async () => {
    const { path } = removeAfterTest(await writeSessions({ 'partial.jsonl': withModel(partial) }));
    const spendGate = await runCli(['inspect', '--max-input-tokens', '1500', '--max-cost', '0.02', path('partial.jsonl')]);
    expect(spendGate.exitCode).toBe(0);
    const contextGate = await runCli(['inspect', '--max-input-tokens', '1500', '--max-cost', '0.02', '--gate-ledger', 'context', path('partial.jsonl')]);
    expect(contextGate.exitCode).toBe(3);
    expect(contextGate.stderr).toMatch(/input tokens [\d,]+ > 1,500 \(--max-input-tokens\)/);
    expect(contextGate.stderr).toContain('(--max-cost)');
    const baseline = await runCli(['inspect', '--max-baseline', '1500', path('partial.jsonl')]);
    expect(baseline.exitCode).toBe(3);
    expect((await runCli(['inspect', '--gate-ledger', 'bill', path('partial.jsonl')])).exitCode).toBe(2);
  });

  it('prices every token class at each call\'s model, OpenAI cached input at its cache-read price', async () => {
    const mixed = new SessionBuilder().user('plan it').assistant('planned').user('write it').assistant('written');
    mixed.records[1]!.metadata = { input_tokens: 1000, cache_read_input_tokens: 9000, output_tokens: 100 };
    mixed.records[3]!.metadata = { input_tokens: 10, cache_read_input_tokens: 8000, cache_creation_input_tokens: 2000, output_tokens: 50 };
    (mixed.records[1]!.metadata as Record<string, unknown>)['model'] = 'gpt-5.1-codex';
    (mixed.records[3]!.metadata as Record<string, unknown>)['model'] = 'claude-sonnet-4-5';
    const { path } = removeAfterTest(await writeSessions({ 'mixed.jsonl': mixed }));
    const [record] = jsonLines((await runCli(['inspect', '--json', path('mixed.jsonl')])).stdout);
    const gpt = (await lookupModel('gpt-5.1-codex'))!.rates;
    const sonnet = (await lookupModel('claude-sonnet-4-5'))!.rates;
    expect(gpt.cacheRead.base).toBeLessThan(gpt.input.base);
    expect(record!.pricing.models.map((entry: { catalog_model: string }) => entry.catalog_model)).toEqual(['gpt-5.1', 'claude-sonnet-4-5']);
    const cost = record!.spend.cost;
    expect(cost.input_usd).toBeCloseTo((1000 * gpt.input.base + 10 * sonnet.input.base) / 1e6, 12);
    expect(cost.cache_read_usd).toBeCloseTo((9000 * gpt.cacheRead.base + 8000 * sonnet.cacheRead.base) / 1e6, 12);
    expect(cost.cache_write_usd).toBeCloseTo((2000 * sonnet.cacheWrite.base) / 1e6, 12);
    expect(cost.output_usd).toBeCloseTo((100 * gpt.output.base + 50 * sonnet.output.base) / 1e6, 12);
    expect(record!.spend).toMatchObject({ input_tokens: 20_010, cache_read_input_tokens: 17_000, cache_creation_input_tokens: 2000 });
    expect(record!.context.cost).toEqual(cost);
  });
});
