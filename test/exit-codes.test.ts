/**
 * The documented exit codes (README "Exit codes", src/errors.ts) from the real CLI, and the
 * flags every command shares. 130 is checked in interrupt.test.ts; 3 belongs to the CI gates.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/errors.js';
import { goodLines } from './corpus/make-bad-inputs.js';
import { FIXTURES, runCli, scratchCopy } from './helpers/cli.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function scratch(): Promise<string> {
  const copy = await scratchCopy();
  cleanup = copy.cleanup;
  return copy.dir;
}

describe('exit codes', () => {
  it('are the documented numbers', () => {
    expect(ExitCode).toEqual({ ok: 0, failed: 1, usage: 2, gate: 3, interrupted: 130 });
  });

  it('0 when every session succeeds', async () => {
    const result = await runCli(['estimate', join(FIXTURES, 'bug.jsonl')]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('1 when a session fails, and the others are still reported', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'good.jsonl'), goodLines().map((line) => JSON.stringify(line)).join('\n') + '\n');
    await writeFile(join(dir, 'bad.jsonl'), '{"id":"m1","role":"user","content":"x"}\n{not json}\n{"id":"m2","role":"user","content":"y"}\n');
    const result = await runCli(['estimate', dir]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr.startsWith(`compactor: error: ${join(dir, 'bad.jsonl')}:2: invalid JSON: `)).toBe(true);
    expect(result.stderr).toMatch(/ at column 2$/);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stdout).toContain('good.jsonl');
  });

  it.each([
    [['estimate', '--no-such-flag', 'x.jsonl'], /Unknown argument/],
    [['estimate', '--keep-recent', '-5', join(FIXTURES, 'bug.jsonl')], /--keep-recent: must be a whole number of tokens >= 0 or a percentage of the window \(like 25%\), got -5/],
    [['estimate', '/no/such/file.jsonl'], /no such file, and no file matches it as a glob/],
    [['frobnicate'], /Unknown argument: frobnicate|Unknown command/],
    [[], /name a command/],
    [['compact', '--strategy', 'magic', 'x.jsonl'], /Invalid values/],
  ])('2 for a wrong command line: %j', async (args, message) => {
    const result = await runCli(args);
    expect(result.exitCode).toBe(2);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines[lines.length - 1]).toBe('Run compactor --help for usage.');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('--strict', () => {
  it.each(['estimate', 'inspect', 'compact', 'replay', 'context'])('is a flag of %s', async (command) => {
    const result = await runCli([command, '--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/--strict\s+treat warnings/);
  });
});
