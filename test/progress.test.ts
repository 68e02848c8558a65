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
});
