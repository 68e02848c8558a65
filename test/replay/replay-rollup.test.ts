/**
 * `replay` over many sessions (issue 29 item 4): the roll-up per policy is the sum of the
 * sessions replayed one at a time, the same whatever the worker count, recomputed byte for byte
 * from the saved per-session records, and its top sessions are the ones that save most.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyInput, RollupInput } from '../../src/replay/rollup.js';
import { replayRollup, TOP_SESSIONS } from '../../src/replay/rollup.js';
import { replayRollupJson } from '../../src/replay/rollup-report.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

const REAL = join(FIXTURES, 'real');
const ARGS = ['replay', '--policy', 'pi,codex,opencode', '--context-limit', '100000'];

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

describe('replay over many sessions', () => {
  it('ends with a roll-up that is the sum of each session replayed alone', async () => {
    const run = jsonLines((await runCli([...ARGS, '--json', '--jobs', '1', REAL])).stdout);
    const rollup = run.pop()!['rollup'];
    expect(run.every((record) => typeof record['session'] === 'string')).toBe(true);
    // Each session on its own: one record and no roll-up.
    const alone = [];
    for (const record of run) {
      const lines = jsonLines((await runCli([...ARGS, '--json', record['session']])).stdout);
      expect(lines).toHaveLength(1);
      alone.push(lines[0]!);
    }
    expect(rollup.sessions).toBe(alone.length);
    expect(rollup.requests).toBe(sum(alone.map((record) => record.requests)));
    expect(rollup.input_tokens).toBe(sum(alone.map((record) => record.input_tokens)));
    const priced = alone.filter((record) => record.cost !== null);
    expect(rollup.priced_sessions).toBe(priced.length);
    // The bills' priced calls, as inspect's roll-up adds them; the no-usage estimates apart.
    expect(rollup.cost_usd).toBeCloseTo(sum(alone.map((record) => record.cost_priced_usd)), 9);
    expect(rollup.unpriced_requests).toBe(sum(alone.map((record) => record.unpriced_requests)));
    expect(rollup.cost_estimated_usd).toBeCloseTo(sum(alone.map((record) => record.cost_estimated_usd ?? 0)), 9);
    const days = new Map<string | null, number>();
    for (const record of alone) for (const day of record.spend_by_day) days.set(day.day, (days.get(day.day) ?? 0) + day.cost_usd);
    expect(rollup.spend_by_day.map((day: { day: string | null }) => day.day)).toEqual([...days.keys()].sort());
    for (const day of rollup.spend_by_day) expect(day.cost_usd).toBeCloseTo(days.get(day.day)!, 9);

    expect(rollup.policies.map((policy: { name: string }) => policy.name)).toEqual(['pi', 'codex', 'opencode']);
    for (const [position, policy] of rollup.policies.entries()) {
      const mine = alone.map((record) => record.policies[position]);
      const pricedMine = mine.filter((entry) => entry.costs !== null);
      expect(policy).toMatchObject({
        sessions: alone.length,
        compacting_sessions: mine.filter((entry) => entry.totals.compactions > 0).length,
        compactions: sum(mine.map((entry) => entry.totals.compactions)),
        prunes: sum(mine.map((entry) => entry.totals.prunes)),
        thrashing_sessions: mine.filter((entry) => entry.thrash.detected).length,
        input_tokens_before: sum(mine.map((entry) => entry.totals.input_tokens_before)),
        input_tokens_after: sum(mine.map((entry) => entry.totals.input_tokens_after)),
        summarizer_input_tokens: sum(mine.map((entry) => entry.totals.summarizer_input_tokens)),
        priced_sessions: pricedMine.length,
      });
      expect(policy.input_tokens_saved).toBe(policy.input_tokens_before - policy.input_tokens_after);
      expect(policy.cost_usd).toBeCloseTo(sum(pricedMine.map((entry) => entry.costs.cost_usd)), 9);
      expect(policy.saved_cache_aware_usd).toBeCloseTo(sum(pricedMine.map((entry) => entry.savings.cache_aware_usd)), 9);
      expect(policy.saved_naive_usd).toBeCloseTo(sum(pricedMine.map((entry) => entry.savings.naive_usd)), 9);
      expect(policy.summarizer_usd).toBeCloseTo(sum(pricedMine.map((entry) => entry.costs.summarizer.total_usd)), 9);
      // Every policy's cost across the sessions it prices is their bills (and no-usage estimates) less what it saved.
      const start = sum(alone.filter((_, at) => mine[at].costs !== null).map((record) => record.cost_priced_usd + (record.cost_estimated_usd ?? 0)));
      expect(policy.cost_usd).toBeCloseTo(start - policy.saved_cache_aware_usd, 9);
      // The sessions it compacted or pruned in, most saved first (dollars, then tokens).
      const ranked = alone
        .map((record, at) => ({ record, entry: mine[at] }))
        .filter(({ entry }) => entry.totals.compactions + entry.totals.prunes > 0)
        .sort((a, b) => (b.entry.savings?.cache_aware_usd ?? -Infinity) - (a.entry.savings?.cache_aware_usd ?? -Infinity))
        .slice(0, TOP_SESSIONS);
      expect(policy.top_sessions.map((entry: { session: string }) => entry.session)).toEqual(ranked.map(({ record }) => record.session));
      expect(policy.top_sessions.length).toBeGreaterThan(0);
    }
  });

  it('is the same roll-up in worker threads, and again from the saved records, byte for byte', async () => {
    const single = (await runCli([...ARGS, '--json', '--jobs', '1', REAL])).stdout.trimEnd().split('\n');
    const parallel = (await runCli([...ARGS, '--json', '--jobs', '3', REAL])).stdout.trimEnd().split('\n');
    expect(parallel.at(-1)).toBe(single.at(-1));
    const records = single.slice(0, -1).map((line) => JSON.parse(line) as RollupInput);
    expect(JSON.stringify(replayRollupJson(replayRollup(records)))).toBe(single.at(-1));
  });

  it('prints the roll-up in 80 columns after the last session, with the figures of the record', async () => {
    const { stdout } = await runCli([...ARGS, REAL]);
    const rollup = jsonLines((await runCli([...ARGS, '--json', REAL])).stdout).pop()!['rollup'];
    const text = stdout.slice(stdout.indexOf('what-if across'));
    expect(text.startsWith(`what-if across ${rollup.sessions} sessions`)).toBe(true);
    expect(Math.max(...text.split('\n').map((line) => line.length))).toBeLessThanOrEqual(80);
    const usd = (value: number) => (value < 0 ? `-$${(-value).toFixed(2)}` : `$${value.toFixed(2)}`);
    for (const policy of rollup.policies) {
      const row = text.split('\n').find((line) => line.startsWith(` ${policy.name} `) && line.includes('$'))!;
      expect(row.trim().split(/\s+/)).toEqual([policy.name, usd(policy.cost_usd), usd(policy.saved_cache_aware_usd), usd(policy.summarizer_usd), usd(policy.saved_naive_usd)]);
      expect(text).toContain(`${policy.name}: the sessions it saves most in`);
    }
    // One session: no roll-up.
    const one = await runCli([...ARGS, join(REAL, 'codex', 'codemie-ai_codemie-code_rollout-019e1625-tui.jsonl')]);
    expect(one.stdout).not.toContain('what-if across');
  });
});

describe('the roll-up of records', () => {
  const policy = (name: string, saved: number | null, tokens: number, compactions = 1): PolicyInput => ({
    name,
    totals: { compactions, prunes: 0, no_gain: 0, would_thrash: 0, input_tokens_before: 1_000, input_tokens_after: 1_000 - tokens, summarizer_input_tokens: 0, summarizer_output_tokens: 0 },
    costs: saved === null ? null : { cost_usd: 10 - saved, summarizer: { total_usd: 0 } },
    savings: saved === null ? null : { naive_usd: saved * 2, cache_aware_usd: saved },
    thrash: { detected: false },
  });
  const record = (session: string, entry: PolicyInput, day: string | null = '2026-01-01'): RollupInput => ({
    session,
    requests: 1,
    input_tokens: 1_000,
    output_tokens: 10,
    cost: entry.costs ? { total_usd: 10 } : null,
    cost_priced_usd: entry.costs ? 10 : 0,
    unpriced_requests: entry.costs ? 0 : 1,
    cost_estimated_usd: 0,
    spend_by_day: entry.costs ? [{ day, cost_usd: 10 }] : [],
    policies: [entry],
  });

  it('keeps the top sessions bounded, most saved first, ties in the order met, unpriced last by tokens', () => {
    const records = [
      ...Array.from({ length: 3 * TOP_SESSIONS }, (_, i) => record(`s${i}`, policy('pi', i % 7, 100))),
      record('free', policy('pi', null, 900)),
      record('never', policy('pi', 50, 500, 0)),
    ];
    const [pi] = replayRollup(records).policies;
    expect(pi!.topSessions).toHaveLength(TOP_SESSIONS);
    // Savings of 6 (s6, s13, s20, s27), then 5 (s5, s12, s19, s26), then 4 (s4, s11).
    expect(pi!.topSessions.map((entry) => entry.session)).toEqual(['s6', 's13', 's20', 's27', 's5', 's12', 's19', 's26', 's4', 's11']);
    expect(pi!.sessions).toBe(3 * TOP_SESSIONS + 2);
    expect(pi!.compactingSessions).toBe(3 * TOP_SESSIONS + 1);
    expect(pi!.pricedSessions).toBe(3 * TOP_SESSIONS + 1);
    const few = replayRollup([record('a', policy('pi', null, 100)), record('b', policy('pi', -1, 5)), record('c', policy('pi', null, 300))]).policies[0]!;
    expect(few.topSessions.map((entry) => entry.session)).toEqual(['b', 'c', 'a']);
  });

  it('adds the bill by day across sessions, earliest first and undated last', () => {
    const rollup = replayRollup([record('a', policy('pi', 1, 1), '2026-02-02'), record('b', policy('pi', 1, 1), null), record('c', policy('pi', 1, 1), '2026-01-31'), record('d', policy('pi', 1, 1), '2026-02-02')]);
    expect(rollup.spendByDay).toEqual([
      { day: '2026-01-31', sessions: 1, costUsd: 10 },
      { day: '2026-02-02', sessions: 2, costUsd: 20 },
      { day: null, sessions: 1, costUsd: 10 },
    ]);
  });
});
