/**
 * `replay` with the summarizer: a given summary size (`--summary-tokens`, no calls) and the
 * real summarizer against the fake provider, on the bundled bug-report trace.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';
import { useLlmTest } from '../helpers/llm.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const POLICY = ['--context-limit', '80000'];

const t = useLlmTest();

const compactionsOf = (record: Record<string, any>) => record.turns.flatMap((turn: any) => turn.compactions);

test('--summary-tokens N simulates summaries of N tokens and estimates what the summarizer would read', async () => {
  const result = await runCli(['replay', BUG, ...POLICY, '--summary-tokens', '2000', '--json', '--price-input', '15', '--price-output', '75'], { env: t.scratch.env });
  expect(result.exitCode).toBe(0);
  const [record] = jsonLines(result.stdout);
  expect(record).toMatchObject({ strategy: 'summarize', simulated_summary_tokens: 2000 });
  const compactions = compactionsOf(record!);
  // Each compaction gets under the trigger (50,000) at once: two, at turns 3 and 8.
  expect(compactions).toHaveLength(2);
  expect(compactions.every((event: any) => event.tokens_after <= 50_000)).toBe(true);
  // History summaries are N tokens plus the file lists and the summary's wrapper; both cuts split
  // a turn, so each also carries a 2,000-token turn-prefix summary.
  expect(compactions.map((event: any) => event.summary_tokens)).toEqual([4138, 4164]);
  expect(record!.totals.summarizer_output_tokens).toBe(4 * 2000);
  // The relevance filter drops superseded file reads from what the summarizer reads (README "Relevance filter").
  expect(record!.totals.summarizer_input_tokens).toBe(16_874);
  const truncate = jsonLines((await runCli(['replay', BUG, ...POLICY, '--json', '--price-input', '15', '--price-output', '75'], { env: t.scratch.env })).stdout)[0]!;
  expect(truncate.totals.summarizer_input_tokens).toBe(0);
  // Bigger summaries and the summarizer's own tokens cost more than truncate's one-liners.
  const afterUsd = (r: Record<string, any>) => r.policies[0].costs.naive.after.total_usd as number;
  expect(afterUsd(record!)).toBeGreaterThan(afterUsd(truncate));
  const summarizerCost = (16_874 * 15 + 8_000 * 75) / 1_000_000;
  expect(afterUsd(record!)).toBeCloseTo((record!.totals.input_tokens_after * 15 + record!.totals.output_tokens * 75) / 1_000_000 + summarizerCost, 6);
});

test('--strategy summarize replays with the real summarizer and charges its measured usage', async () => {
  const fake = await t.start();
  // On replay, --model names the session's model (prices, window); the summarizer's is --summarizer-model.
  const result = await runCli(['replay', BUG, ...POLICY, '--strategy', 'summarize', '--json', '--base-url', fake.url, '--summarizer-model', 'fake-model'], {
    env: t.scratch.env,
  });
  expect(result.exitCode).toBe(0);
  const [record] = jsonLines(result.stdout);
  // Two compactions, each a history and a turn-prefix summary.
  expect(compactionsOf(record!)).toHaveLength(2);
  expect(fake.requests).toHaveLength(4);
  expect(fake.requests.every((request) => request.answered === 'summary')).toBe(true);
  expect(record!.totals.summarizer_input_tokens).toBe(fake.requests.reduce((total, request) => total + request.promptTokens, 0));
  expect(record!.totals.summarizer_output_tokens).toBe(fake.requests.reduce((total, request) => total + Math.ceil(request.reply!.length / 4), 0));
  // The second compaction folds into the first's summary.
  expect(fake.requests.filter((request) => request.user.includes('<previous-summary>'))).toHaveLength(1);
});

test('--summary-tokens with --strategy truncate is a usage error', async () => {
  const result = await runCli(['replay', BUG, '--summary-tokens', '500', '--strategy', 'truncate'], { env: t.scratch.env });
  expect(result.exitCode).toBe(2);
  expect(result.stderr).toContain('--summary-tokens simulates the summarize strategy');
});
