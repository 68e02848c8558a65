/**
 * CI gates on a directory of sessions: one stderr line per breach and exit 3, distinct from a
 * failed session (1) and from bad usage (2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines, runCli, scratchCopy, sessionRecords } from './helpers/cli.js';

let dir = '';
let cleanup: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ dir, cleanup } = await scratchCopy('bug.jsonl', 'audit/growth.jsonl'));
});
afterAll(() => cleanup());

const gateLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('compactor: gate: '));

describe('inspect gates', () => {
  it('passes (exit 0) when every session is within the limits', async () => {
    const result = await runCli(['inspect', '--max-baseline', '100000', '--max-input-tokens', '5000000', '--max-cost', '100', dir]);
    expect(result.exitCode).toBe(0);
    expect(gateLines(result.stderr)).toEqual([]);
  });

  it('prints one line per breach and exits 3', async () => {
    const result = await runCli(['inspect', '--max-baseline', '50000', '--max-input-tokens', '1000000', '--max-cost', '10', dir]);
    expect(result.exitCode).toBe(3);
    // growth.jsonl (9,740 baseline, 51,920 tokens, $0.09) passes; bug.jsonl breaks all three.
    expect(gateLines(result.stderr)).toEqual([
      `compactor: gate: ${dir}/bug.jsonl: baseline 90,212 > 50,000 (--max-baseline)`,
      `compactor: gate: ${dir}/bug.jsonl: input tokens 4,277,423 > 1,000,000 (--max-input-tokens)`,
      `compactor: gate: ${dir}/bug.jsonl: cost $64.61 > $10.00 (--max-cost)`,
    ]);
  });

  it('lists breaches in the JSON record and keeps stdout NDJSON', async () => {
    const result = await runCli(['inspect', '--json', '--max-baseline', '9000', dir]);
    expect(result.exitCode).toBe(3);
    const records = sessionRecords(result.stdout);
    expect(records.map((record) => record.gates)).toEqual([
      [{ gate: 'max-baseline', limit: 9000, value: 90_212 }],
      [{ gate: 'max-baseline', limit: 9000, value: 9740 }],
    ]);
    expect(gateLines(result.stderr)).toHaveLength(2);
  });

  it('reads the priced calls when a model has no price: a warning and exit 3 for the breach, exit 1 only under --strict', async () => {
    const { dir: bare, cleanup: done } = await scratchCopy('real/pi/agent-sessions_pi_small_v3.jsonl', 'bug.jsonl');
    try {
      const result = await runCli(['inspect', '--max-cost', '1', bare]);
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toMatch(/pi_small_v3\.jsonl: the cost gate read the priced calls only: [\d,]+ calls? had no price/);
      expect(gateLines(result.stderr)).toEqual([`compactor: gate: ${bare}/bug.jsonl: cost $64.61 > $1.00 (--max-cost)`]);
      // Under the gate's limit: exit 0, the warning still said.
      const passing = await runCli(['inspect', '--max-cost', '100', bare]);
      expect(passing.exitCode).toBe(0);
      expect(passing.stderr).toContain('the cost gate read the priced calls only');
      const strict = await runCli(['inspect', '--max-cost', '100', '--strict', bare]);
      expect(strict.exitCode).toBe(1);
      expect(strict.stderr).toMatch(/pi_small_v3\.jsonl: the cost gate read the priced calls only: .* had no price/);
    } finally {
      await done();
    }
  });

  it('rejects a negative limit as a usage error (exit 2)', async () => {
    const result = await runCli(['inspect', '--max-baseline', '-5', dir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--max-baseline must be a number >= 0');
  });
});

describe('replay gates', () => {
  it('warns (not exit 1) when --max-cost has no price for a session; --strict fails it', async () => {
    const { dir: bare, cleanup: done } = await scratchCopy('audit/prune.jsonl', 'bug.jsonl');
    try {
      const result = await runCli(['replay', '--policy', 'pi', '--max-cost', '1', bare]);
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain(`compactor: warning: ${bare}/prune.jsonl: --max-cost was not checked: the model has no price`);
      expect(gateLines(result.stderr)).toEqual([`compactor: gate: ${bare}/bug.jsonl: pi: cost $64.61 > $1.00 (--max-cost)`]);
      const strict = await runCli(['replay', '--policy', 'pi', '--max-cost', '100', '--strict', bare]);
      expect(strict.exitCode).toBe(1);
      expect(strict.stderr).toContain('prune.jsonl: --max-cost was not checked');
    } finally {
      await done();
    }
  });

  it('checks each policy after compaction and names the policy', async () => {
    const result = await runCli(['replay', '--policy', 'pi,coop', '--context-limit', '80000', '--max-baseline', '60000', dir]);
    expect(result.exitCode).toBe(3);
    expect(gateLines(result.stderr)).toEqual([
      `compactor: gate: ${dir}/bug.jsonl: pi: baseline 60,261 > 60,000 (--max-baseline)`,
      `compactor: gate: ${dir}/bug.jsonl: coop: baseline 75,720 > 60,000 (--max-baseline)`,
    ]);
  });

  it('passes when the policy keeps the session under the gates', async () => {
    const result = await runCli(['replay', '--json', '--policy', 'codex', '--context-limit', '80000', '--max-baseline', '60000', dir]);
    expect(result.exitCode).toBe(0);
    // Each session's record, then the roll-up across them.
    const records = jsonLines(result.stdout);
    expect(records.pop()).toHaveProperty('rollup');
    expect(records.map((record) => record.policies[0].totals.max_baseline_after)).toEqual([58_884, 9740]);
    expect(records.every((record) => record.policies[0].gates.length === 0)).toBe(true);
  });

  it("gates the policy's cost: the recorded cost less its cache-aware saving, summaries included", async () => {
    const json = jsonLines((await runCli(['replay', '--json', '--policy', 'pi', '--context-limit', '80000', dir])).stdout);
    const cost = json[0]!.policies[0].costs.cost_usd as number;
    expect(cost).toBeCloseTo(json[0]!.cost.total_usd - json[0]!.policies[0].savings.cache_aware_usd, 12);
    const below = await runCli(['replay', '--policy', 'pi', '--context-limit', '80000', '--max-cost', (cost - 0.01).toFixed(2), dir]);
    expect(below.exitCode).toBe(3);
    expect(gateLines(below.stderr)).toEqual([
      `compactor: gate: ${dir}/bug.jsonl: pi: cost $${cost.toFixed(2)} > $${(cost - 0.01).toFixed(2)} (--max-cost)`,
    ]);
    const above = await runCli(['replay', '--policy', 'pi', '--context-limit', '80000', '--max-cost', (cost + 0.01).toFixed(2), dir]);
    expect(above.exitCode).toBe(0);
  });
});
