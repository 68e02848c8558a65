/**
 * Every command's output on every fixture, pinned byte for byte in test/golden/. A change that
 * moves code without meaning to change behaviour (a refactor, a speed-up) must leave these files
 * as they are; a change that means to alter an output updates them on purpose
 * (`npx vitest run test/golden.test.ts -u`) and the diff shows what moved.
 *
 * Each command runs once over the whole fixtures tree, as a user would run it over an archive,
 * with `--jobs 1` so warnings come out in one order. Compactions run on a scratch copy; their
 * sidecars are pinned too, with the one field that names the time of writing blanked, and the
 * views `context` prints by their digests.
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fg from 'fast-glob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, runCli } from './helpers/cli.js';

const GOLDEN = join(import.meta.dirname, 'golden');

/** One command's stdout, then its stderr after a marker, with the scratch directory's path taken out. */
function transcript(result: { exitCode: number; stdout: string; stderr: string }, scratch?: string): string {
  const text = `exit ${result.exitCode}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}\n`;
  return scratch ? text.split(scratch).join('<scratch>') : text;
}

const READ_ONLY: Record<string, readonly string[]> = {
  'estimate.json': ['estimate', '--json'],
  'estimate.txt': ['estimate'],
  'inspect.json': ['inspect', '--json'],
  'inspect.txt': ['inspect', '--top', '3', '--detail'],
  'inspect-archive.txt': ['inspect', '--by', 'week'],
  'replay.json': ['replay', '--json', '--policy', 'custom,pi,codex,claude-code,opencode,opal,coop'],
  'replay.txt': ['replay', '--policy', 'pi,coop', '--context-limit', '60000'],
  'compact-dry-run.json': ['compact', '--dry-run', '--json', '--strategy', 'truncate', '--force', '--keep-recent', '5000'],
};

describe('every output on every fixture is unchanged', () => {
  it.each(Object.entries(READ_ONLY))('%s', async (name, args) => {
    const result = await runCli([...args, '--jobs', '1', 'fixtures']);
    await expect(transcript(result)).toMatchFileSnapshot(join(GOLDEN, name));
  });

  describe.each(['truncate', 'extract', 'prune'])('compact --strategy %s, then context and audit', (strategy) => {
    let scratch = '';
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'compactor-golden-'));
      await cp(FIXTURES, join(scratch, 'fixtures'), { recursive: true });
    });
    afterAll(() => rm(scratch, { recursive: true, force: true }));

    it('pins the run, the sidecars, the views and the audit', async () => {
      const compact = await runCli(['compact', '--json', '--strategy', strategy, '--force', '--keep-recent', '5000', '--jobs', '1', 'fixtures'], { cwd: scratch });
      const parts = [`$ compact\n${transcript(compact, scratch)}`];
      const sidecars = (await fg('fixtures/**/*_compaction.json', { cwd: scratch })).sort();
      for (const sidecar of sidecars) {
        const state = JSON.parse(await readFile(join(scratch, sidecar), 'utf8')) as Record<string, unknown>;
        parts.push(`$ cat ${sidecar}\n${JSON.stringify({ ...state, created_at: '<written at>' }, null, 1)}\n`);
        if (strategy !== 'truncate') continue;
        // The view follows from the session and its sidecar whatever the strategy: one strategy's
        // views are enough, pinned by digest (they repeat the sessions, megabytes in all).
        const session = join(dirname(sidecar), String(state['session']));
        const context = await runCli(['context', session], { cwd: scratch });
        const digest = createHash('sha256').update(context.stdout).digest('hex');
        parts.push(`$ context ${session}\n${transcript({ ...context, stdout: `${context.stdout.split('\n').length} lines, sha256 ${digest}` }, scratch)}`);
      }
      parts.push(`$ audit --json\n${transcript(await runCli(['audit', '--json', '--jobs', '1', 'fixtures'], { cwd: scratch }), scratch)}`);
      await expect(parts.join('\n')).toMatchFileSnapshot(join(GOLDEN, `compact-${strategy}.txt`));
    });
  });
});
