/**
 * The progress bar appears on a terminal only: `script` gives the CLI a real pseudo-terminal.
 */
import { execa } from 'execa';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, FIXTURES, runCli } from './helpers/cli.js';

async function batchDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-progress-'));
  for (const name of ['a', 'b', 'c']) await cp(join(FIXTURES, 'bug.jsonl'), join(dir, `${name}.jsonl`));
  return dir;
}

describe('progress bar', () => {
  it('is drawn on stderr when stderr is a terminal and CI is unset', async () => {
    const dir = await batchDir();
    try {
      const command = `node ${BIN} compact --dry-run --context-limit 80000 ${dir}`;
      const result = await execa('script', ['-qec', command, '/dev/null'], { env: { CI: '', TERM: 'xterm' }, reject: false, extendEnv: true });
      expect(result.exitCode).toBe(0);
      expect(String(result.stdout)).toMatch(/[░█]+ \d\/3 sessions/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stays off in CI and in a pipe, so output is only the results', async () => {
    const dir = await batchDir();
    try {
      const result = await runCli(['compact', '--dry-run', '--context-limit', '80000', dir]);
      // stderr carries at most the one-line note that truncate is used; never a bar.
      expect(result.stderr).not.toMatch(/[░█]|sessions \|/);
      expect(result.stderr.trim().split('\n').length).toBeLessThanOrEqual(1);
      expect(result.stdout).not.toMatch(/sessions \|/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** The command run under `script`, so stdout and stderr are a terminal unless redirected. */
  async function onTerminal(command: string): Promise<string> {
    const result = await execa('script', ['-qec', command, '/dev/null'], { env: { CI: '', TERM: 'xterm' }, reject: false, extendEnv: true });
    expect(result.exitCode).toBe(0);
    return String(result.stdout);
  }

  it('is drawn for estimate, whose table comes at the end', async () => {
    const dir = await batchDir();
    try {
      expect(await onTerminal(`node ${BIN} estimate ${dir}`)).toMatch(/[░█]+ \d\/3 sessions/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is drawn for inspect only when its per-session reports go to a file', async () => {
    const dir = await batchDir();
    try {
      const toTerminal = await onTerminal(`node ${BIN} inspect ${dir}`);
      expect(toTerminal).toContain('baseline');
      expect(toTerminal).not.toMatch(/sessions \|/);
      const toFile = await onTerminal(`node ${BIN} inspect ${dir} > ${join(dir, 'report.txt')}`);
      expect(toFile).toMatch(/[░█]+ \d\/3 sessions/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
