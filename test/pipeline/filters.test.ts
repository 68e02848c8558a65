/**
 * `--since`, `--until`, `--timezone` and `--project`: sessions kept by their calls' days and
 * their project; inspect's roll-up counts only the calls in range. Two Claude Code sessions
 * whose calls are dated on purpose: A at 22:00Z and 23:30Z on 1 March and 10:00Z on 2 March
 * (23:30Z is already 2 March in Europe/Paris, UTC+1), B all at 12:00Z on 2 March.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayIn } from '../../src/ledgers/rollup.js';
import { parseFilter, projectMatches } from '../../src/pipeline/filters.js';
import { FIXTURES, jsonLines, runCli, sessionRecords } from '../helpers/cli.js';

let dir = '';

/** The fixture's lines with every timestamp replaced: each line takes the time of the next call (assistant line) at or after it. */
async function dated(fixture: string, callTimes: readonly string[]): Promise<string> {
  const lines = (await readFile(join(FIXTURES, fixture), 'utf8')).split('\n').filter((line) => line.trim() !== '');
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  let call = 0;
  const times: string[] = [];
  for (const record of records) {
    times.push(callTimes[Math.min(call, callTimes.length - 1)]!);
    if (record['type'] === 'assistant') call++;
  }
  return `${records.map((record, index) => JSON.stringify('timestamp' in record ? { ...record, timestamp: times[index] } : record)).join('\n')}\n`;
}

