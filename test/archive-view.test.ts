/**
 * The archive view (inspect over several sessions, and `report` over saved shards): the session
 * table ranked by each --sort key and cut to --top with a bounded list, its totals row, the
 * --detail order, 80 columns, the archive-wide gates and their exit codes, and the merge of
 * three shards equal byte for byte to one run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionRow, SortKey } from '../src/ledgers/archive.js';
import { rowOrder, SessionRanking, SORT_KEYS } from '../src/ledgers/archive.js';
import { weekOf } from '../src/ledgers/rollup.js';
import { renderSessionTable } from '../src/ledgers/archive-report.js';
import { FIXTURES, jsonLines, runCli, sessionRecords } from './helpers/cli.js';

const AGENTS = join(FIXTURES, 'agents');

function row(n: number, over: Partial<SessionRow> = {}): SessionRow {
  return {
    session: `s${String(n).padStart(4, '0')}.jsonl`,
    agent: 'claude-code',
    project: '/p',
    startDay: `2026-01-${String((n % 28) + 1).padStart(2, '0')}`,
    model: 'm',
    calls: (n * 7) % 13,
    costUsd: ((n * 37) % 101) / 10,
    unpricedCalls: 0,
    peakTokens: (n * 1_009) % 5_000,
    windowTokens: 200_000,
    inputTokens: (n * 7_919) % 100_000,
    recordedCompactions: n % 3,
    ...over,
  };
}

describe('the session ranking', () => {
  const rows = Array.from({ length: 500 }, (_, n) => row(n));

  it.each(SORT_KEYS)('keeps the top N by %s, as a full sort would, and folds every row into the totals', (key: SortKey) => {
    const ranking = new SessionRanking(key, 7);
    for (const one of rows) ranking.add(one);
    const table = ranking.table();
    expect(table.rows).toEqual([...rows].sort(rowOrder(key)).slice(0, 7));
    expect(table.totals.sessions).toBe(500);
    expect(table.totals.calls).toBe(rows.reduce((sum, one) => sum + one.calls, 0));
    expect(table.totals.inputTokens).toBe(rows.reduce((sum, one) => sum + one.inputTokens, 0));
    expect(table.totals.peakTokens).toBe(Math.max(...rows.map((one) => one.peakTokens)));
    expect(table.totals.recordedCompactions).toBe(rows.reduce((sum, one) => sum + one.recordedCompactions, 0));
    expect(table.totals.costUsd).toBeCloseTo(rows.reduce((sum, one) => sum + one.costUsd, 0), 9);
  });

  it('ranks the date latest first, undated last, ties by session name', () => {
    const ranking = new SessionRanking('date', 3);
    [row(1, { startDay: null }), row(2, { startDay: '2026-01-05' }), row(3, { startDay: '2026-01-09' }), row(4, { startDay: '2026-01-05' })].forEach((one) => ranking.add(one));
    expect(ranking.table().rows.map((one) => one.session)).toEqual(['s0003.jsonl', 's0002.jsonl', 's0004.jsonl']);
  });

  it('merges shards\' tables into the one table of all their rows, exactly', () => {
    const whole = new SessionRanking('cost', 10);
    const shards = [new SessionRanking('cost', 10), new SessionRanking('cost', 10), new SessionRanking('cost', 10)];
    rows.forEach((one, n) => {
      whole.add(one);
      shards[n % 3]!.add(one);
    });
    const merged = new SessionRanking('cost', 10);
    for (const shard of shards) merged.addTable(shard.table());
    expect(merged.table()).toEqual(whole.table());
  });

  it('fits 80 columns with long projects, models and large figures, keeping the end of the project', () => {
    const ranking = new SessionRanking('cost', 20);
    for (let n = 0; n < 30; n++) {
      ranking.add(
        row(n, {
          agent: n % 2 ? 'anthropic-messages' : 'opencode-json',
          project: `/home/someone/work/a-very-long-client-name/monorepo/packages/service-${n}`,
          model: 'claude-sonnet-4-5-20250929-with-a-long-suffix',
          calls: 1_234_567,
          costUsd: 12_345.67,
          unpricedCalls: n % 3,
          inputTokens: 9_876_543_210,
          peakTokens: 987_654,
          recordedCompactions: 1_234,
        }),
      );
    }
    const lines = renderSessionTable(ranking.table()).trimEnd().split('\n');
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(80);
    // The project's end, which tells the projects apart, is kept.
    expect(lines[2]).toMatch(/^\S+ +…\S*-\d+ /);
  });

  it('starts a week on its Monday', () => {
    expect(weekOf('2026-02-04')).toBe('2026-02-02');
    expect(weekOf('2026-02-02')).toBe('2026-02-02');
    expect(weekOf('2026-02-01')).toBe('2026-01-26');
  });
});

describe('inspect over several sessions', () => {
  let records: Record<string, any>[] = [];
  let sessions: Record<string, any>[] = [];
  let rollup: Record<string, any> = {};
  beforeAll(async () => {
    const result = await runCli(['inspect', '--json', '--jobs', '1', AGENTS]);
    expect(result.exitCode).toBe(0);
    records = jsonLines(result.stdout);
    sessions = sessionRecords(result.stdout);
    rollup = records.at(-1)!['rollup'];
  });

  it('ends with the roll-up record holding the ranked rows (costliest first) and the totals of every session', () => {
    expect(rollup['sort']).toBe('cost');
    expect(rollup['top']).toBe(20);
    const rows = rollup['session_rows'] as Record<string, any>[];
    expect(rows).toHaveLength(sessions.length);
    const costs = rows.map((one) => one['cost_usd'] as number);
    expect(costs).toEqual([...costs].sort((a, b) => b - a));
    const bySession = new Map(sessions.map((one) => [one['session'], one]));
    for (const one of rows) {
      const record = bySession.get(one['session'])!;
      expect(one['calls']).toBe(record['spend']['requests']);
      expect(one['input_tokens']).toBe(record['spend']['input_tokens']);
      expect(one['peak_context_tokens']).toBe(record['totals']['max_baseline_input_tokens']);
      expect(one['recorded_compactions']).toBe(record['recorded_compactions'].length);
      expect(one['cost_usd']).toBeCloseTo(record['spend']['cost']['total_usd'], 8);
    }
    const totals = rollup['session_totals'];
    expect(totals['sessions']).toBe(sessions.length);
    expect(totals['calls']).toBe(rollup['total']['requests']);
    expect(totals['input_tokens']).toBe(rollup['total']['input_tokens']);
    expect(totals['cost_usd']).toBe(rollup['total']['cost']['total_usd']);
  });

  it.each([
    ['peak', (record: Record<string, any>) => record['totals']['max_baseline_input_tokens'] as number],
    ['input', (record: Record<string, any>) => record['spend']['input_tokens'] as number],
    ['calls', (record: Record<string, any>) => record['spend']['requests'] as number],
  ])('ranks by --sort %s and keeps --top rows; the totals still count every session', async (key, figure) => {
    const result = await runCli(['inspect', '--json', '--jobs', '1', '--sort', key, '--top', '4', AGENTS]);
    const view = jsonLines(result.stdout).at(-1)!['rollup'];
    const expected = [...sessions].sort((a, b) => figure(b) - figure(a) || (a['session'] < b['session'] ? -1 : 1)).slice(0, 4);
    expect(view['session_rows'].map((one: Record<string, any>) => one['session'])).toEqual(expected.map((one) => one['session']));
    expect(view['session_totals']['sessions']).toBe(sessions.length);
  });

  it('prints the view first, in 80 columns, and no session report without --detail; with it, each report after the roll-up', async () => {
    const plain = await runCli(['inspect', '--jobs', '1', '--by', 'month', '--sort', 'date', AGENTS]);
    expect(plain.exitCode).toBe(0);
    const lines = plain.stdout.split('\n');
    expect(lines[0]).toMatch(/^16 sessions, the top 16 by start day/);
    expect(lines[1]).toMatch(/^agent +project +start +model +calls +spend +peak +win +re-sent +cmp$/);
    expect(lines.some((line) => line.startsWith('total '))).toBe(true);
    expect(lines.some((line) => /^ month \(UTC\) +calls +input +cache rd +cache wr +output +cost$/.test(line))).toBe(true);
    expect(plain.stdout).not.toContain('what each turn added');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
    const detail = await runCli(['inspect', '--jobs', '1', '--detail', AGENTS]);
    const rollupAt = detail.stdout.indexOf('roll-up of 16 sessions');
    expect(rollupAt).toBeGreaterThan(0);
    expect(detail.stdout.indexOf('what each turn added')).toBeGreaterThan(rollupAt);
    // The view is the same with --detail (a session's title line is its path, however long).
    expect(detail.stdout.startsWith(plain.stdout.slice(0, plain.stdout.indexOf('roll-up of')).replace('by start day', 'by spend').split('\n')[0]!)).toBe(true);
  });

  it('prints no table for one session', async () => {
    const one = await runCli(['inspect', join(FIXTURES, 'bug.jsonl')]);
    expect(one.stdout).not.toContain('sessions, the top');
    expect(one.stdout).toContain('what each turn added');
  });
});

describe('archive-wide gates', () => {
  const gateLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('compactor: gate: '));

  it('exits 3 naming the total and the limit; 0 within them', async () => {
    const over = await runCli(['inspect', '--jobs', '1', '--max-total-cost', '1', '--max-total-input-tokens', '100000', AGENTS]);
    expect(over.exitCode).toBe(3);
    expect(gateLines(over.stderr)).toEqual([
      'compactor: gate: all 16 sessions: total cost $1.50 > $1.00 (--max-total-cost)',
      'compactor: gate: all 16 sessions: total input tokens 498,089 > 100,000 (--max-total-input-tokens)',
    ]);
    const json = await runCli(['inspect', '--json', '--jobs', '1', '--max-total-cost', '1', AGENTS]);
    expect(json.exitCode).toBe(3);
    expect(jsonLines(json.stdout).at(-1)!['rollup']['gates']).toEqual([{ gate: 'max-total-cost', limit: 1, value: expect.closeTo(1.5, 1) }]);
    const within = await runCli(['inspect', '--jobs', '1', '--max-total-cost', '2', '--max-total-input-tokens', '500000', AGENTS]);
    expect(within.exitCode).toBe(0);
    expect(gateLines(within.stderr)).toEqual([]);
  });

  it('reads the priced calls and names the unpriced ones (exit 3 on a breach, not 1); --strict fails (exit 1)', async () => {
    const inputs = [join(FIXTURES, 'real', 'pi', 'agent-sessions_pi_small_v3.jsonl'), join(FIXTURES, 'bug.jsonl')];
    const over = await runCli(['inspect', '--max-total-cost', '10', ...inputs]);
    expect(over.exitCode).toBe(3);
    expect(over.stderr).toMatch(/compactor: warning: the cost gate read the priced calls only: 2 calls had no price \(pi-fixture-model;/);
    expect(gateLines(over.stderr)).toEqual(['compactor: gate: all 2 sessions: total cost $64.61 > $10.00 (--max-total-cost)']);
    const strict = await runCli(['inspect', '--strict', '--max-total-cost', '100', ...inputs]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stderr).toContain('pi_small_v3.jsonl: the cost gate read the priced calls only');
  });

  it('refuses a negative limit (exit 2)', async () => {
    const result = await runCli(['inspect', '--max-total-cost', '-1', AGENTS]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--max-total-cost must be a number >= 0');
  });
});

describe('report: shards merged', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compactor-report-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('equals one run over every session: the --json record byte for byte, and the text', async () => {
    const shards: string[] = [];
    for (let k = 1; k <= 3; k++) {
      const result = await runCli(['inspect', '--json', '--jobs', '1', '--top', '5', '--shard', `${k}/3`, 'fixtures']);
      expect(result.exitCode).toBe(0);
      shards.push(join(dir, `shard-${k}.ndjson`));
      await writeFile(shards.at(-1)!, result.stdout);
    }
    // Every shard holds some sessions: the merge is not one shard's copy.
    for (const file of shards) expect((await runCli(['report', '--json', file])).stdout).toMatch(/"sessions":[1-9]/);
    const one = await runCli(['inspect', '--json', '--jobs', '1', '--top', '5', 'fixtures']);
    const merged = await runCli(['report', '--json', ...shards]);
    expect(merged.exitCode).toBe(0);
    // (execa takes the last newline off both.)
    expect(merged.stdout).toBe(one.stdout.split('\n').at(-1));
    const oneText = await runCli(['inspect', '--jobs', '1', '--top', '5', '--by', 'week', 'fixtures']);
    const mergedText = await runCli(['report', '--by', 'week', ...shards]);
    expect(mergedText.stdout).toBe(oneText.stdout);
    // The total gates read the merged totals.
    const gated = await runCli(['report', '--max-total-cost', '100', ...shards]);
    expect(gated.exitCode).toBe(3);
    expect(gated.stderr).toMatch(/compactor: gate: all 49 sessions: total cost \$126\.64 > \$100\.00 \(--max-total-cost\)/);
  });

  it('names a file with no roll-up (exit 1) and a ranking it cannot redo (exit 2)', async () => {
    const bare = join(dir, 'bare.ndjson');
    await writeFile(bare, '{"session":"a.jsonl"}\n');
    const missing = await runCli(['report', bare]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain(`${bare}: no {"rollup": …} record`);
    const saved = join(dir, 'saved.ndjson');
    await writeFile(saved, (await runCli(['inspect', '--json', '--jobs', '1', AGENTS])).stdout);
    const resorted = await runCli(['report', '--sort', 'peak', saved]);
    expect(resorted.exitCode).toBe(2);
    expect(resorted.stderr).toContain('--sort peak: the files kept their top sessions by cost');
    const tokyo = join(dir, 'tokyo.ndjson');
    await writeFile(tokyo, (await runCli(['inspect', '--json', '--jobs', '1', '--timezone', 'Asia/Tokyo', AGENTS])).stdout);
    const zones = await runCli(['report', saved, tokyo]);
    expect(zones.exitCode).toBe(2);
    expect(zones.stderr).toContain('the files counted days in different time zones (UTC, Asia/Tokyo)');
    // One zone: the text names it, as inspect's does.
    expect((await runCli(['report', tokyo])).stdout).toContain(' day (Asia/Tokyo) ');
  });
});

describe('report: replay outputs', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compactor-report-replay-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("gives a saved run's what-if again byte for byte, and two shards' the same figures", async () => {
    const args = ['replay', '--json', '--jobs', '1', '--policy', 'pi,codex', '--context-limit', '20000'];
    const whole = await runCli([...args, AGENTS]);
    expect(whole.exitCode).toBe(0);
    const saved = join(dir, 'all.ndjson');
    await writeFile(saved, whole.stdout);
    const again = await runCli(['report', '--json', saved]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe(whole.stdout.split('\n').at(-1));
    const shards: string[] = [];
    for (let k = 1; k <= 2; k++) {
      shards.push(join(dir, `replay-${k}.ndjson`));
      await writeFile(shards.at(-1)!, (await runCli([...args, '--shard', `${k}/2`, AGENTS])).stdout);
    }
    const merged = JSON.parse((await runCli(['report', '--json', ...shards])).stdout)['rollup'];
    const one = JSON.parse(whole.stdout.split('\n').at(-1)!)['rollup'];
    // The same sums, taken in another order: equal to the last floating-point digits.
    expect(merged['sessions']).toBe(one['sessions']);
    expect(merged['input_tokens']).toBe(one['input_tokens']);
    expect(merged['cost_usd']).toBeCloseTo(one['cost_usd'], 9);
    expect(merged['policies'].map((policy: Record<string, any>) => [policy['name'], policy['compactions'], policy['input_tokens_after']])).toEqual(
      one['policies'].map((policy: Record<string, any>) => [policy['name'], policy['compactions'], policy['input_tokens_after']]),
    );
    // Mixed commands are refused.
    const inspected = join(dir, 'inspect.ndjson');
    await writeFile(inspected, (await runCli(['inspect', '--json', '--jobs', '1', AGENTS])).stdout);
    const mixed = await runCli(['report', saved, inspected]);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain('all inspect --json, or all replay --json');
  });
});
