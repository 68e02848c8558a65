/**
 * Prices and windows from the offline catalog (@pydantic/genai-prices), the --model and
 * --price-* overrides, and the window as the default --context-limit.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookupModel } from '../../src/pricing/catalog.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const PRUNE = join(FIXTURES, 'audit', 'prune.jsonl');
const BUG_INPUT_TOKENS = 4_277_423;

describe('the catalog', () => {
  it('knows Opus 4.1 by its dated API name and by provider/model', async () => {
    const opus = await lookupModel('claude-opus-4-1-20250805');
    expect(opus).toMatchObject({ id: 'claude-opus-4-1', provider: 'anthropic', contextWindow: 200_000 });
    expect(opus!.rates.input.base).toBe(15);
    expect(opus!.rates.output.base).toBe(75);
    expect(opus!.rates.cacheRead.base).toBe(1.5);
    expect(opus!.rates.cacheWrite.base).toBe(18.75);
    expect((await lookupModel('anthropic/claude-opus-4-1'))?.id).toBe('claude-opus-4-1');
  });

  it('bills cache writes at the input price where the provider lists none (OpenAI)', async () => {
    const gpt = await lookupModel('gpt-4o');
    expect(gpt?.contextWindow).toBe(128_000);
    expect(gpt!.rates.cacheWrite).toEqual(gpt!.rates.input);
    expect(gpt!.rates.cacheRead.base).toBeLessThan(gpt!.rates.input.base);
  });

  it('does not guess an unknown model', async () => {
    expect(await lookupModel('no-such-model-9000')).toBeNull();
  });
});

describe('--model and --price-*', () => {
  it('prices a session by --model instead of the model it names', async () => {
    const [record] = jsonLines((await runCli(['inspect', '--json', '--price-model', 'gpt-4o', BUG])).stdout);
    const gpt = (await lookupModel('gpt-4o'))!;
    expect(record!.pricing).toMatchObject({ model: 'gpt-4o', catalog_model: 'gpt-4o', context_window: 128_000 });
    expect(record!.cost.input_usd).toBeCloseTo((BUG_INPUT_TOKENS * gpt.rates.input.base) / 1e6, 9);
  });

  it('overrides one rate and keeps the catalog for the others', async () => {
    const [record] = jsonLines((await runCli(['inspect', '--json', '--price-input', '10', BUG])).stdout);
    expect(record!.pricing).toMatchObject({ source: 'catalog+flags', usd_per_million: { input: 10, output: 75, cache_read: 1.5, cache_write: 18.75 } });
    expect(record!.cost.input_usd).toBeCloseTo((BUG_INPUT_TOKENS * 10) / 1e6, 9);
    expect(record!.cost.output_usd).toBeCloseTo((5_975 * 75) / 1e6, 9);
  });

  it('reports no cost for a session without a model, until prices are given', async () => {
    const bare = await runCli(['inspect', PRUNE]);
    expect(bare.exitCode).toBe(0);
    expect(bare.stdout).toContain('cost: unknown model (pass --model or --price-input/--price-output)');
    const [record] = jsonLines((await runCli(['inspect', '--json', PRUNE])).stdout);
    expect(record!.cost).toBeNull();
    expect(record!.pricing).toMatchObject({ model: null, source: null, context_window: 128_000 });
    const [priced] = jsonLines((await runCli(['inspect', '--json', '--price-input', '2', '--price-output', '8', PRUNE])).stdout);
    expect(priced!.pricing.usd_per_million).toEqual({ input: 2, output: 8, cache_read: 2, cache_write: 2, cache_write_1h: 4 });
    expect(priced!.cost.input_usd).toBeCloseTo((priced!.totals.input_tokens * 2) / 1e6, 12);
  });

  it('warns about a model the catalog does not know and falls back to a 128,000 window', async () => {
    const result = await runCli(['replay', '--json', '--price-model', 'no-such-model-9000', BUG]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('model "no-such-model-9000" is not in the price catalog: window 128,000');
    expect(jsonLines(result.stdout)[0]!.policies[0].policy.context_limit).toBe(128_000);
  });

  it('rejects a negative price as a usage error', async () => {
    const result = await runCli(['inspect', '--price-cache-read', '-1', BUG]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--price-cache-read must be a number >= 0');
  });
});

describe('the window as the default --context-limit', () => {
  it("uses the catalog window of the session's model, 128,000 without one, and the flag when given", async () => {
    const opus = jsonLines((await runCli(['replay', '--json', '--policy', 'custom,opal', BUG])).stdout)[0]!;
    expect(opus.policies.map((p: { policy: { context_limit: number } }) => p.policy.context_limit)).toEqual([200_000, 200_000]);
    expect(opus.policies[1].policy.keep_recent_tokens).toBe(50_000);
    const bare = jsonLines((await runCli(['replay', '--json', PRUNE])).stdout)[0]!;
    expect(bare.policies[0].policy.context_limit).toBe(128_000);
    const flagged = jsonLines((await runCli(['replay', '--json', '--policy', 'opal', '--context-limit', '90000', BUG])).stdout)[0]!;
    expect(flagged.policies[0].policy).toMatchObject({ context_limit: 90_000, keep_recent_tokens: 22_500 });
  });
});