const A = 'c0de0003-0000-4000-8000-000000000003.jsonl';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-filters-'));
  await mkdir(join(dir, '-home-me-alpha'));
  await mkdir(join(dir, '-home-me-beta'));
  await writeFile(
    join(dir, '-home-me-alpha', A),
    await dated(`agents/claude-code/auto-compact/projects/-tmp-compactor-agents-project/${A}`, ['2026-03-01T22:00:00.000Z', '2026-03-01T23:30:00.000Z', '2026-03-02T10:00:00.000Z']),
  );
  await writeFile(
    join(dir, '-home-me-beta', 'c0de0002-0000-4000-8000-000000000002.jsonl'),
    await dated('agents/claude-code/branches-compact-abort/projects/-tmp-compactor-agents-project/c0de0002-0000-4000-8000-000000000002.jsonl', ['2026-03-02T12:00:00.000Z']),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** inspect --json over the two sessions with these flags: the roll-up, the sessions kept and stderr. */
async function inspect(...flags: string[]) {
  const result = await runCli(['inspect', '--json', ...flags, dir]);
  expect(result.exitCode, result.stderr).toBe(0);
  const rollup = jsonLines(result.stdout).find((record) => 'rollup' in record)?.['rollup'] as Record<string, any> | undefined;
  return { rollup, sessions: sessionRecords(result.stdout).length, stderr: result.stderr };
}

const requestsByDay = (rollup: Record<string, any> | undefined) => Object.fromEntries((rollup?.['by_day'] as Record<string, any>[]).map((row) => [row['day'], row['requests']]));

describe('days in a time zone (pure)', () => {
  it('puts 23:30Z on the next day east of UTC, and checks the flags', () => {
    expect(dayIn('2026-03-01T23:30:00.000Z', 'UTC')).toBe('2026-03-01');
    expect(dayIn('2026-03-01T23:30:00.000Z', 'Europe/Paris')).toBe('2026-03-02');
    expect(dayIn('2026-03-01T00:30:00.000Z', 'America/New_York')).toBe('2026-02-28');
    expect(parseFilter({ since: '2026-03-01', until: '2026-03-01', timezone: 'UTC' })).toEqual({ zone: 'UTC', days: { since: '2026-03-01', until: '2026-03-01' }, project: null });
    // ccusage's way of writing a day too.
    expect(parseFilter({ since: '20260301', timezone: 'UTC' }).days).toEqual({ since: '2026-03-01', until: null });
    expect(() => parseFilter({ since: '2026-3-1' })).toThrow('--since must be a day as YYYY-MM-DD, got "2026-3-1"');
    expect(() => parseFilter({ until: '2026-02-30' })).toThrow(/--until must be a day/);
    expect(() => parseFilter({ since: '2026-03-02', until: '2026-03-01' })).toThrow('--since 2026-03-02 is after --until 2026-03-01');
    expect(() => parseFilter({ timezone: 'Mars/Olympus' })).toThrow(/--timezone must be a time zone name/);
  });

  it('matches a project by text or glob', () => {
    expect(projectMatches('/home/me/src/app', 'src/app')).toBe(true);
    expect(projectMatches('/home/me/src/app', 'src/ap*')).toBe(false);
    expect(projectMatches('/home/me/src/app', '**/src/ap*')).toBe(true);
    expect(projectMatches('/home/me/src/app', 'ap?')).toBe(true);
    expect(projectMatches('/home/me/src/app', 'web')).toBe(false);
  });
});

describe('--since and --until', () => {
  it('keep only the calls in range in inspect\'s roll-up: a session over the edge counts its calls inside it', async () => {
    const all = await inspect('--timezone', 'UTC');
    const total = all.rollup?.['total']['requests'] as number;
    const beta = requestsByDay(all.rollup)['2026-03-02'] - 1;
    expect(requestsByDay(all.rollup)).toEqual({ '2026-03-02': beta + 1, '2026-03-01': 2 });
    const since = await inspect('--since', '2026-03-02', '--timezone', 'UTC');
    expect(since.sessions).toBe(2);
    expect(since.rollup?.['total']['requests']).toBe(total - 2);
    expect(requestsByDay(since.rollup)).toEqual({ '2026-03-02': beta + 1 });
    expect(since.stderr).toContain('compactor: kept 2 of 2 sessions (--since 2026-03-02, in UTC)');
  });

  it('take the days in --timezone: 23:30Z is 2 March in Europe/Paris', async () => {
    const all = await inspect('--timezone', 'Europe/Paris');
    const total = all.rollup?.['total']['requests'] as number;
    expect(requestsByDay(all.rollup)['2026-03-01']).toBe(1);
    const since = await inspect('--since', '2026-03-02', '--timezone', 'Europe/Paris');
    expect(since.rollup?.['total']['requests']).toBe(total - 1);
    expect(Object.keys(requestsByDay(since.rollup))).toEqual(['2026-03-02']);
  });

  it('keep only the sessions with a call in range, the edge day included', async () => {
    const utc = await inspect('--until', '2026-03-01', '--timezone', 'UTC');
    expect(utc.sessions).toBe(1);
    expect(utc.stderr).toContain('compactor: kept 1 of 2 sessions (--until 2026-03-01, in UTC)');
    const paris = await inspect('--since', '2026-03-01', '--until', '2026-03-01', '--timezone', 'Europe/Paris');
    expect(paris.sessions).toBe(1);
    const tokyo = await inspect('--until', '2026-03-01', '--timezone', 'Asia/Tokyo');
    expect(tokyo.sessions).toBe(0);
    const later = await inspect('--since', '2026-03-03', '--timezone', 'UTC');
    expect(later.sessions).toBe(0);
    expect(later.stderr).toContain('kept 0 of 2 sessions');
  });

  it('apply to the commands that work on whole sessions (estimate, replay)', async () => {
    const estimate = await runCli(['estimate', '--json', '--until', '2026-03-01', '--timezone', 'UTC', dir]);
    expect(estimate.exitCode, estimate.stderr).toBe(0);
    expect(jsonLines(estimate.stdout).map((record) => record['session'])).toEqual([join(dir, '-home-me-alpha', A)]);
    const replay = await runCli(['replay', '--json', '--since', '2026-03-02', '--until', '2026-03-02', '--timezone', 'UTC', dir]);
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(sessionRecords(replay.stdout)).toHaveLength(2);
  });

  it('keep stdin, which can be read only once, whatever they say', async () => {
    const session = await readFile(join(dir, '-home-me-alpha', A));
    const result = await runCli(['estimate', '--json', '--since', '2030-01-01', '-'], { input: session });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(jsonLines(result.stdout).map((record) => record['session'])).toEqual(['-']);
    expect(result.stderr).toContain('compactor: -: read once only (stdin or a pipe), so kept whatever the filters say');
  });

  it('refuse a day that is not one (exit 2)', async () => {
    const result = await runCli(['estimate', '--since', 'yesterday', dir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--since must be a day as YYYY-MM-DD, got "yesterday"');
  });
});

describe('--project', () => {
  it('keeps the sessions whose project contains the text, or matches the glob', async () => {
    const text = await runCli(['estimate', '--json', '--project', 'alpha', dir]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(jsonLines(text.stdout).map((record) => record['session'])).toEqual([join(dir, '-home-me-alpha', A)]);
    expect(text.stderr).toContain('compactor: kept 1 of 2 sessions (--project "alpha")');
    const glob = await runCli(['estimate', '--json', '--project', '*-be?a', dir]);
    expect(jsonLines(glob.stdout)).toHaveLength(1);
    expect(String(jsonLines(glob.stdout)[0]?.['session'])).toContain('-home-me-beta');
    // A path is matched against a Claude Code folder as Claude Code writes it.
    const path = await runCli(['estimate', '--json', '--project', '/home/me/alpha', dir]);
    expect(jsonLines(path.stdout)).toHaveLength(1);
    const none = await runCli(['estimate', '--json', '--project', 'gamma', dir]);
    expect(none.exitCode).toBe(0);
    expect(none.stdout).toBe('');
  });

  it("matches Codex's and pi's cwd", async () => {
    const codex = join(FIXTURES, 'agents', 'codex', 'auto-compact', 'sessions');
    const pi = join(FIXTURES, 'agents', 'pi', 'print-continue', 'sessions');
    const kept = await runCli(['estimate', '--json', '--project', '/tmp/compactor-agents/project', codex, pi]);
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(jsonLines(kept.stdout).map((record) => record['format']).sort()).toEqual(['codex', 'pi']);
    const glob = await runCli(['estimate', '--json', '--project', '**/compactor-agents/*', codex, pi]);
    expect(jsonLines(glob.stdout)).toHaveLength(2);
    const other = await runCli(['estimate', '--json', '--project', '/tmp/elsewhere', codex, pi]);
    expect(jsonLines(other.stdout)).toHaveLength(0);
  });

  it("matches opencode's directory, in its database and its JSON storage", async () => {
    const stores = [join(FIXTURES, 'agents', 'opencode', 'tools-compact', 'opencode.db'), join(FIXTURES, 'agents', 'opencode-json', 'tools-compact', 'storage')];
    const kept = await runCli(['estimate', '--json', '--project', '/tmp/compactor-agents', ...stores]);
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(jsonLines(kept.stdout).map((record) => record['format']).sort()).toEqual(['opencode', 'opencode-json']);
    const other = await runCli(['estimate', '--json', '--project', 'elsewhere', ...stores]);
    expect(jsonLines(other.stdout)).toHaveLength(0);
  });
});
