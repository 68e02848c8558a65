/**
 * `inspect` over several sessions ends with a roll-up of their spend per project, per UTC day and
 * per model: its totals are the sessions' own spend ledgers added up, whichever way they are split.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli, sessionRecords } from './helpers/cli.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-rollup-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

type Row = Record<string, any>;
const TOKEN_FIELDS = ['requests', 'input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens', 'cache_creation_1h_input_tokens', 'output_tokens'];

function sumRows(rows: readonly Row[]): Row {
  const sum: Row = Object.fromEntries(TOKEN_FIELDS.map((field) => [field, rows.reduce((total, row) => total + row[field], 0)]));
  sum['cost'] = rows.reduce((total, row) => total + (row['cost']?.['total_usd'] ?? 0), 0);
  return sum;
}

function expectSameSums(actual: Row, expected: Row): void {
  for (const field of TOKEN_FIELDS) expect(actual[field], field).toBe(expected[field]);
  expect(actual['cost']).toBeCloseTo(expected['cost'], 9);
}

/** An assistant call of a canonical session, with the usage the provider reported. */
function call(id: string, timestamp: string | null, input: number, output: number, model?: string): string {
  return JSON.stringify({
    id,
    role: 'assistant',
    content: [{ type: 'text', text: `answer ${id}` }],
    metadata: { input_tokens: input, output_tokens: output, ...(model ? { model } : {}) },
    ...(timestamp ? { timestamp } : {}),
  });
}

function prompt(id: string, timestamp: string | null): string {
  return JSON.stringify({ id, role: 'user', content: `question ${id}`, ...(timestamp ? { timestamp } : {}) });
}

