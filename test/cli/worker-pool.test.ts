/**
 * Worker threads change nothing but speed: every command prints the same records, in the same
 * order, with one thread and with two, including a session that fails in the middle.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli, scratchCopy, sessionRecords } from '../helpers/cli.js';

let dir = '';
let cleanup = async () => {};

beforeAll(async () => {
  const copy = await scratchCopy();
  ({ cleanup } = copy);
  dir = join(copy.dir, 'archive');
  // Sizes differ (whole fixture, and a prefix of it), so workers finish out of order.
  const lines = (await import('node:fs')).readFileSync(join(FIXTURES, 'bug.jsonl'), 'utf8').split('\n');
  for (let i = 0; i < 9; i++) {
    const folder = join(dir, `p${i % 2}`);
    await mkdir(folder, { recursive: true });
    if (i === 4) await writeFile(join(folder, `s${i}.jsonl`), '{"id":"m1","role":"user","content":"hi"}\nnot json\n');
    else if (i % 3 === 0) await cp(join(FIXTURES, 'bug.jsonl'), join(folder, `s${i}.jsonl`));
    else await writeFile(join(folder, `s${i}.jsonl`), `${lines.slice(0, 20 + i * 10).join('\n')}\n`);
  }
});
afterAll(() => cleanup());

const withoutClock = (stdout: string) => stdout.replace(/"created_at":"[^"]*"/g, '');

describe('--jobs', () => {
  for (const command of [
    ['estimate', '--json'],
    ['inspect', '--json'],
    ['replay', '--json', '--context-limit', '60000'],
    ['compact', '--json', '--dry-run', '--context-limit', '60000'],
    ['inspect'],
  ]) {
    it(`${command.join(' ')}: two worker threads print exactly what one thread prints`, async () => {
      const one = await runCli([...command, '--jobs', '1', dir]);
      const two = await runCli([...command, '--jobs', '2', dir]);
      expect(one.exitCode).toBe(1);
      expect(two.exitCode).toBe(1);
      expect(withoutClock(two.stdout)).toBe(withoutClock(one.stdout));
      expect(two.stderr).toBe(one.stderr);
      if (command.includes('--json')) {
        const records = sessionRecords(one.stdout);
        expect(records.map((record) => record.session)).toEqual([0, 2, 4, 6, 8, 1, 3, 5, 7].map((i) => `${dir}/p${i % 2}/s${i}.jsonl`));
        expect(records[2]!.status).toBe('failed');
        expect(records[2]!.error).toBe(`${dir}/p0/s4.jsonl:2: invalid JSON: Unexpected token 'o', "not json" is not valid JSON`);
      }
    });
  }

  it('compact writes the same sidecars with two threads as with one', async () => {
    const one = await runCli(['compact', '--json', '--jobs', '1', '--force', '--keep-recent', '2000', dir]);
    const again = await runCli(['compact', '--json', '--jobs', '2', '--force', '--keep-recent', '2000', dir]);
    expect(jsonLines(one.stdout).filter((record) => record.status === 'compacted')).toHaveLength(8);
    // The second run finds every sidecar written by the first still fresh.
    expect(jsonLines(again.stdout).map((record) => record.status)).toEqual(['up-to-date', 'up-to-date', 'failed', 'up-to-date', 'up-to-date', 'up-to-date', 'up-to-date', 'up-to-date', 'up-to-date']);
  });

  it('refuses a --jobs that is not auto or a whole number', async () => {
    const result = await runCli(['estimate', '--jobs', 'many', dir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--jobs must be auto or a whole number');
  });
});
