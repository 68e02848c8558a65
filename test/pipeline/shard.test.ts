/**
 * --shard: the split is a pure function of the path relative to the input (so machines agree),
 * every session lands in exactly one shard, and the per-shard NDJSON outputs concatenated are
 * the unsharded output (README "Sharding").
 */
import { cp, mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseShard, selectShard, shardOf } from '../../src/pipeline/shard.js';
import { UsageError } from '../../src/errors.js';
import { FIXTURES, jsonLines, runCli, scratchCopy, sessionRecords } from '../helpers/cli.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** An archive of `count` copies of bug.jsonl in three project folders. */
async function archive(count: number): Promise<string> {
  const copy = await scratchCopy();
  cleanups.push(copy.cleanup);
  for (let i = 0; i < count; i++) {
    const folder = join(copy.dir, 'archive', `project-${i % 3}`);
    await mkdir(folder, { recursive: true });
    await cp(join(FIXTURES, 'bug.jsonl'), join(folder, `session-${i}.jsonl`));
  }
  return join(copy.dir, 'archive');
}

describe('shardOf', () => {
  it('is sha256 of the key, first 48 bits, modulo N, 1-based (the same on every machine)', () => {
    expect(shardOf('a.jsonl', 4)).toBe(4);
    expect(shardOf('-home-dev-project0/0b1c.jsonl', 4)).toBe(2);
    expect(shardOf('proj/s1.jsonl', 7)).toBe(3);
    expect(shardOf('proj/s2.jsonl', 7)).toBe(4);
  });

  it('puts every key in exactly one shard, for every shard count', () => {
    const entries = Array.from({ length: 300 }, (_, i) => ({ key: `project-${i % 7}/session-${i}.jsonl` }));
    for (let count = 1; count <= 6; count++) {
      const shards = Array.from({ length: count }, (_, k) => selectShard(entries, { index: k + 1, count }));
      expect(shards.flat().map((entry) => entry.key).sort()).toEqual(entries.map((entry) => entry.key).sort());
      // A fair split: no shard empty or holding more than twice its share of 300 keys.
      for (const shard of shards) expect(shard.length).toBeGreaterThan(0);
      for (const shard of shards) expect(shard.length).toBeLessThan((2 * 300) / count);
    }
  });
});

describe('parseShard', () => {
  it('reads K/N (1-based) and auto from JOB_COMPLETION_INDEX (0-based) and COMPACTOR_SHARD_COUNT', () => {
    expect(parseShard(undefined)).toBeNull();
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
    expect(parseShard('auto', { JOB_COMPLETION_INDEX: '0', COMPACTOR_SHARD_COUNT: '3' })).toEqual({ index: 1, count: 3 });
    expect(parseShard('auto', { JOB_COMPLETION_INDEX: '2', COMPACTOR_SHARD_COUNT: '3' })).toEqual({ index: 3, count: 3 });
  });

  it('refuses shards out of range and auto without its variables', () => {
    for (const bad of ['0/3', '4/3', '1/0', 'x', '1-3']) expect(() => parseShard(bad)).toThrow(UsageError);
    expect(() => parseShard('auto', { COMPACTOR_SHARD_COUNT: '3' })).toThrow(/JOB_COMPLETION_INDEX/);
    expect(() => parseShard('auto', { JOB_COMPLETION_INDEX: '1' })).toThrow(/COMPACTOR_SHARD_COUNT/);
    expect(() => parseShard('auto', { JOB_COMPLETION_INDEX: '3', COMPACTOR_SHARD_COUNT: '3' })).toThrow(/not below/);
  });
});

describe('compactor --shard', () => {
  it('splits an archive into disjoint shards whose concatenated NDJSON is the unsharded output', async () => {
    const dir = await archive(12);
    const whole = await runCli(['estimate', '--json', '--jobs', '1', dir]);
    expect(whole.exitCode).toBe(0);
    const parts: string[] = [];
    for (let k = 1; k <= 3; k++) {
      const part = await runCli(['estimate', '--json', '--jobs', '1', '--shard', `${k}/3`, dir]);
      expect(part.exitCode).toBe(0);
      parts.push(part.stdout);
    }
    // `cat` of the shard outputs (execa drops each output's final newline, cat would not).
    const merged = jsonLines(parts.join('\n'));
    const sessions = merged.map((record) => record.session as string);
    expect(new Set(sessions).size).toBe(12);
    expect(merged.sort((a, b) => (a.session < b.session ? -1 : 1))).toEqual(jsonLines(whole.stdout));
  });

  it('splits the same way wherever the archive is mounted and however it is named on the command line', async () => {
    const dir = await archive(9);
    const elsewhere = await scratchCopy();
    cleanups.push(elsewhere.cleanup);
    const mounted = join(elsewhere.dir, 'mnt', 'other-name');
    await cp(dir, mounted, { recursive: true });
    const picked = async (input: string, base: string, cwd?: string) => {
      const result = await runCli(['inspect', '--json', '--shard', '2/3', input], cwd ? { cwd } : {});
      expect(result.exitCode).toBe(0);
      return sessionRecords(result.stdout).map((record) => relative(base, join(cwd ?? '', record.session)));
    };
    const here = await picked(dir, dir);
    expect(here.length).toBeGreaterThan(0);
    expect(here.length).toBeLessThan(9);
    expect(await picked(mounted, mounted)).toEqual(here);
    expect(await picked('.', mounted, mounted)).toEqual(here);
  });

  it('takes its shard from the environment with --shard auto, and an empty shard prints nothing', async () => {
    const dir = await archive(6);
    const explicit = await runCli(['estimate', '--json', '--shard', '2/4', dir]);
    const auto = await runCli(['estimate', '--json', '--shard', 'auto', dir], { env: { JOB_COMPLETION_INDEX: '1', COMPACTOR_SHARD_COUNT: '4' } });
    expect(auto.exitCode).toBe(0);
    expect(auto.stdout).toBe(explicit.stdout);
    const missing = await runCli(['estimate', '--shard', 'auto', dir]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('JOB_COMPLETION_INDEX');
    // 1 file, 8 shards: seven of them hold nothing and succeed quietly.
    const one = join(dir, 'project-0', 'session-0.jsonl');
    const outputs = [];
    for (let k = 1; k <= 8; k++) outputs.push(await runCli(['estimate', '--json', '--shard', `${k}/8`, one]));
    expect(outputs.every((output) => output.exitCode === 0)).toBe(true);
    expect(outputs.map((output) => jsonLines(output.stdout).length).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
  });
});