async function writeLines(path: string, lines: readonly string[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${lines.join('\n')}\n`);
}

describe('inspect roll-up', () => {
  // Real sessions of every format with a project of its own (Codex and pi cwd, Gemini's
  // projectHash, Claude Code's directory), the agents' sessions with subagents, review threads and
  // abandoned branches (off-context calls), and bug.jsonl; Gemini chat files are named one by one.
  const INPUTS = [
    join(FIXTURES, 'real'),
    join(FIXTURES, 'agents'),
    join(FIXTURES, 'bug.jsonl'),
    join(FIXTURES, 'real', 'gemini-cli', 'codemie-ai_codemie-code_gemini-session-37b7abef.json'),
    join(FIXTURES, 'real', 'gemini-cli', 'jnarowski_agentcmd_gemini-session-981c87cb.json'),
  ];

  it('adds up the sessions\' spend ledgers: its total, and each of its three tables, is their sum', async () => {
    const result = await runCli(['inspect', '--json', ...INPUTS]);
    const records = jsonLines(result.stdout);
    const sessions = sessionRecords(result.stdout);
    expect(sessions.length).toBeGreaterThan(10);
    // The roll-up is the one last record.
    expect(records.slice(0, -1)).toEqual(sessions);
    const { rollup } = records[records.length - 1]!;
    expect(Object.keys(rollup)).toEqual(['sessions', 'total', 'by_project', 'by_day', 'by_model', 'by_week', 'by_month', 'sort', 'top', 'session_rows', 'session_totals', 'time_zone', 'gates']);
    expect(rollup.sessions).toBe(sessions.length);

    // Tokens: every session's spend. Cost: the priced calls. The sessions whose spend cost is null
    // here (a model the catalog lacks) have no priced call, so the cost is the others' sum.
    const spends = sessions.map((record) => record['spend']);
    const total = rollup.total;
    expectSameSums(sumRows([total]), sumRows(spends));
    expect(total.unpriced_requests).toBeGreaterThan(0);
    // gemini-3-pro is priced as gemini-3-pro-preview; the schema fixture's test model has no price.
    expect(total.unpriced_models).toEqual(['pi-fixture-model']);
    for (const table of ['by_project', 'by_day', 'by_model']) expectSameSums(sumRows(rollup[table]), sumRows([total]));
  });

  it('equals the sum of the sessions\' spend cost exactly when every call has a price', async () => {
    const result = await runCli(['inspect', '--json', join(FIXTURES, 'real', 'codex'), join(FIXTURES, 'real', 'claude-code'), join(FIXTURES, 'bug.jsonl')]);
    const sessions = sessionRecords(result.stdout);
    expect(sessions.every((record) => record['spend']['cost'] !== null)).toBe(true);
    const { rollup } = jsonLines(result.stdout).at(-1)!;
    const fromSessions = sumRows(sessions.map((record) => record['spend']));
    expectSameSums(sumRows([rollup.total]), fromSessions);
    for (const table of ['by_project', 'by_day', 'by_model']) expectSameSums(sumRows(rollup[table]), fromSessions);
    expect(rollup.total.unpriced_requests).toBe(0);
    // Each model's row is its calls at its own prices, as each session's ledger priced them.
    const bug = sessions.find((record) => record['session'].endsWith('bug.jsonl'))!;
    const opus = rollup.by_model.find((row: Row) => row['model'] === 'claude-opus-4-1-20250805');
    expect(opus).toMatchObject({ sessions: 1, requests: bug['spend']['requests'], input_tokens: bug['spend']['input_tokens'] });
    expect(opus.cost.total_usd).toBeCloseTo(bug['spend']['cost']['total_usd'], 9);
  });

  it('names each project as its format records it, else by the session\'s directory', async () => {
    const result = await runCli(['inspect', '--json', ...INPUTS]);
    const projects = new Map(jsonLines(result.stdout).at(-1)!.rollup.by_project.map((row: Row) => [row['project'], row['sessions']]));
    // pi: the header's cwd (of the two pi-mono sessions, the v1 branch billed nothing of its own: its calls are copies)
    expect(projects.get('/Users/badlogic/workspaces/pi-mono')).toBe(1);
    expect(projects.get('/home/user/projects/temp/chatbot-ui')).toBe(1); // Codex: session_meta's cwd
    expect(projects.get('1b37d21d2d347dc4deb92958752b51d6f657340fc961f32748333b8ed807a684')).toBe(1); // Gemini: projectHash
    expect(projects.get(join(FIXTURES, 'real', 'claude-code'))).toBeGreaterThan(1); // Claude Code: its directory
    expect(projects.get(FIXTURES)).toBe(1); // canonical bug.jsonl: its directory
  });

  it('splits a session over midnight between its days, dates a call without a time by the session\'s start, and keeps undated sessions apart', async () => {
    const dir = await scratch();
    await writeLines(join(dir, 'late.jsonl'), [
      prompt('u1', '2026-03-01T23:40:00Z'),
      call('a1', '2026-03-01T23:50:00Z', 1000, 10, 'claude-sonnet-4-5'),
      prompt('u2', '2026-03-02T00:05:00Z'),
      call('a2', '2026-03-02T00:10:00Z', 2000, 20, 'claude-sonnet-4-5'),
      call('a3', null, 3000, 30, 'claude-haiku-4-5'),
    ]);
    await writeLines(join(dir, 'undated.jsonl'), [prompt('u1', null), call('a1', null, 500, 5, 'claude-sonnet-4-5')]);
    const result = await runCli(['inspect', '--json', dir]);
    expect(result.exitCode).toBe(0);
    const { rollup } = jsonLines(result.stdout).at(-1)!;
    const days = rollup.by_day.map((row: Row) => [row['day'], row['sessions'], row['requests'], row['input_tokens']]);
    expect(days).toEqual([
      ['2026-03-02', 1, 1, 2000],
      ['2026-03-01', 1, 2, 1000 + 3000],
      [null, 1, 1, 500],
    ]);
    const models = rollup.by_model.map((row: Row) => [row['model'], row['requests']]);
    expect(new Map(models)).toEqual(new Map([['claude-sonnet-4-5', 3], ['claude-haiku-4-5', 1]]));
    expect(rollup.by_project).toHaveLength(1);
    expect(rollup.by_project[0]).toMatchObject({ project: dir, sessions: 2, requests: 4 });
  });

  it('is printed only over more than one session read', async () => {
    const dir = await scratch();
    await cp(join(FIXTURES, 'bug.jsonl'), join(dir, 'bug.jsonl'));
    const one = await runCli(['inspect', '--json', join(dir, 'bug.jsonl')]);
    expect(jsonLines(one.stdout).some((record) => 'rollup' in record)).toBe(false);
    expect((await runCli(['inspect', join(dir, 'bug.jsonl')])).stdout).not.toContain('roll-up');
    // Two files, one of which fails: the archive view of the one read (the input named several).
    await writeFile(join(dir, 'broken.jsonl'), '{"id":"a","role":"user","content":"hi"}\n{oops\n');
    const failing = await runCli(['inspect', '--json', dir]);
    expect(failing.exitCode).toBe(1);
    expect(jsonLines(failing.stdout).at(-1)?.['rollup']).toMatchObject({ sessions: 1, session_totals: { sessions: 1 } });
  });

  it('fits 80 columns in text, cut to the first rows of each table unless --all', async () => {
    const dir = await scratch();
    // 12 sessions in 12 projects over 12 days, two models.
    for (let day = 1; day <= 12; day++) {
      const stamp = `2026-04-${String(day).padStart(2, '0')}T12:00:00Z`;
      await writeLines(join(dir, `project-with-a-rather-long-name-${day}`, 's.jsonl'), [
        prompt('u1', stamp),
        call('a1', stamp, 100_000 * day, 1_000 * day, day % 2 ? 'claude-opus-4-1-20250805' : 'claude-sonnet-4-5'),
      ]);
    }
    const text = (await runCli(['inspect', dir])).stdout;
    const rollup = text.slice(text.indexOf('roll-up of 12 sessions'));
    expect(rollup).not.toBe('');
    for (const line of rollup.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(rollup).toContain('  … 2 more projects (--all shows every row)');
    expect(rollup).toContain('  … 2 more days (--all shows every row)');
    expect(rollup).not.toContain('more models');
    // The costliest project first, its path cut from the left; the latest day first.
    const projectRows = rollup.split('\n').filter((line) => line.includes('rather-long-name'));
    // (name-11 runs on Opus, dearer than Sonnet's name-12 with more tokens.)
    expect(projectRows[0]).toMatch(/^ …[^ ]*-name-11 +1 +1\.1M +0 +0 +11\.0k +\$\d+\.\d\d$/);
    expect(rollup.split('\n').find((line) => line.startsWith(' 2026-'))).toMatch(/^ 2026-04-12 /);

    const all = (await runCli(['inspect', '--all', dir])).stdout;
    const allRollup = all.slice(all.indexOf('roll-up of 12 sessions'));
    expect(allRollup).not.toContain('--all shows every row');
    expect(allRollup.split('\n').filter((line) => line.startsWith(' 2026-04-'))).toHaveLength(12);
    for (const line of allRollup.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    // --json always has every row.
    const { rollup: json } = jsonLines((await runCli(['inspect', '--json', dir])).stdout).at(-1)!;
    expect(json.by_project).toHaveLength(12);
    expect(json.by_day).toHaveLength(12);
  });
});
