/**
 * The documented exit codes (README "Exit codes", src/errors.ts) from the real CLI, and the
 * flags every command shares. 130 is checked in interrupt.test.ts; 3 belongs to the CI gates.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { goodLines } from '../corpus/make-bad-inputs.js';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

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
    [['compact', '--strategy', 'magic', 'x.jsonl'], /^compactor: --strategy must be one of truncate, summarize, extract, prune, got "magic"$/],
    [['estimate', '--tokenizer', 'p50k', 'x.jsonl'], /^compactor: --tokenizer must be one of heuristic, o200k, cl100k, got "p50k"$/],
    [['compact', '--on-error', 'maybe', 'x.jsonl'], /^compactor: --on-error must be one of fail, skip, truncate, got "maybe"$/],
    // The last value of a repeated flag is the one checked.
    [['estimate', '--tokenizer', 'o200k', '--tokenizer', 'p50k', 'x.jsonl'], /^compactor: --tokenizer must be one of heuristic, o200k, cl100k, got "p50k"$/],
    [['estimate', '--reserve', 'abc', 'x.jsonl'], /^compactor: --reserve: must be a whole number of tokens >= 0 or a percentage of the window \(like 25%\), got "abc"$/],
    [['estimate', '--keep-recent=1e', 'x.jsonl'], /^compactor: --keep-recent: must be a whole number of tokens >= 0 or a percentage of the window \(like 25%\), got "1e"$/],
    [['estimate', '--since', 'yesterday', 'x.jsonl'], /^compactor: --since must be a day as YYYY-MM-DD, got "yesterday"$/],
    [['inspect', '--agent', 'cursor', 'x.jsonl'], /^compactor: --agent must name agents among claude-code, codex, pi, gemini-cli, opencode, got "cursor"$/],
    [['context'], /^compactor: name the session file to print$/],
  ])('2 for a wrong command line: %j', async (args, message) => {
    const result = await runCli(args);
    expect(result.exitCode).toBe(2);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines[lines.length - 1]).toBe('Run compactor --help for usage.');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('the command line as yargs users expect it', () => {
  it('takes every name after -- as a session, however it looks', async () => {
    const dir = await scratch();
    const session = goodLines().map((line) => JSON.stringify(line)).join('\n') + '\n';
    await writeFile(join(dir, '--help.jsonl'), session);
    await writeFile(join(dir, '-x.jsonl'), session);
    const result = await runCli(['compact', '--json', '--strategy', 'truncate', '--dry-run', '--', '--help.jsonl', '-x.jsonl'], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout).map((record) => record['session'])).toEqual(['--help.jsonl', '-x.jsonl']);
    const context = await runCli(['context', '--', '--help.jsonl'], { cwd: dir });
    expect(context.exitCode).toBe(0);
    expect(jsonLines(context.stdout)).toHaveLength(goodLines().length);
  });

  it('keeps the last value of a flag given twice', async () => {
    const result = await runCli(['estimate', '--json', '--context-limit', '1000', '--context-limit', '200000', '--jobs', '1', '--jobs', '2', join(FIXTURES, 'bug.jsonl')]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]!['context_window']).toBe(200_000);
  });
});

describe('--strict', () => {
  it.each(['estimate', 'inspect', 'compact', 'replay', 'context'])('is a flag of %s', async (command) => {
    const result = await runCli([command, '--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/--strict\s+treat warnings/);
  });
});
