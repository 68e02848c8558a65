/**
 * `compactor audit` through the real CLI: simulated strategies on fixtures/bug.jsonl (the
 * issue's done-when: extract keeps at least 95% of the facts and every directive, truncate
 * beside it), audits of written sidecars, and the command's errors.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { removeAfterTest, SessionBuilder, writeSessions } from '../helpers/session-builder.js';

const BUG_POLICY = ['--context-limit', '80000'];

const counts = (compaction: Record<string, any>) =>
  ['file', 'command', 'error', 'directive'].map((kind) => `${compaction.facts[kind].kept}/${compaction.facts[kind].found}`).join(' ');

describe('audit --strategy on fixtures/bug.jsonl', () => {
  it('extract keeps every fact of every compaction; truncate loses commands and directives', async () => {
    const result = await runCli(['audit', '--json', '--strategy', 'extract,truncate', ...BUG_POLICY, 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record!.session).toBe('fixtures/bug.jsonl');
    expect(record!.policy).toMatchObject({ context_limit: 80000 });
    const simulated = record!.compactions.filter((c: any) => c.source === 'simulated');
    // replay compacts twice under this policy (each time under the trigger), at the same cuts for both strategies
    expect(simulated.map((c: any) => `${c.strategy} ${c.first_kept_index}`)).toEqual(['extract 23', 'extract 49', 'truncate 23', 'truncate 49']);
    // files commands errors directives, kept/found: the span grows, the counts follow
    expect(simulated.map(counts)).toEqual(['6/6 2/2 1/1 9/9', '8/8 4/4 2/2 12/12', '6/6 0/2 0/1 5/9', '8/8 1/4 1/2 8/12']);
    expect(simulated.map((c: any) => c.retention)).toEqual([1, 1, 11 / 18, 18 / 26]);
    expect(record!.strategies).toEqual([
      { strategy: 'extract', compactions: 2, retention: 1, lowest_retention: 1, directives_found: 21, directives_kept: 21 },
      { strategy: 'truncate', compactions: 2, retention: 29 / 44, lowest_retention: 11 / 18, directives_found: 21, directives_kept: 13 },
    ]);
    const lastTruncate = simulated[3];
    expect(lastTruncate.missing).toEqual([
      { kind: 'directive', text: 'Look at crates/coop-gateway and tell me where the history is built.', message_id: 'msg-0001' },
      { kind: 'command', text: 'rg -n "fn messages|assistant_response" crates/', message_id: 'msg-0002' },
      {
        kind: 'directive',
        text: 'Read the session store, the provider trait and the gateway loop, then propose how to add compaction.',
        message_id: 'msg-0007',
      },
      { kind: 'command', text: 'cargo test --workspace', message_id: 'msg-0020' },
      { kind: 'error', text: 'error[E0599]: no method named `with_metadata` found for struct `Message` in the current scope', message_id: 'msg-0021' },
      { kind: 'directive', text: "Go ahead and implement compaction in crates/coop-gateway/src/compaction.rs following pi's approach.", message_id: 'msg-0025' },
      { kind: 'directive', text: 'Keep it under 300 lines.', message_id: 'msg-0025' },
      { kind: 'command', text: 'cargo test -p coop-gateway compaction', message_id: 'msg-0032' },
    ]);
  });

  it('prints one row per compaction and a line per strategy, in 80 columns', async () => {
    const result = await runCli(['audit', '--strategy', 'extract', '--strategy', 'truncate', ...BUG_POLICY, 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('fixtures/bug.jsonl (canonical, 116 messages)');
    expect(lines.find((line) => line.includes('extract 2'))).toMatch(/extract 2\s+49\s+8\/8\s+4\/4\s+2\/2\s+12\/12\s+33,704\s+100\.0%$/);
    expect(result.stdout).toContain('extract: 100.0% kept over 2 compactions (lowest 100.0%), every directive kept');
    expect(result.stdout).toContain('truncate: 65.9% kept over 2 compactions (lowest 61.1%), 13/21 directives kept');
    // only the latest compaction of each strategy lists what it lost
    expect(result.stdout).toContain('missing after truncate 2:\n  directive  Look at crates/coop-gateway and tell me where the history is bu…');
    expect(result.stdout).not.toContain('missing after truncate 1');
    expect(result.stdout).not.toContain('missing after extract');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('says so when the policy never compacts', async () => {
    const result = await runCli(['audit', '--strategy', 'extract', 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('no compactions: no sidecar, none recorded, none simulated under this policy');
  });
});

describe('audit of written sidecars', () => {
  it('audits the sidecar compact wrote, against the session as it is now', async () => {
    const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
    const session = join(scratch.dir, 'bug.jsonl');
    expect((await runCli(['compact', '--strategy', 'truncate', ...BUG_POLICY, session])).exitCode).toBe(0);
    const truncate = jsonLines((await runCli(['audit', '--json', session])).stdout)[0]!;
    expect(truncate.compactions).toHaveLength(1);
    expect(truncate.compactions[0]).toMatchObject({
      source: 'sidecar',
      strategy: 'truncate',
      first_kept_index: 49,
      first_kept_message_id: 'msg-0050',
      end_index: 116,
      tokens_before: 96212,
      tokens_after: 39401,
      retention: 20 / 26,
    });
    expect(counts(truncate.compactions[0])).toBe('8/8 2/4 2/2 8/12');

    // a fresh copy: over the truncate sidecar, compact would report up-to-date
    const second = removeAfterTest(await scratchCopy('bug.jsonl'));
    const other = join(second.dir, 'bug.jsonl');
    expect((await runCli(['compact', '--strategy', 'extract', ...BUG_POLICY, other])).exitCode).toBe(0);
    const sidecar = JSON.parse(await readFile(join(second.dir, 'bug_compaction.json'), 'utf8'));
    expect(sidecar.strategy).toBe('extract');
    const extract = jsonLines((await runCli(['audit', '--json', other])).stdout)[0]!;
    expect(extract.compactions[0]).toMatchObject({ source: 'sidecar', strategy: 'extract', retention: 1, missing: [] });
    expect(counts(extract.compactions[0])).toBe('8/8 4/4 2/2 12/12');
  });

  it('counts an error kept only in a pruned output as lost', async () => {
    const session = new SessionBuilder()
      .user('Run the test suite and tell me what fails.')
      .tool('bash', { command: 'npm test' }, `FAIL src/parse.test.ts\n${'  at parse (src/parse.ts:10:5)\n'.repeat(30)}exit code: 1`, true)
      .assistant('The parser test fails.')
      .user('Fix the parser without touching the tests, then rerun them.')
      .tool('bash', { command: 'npm test' }, `ok\n${'  passing\n'.repeat(40)}exit code: 0`)
      .assistant('Fixed.');
    const files = removeAfterTest(await writeSessions({ 'pruned.jsonl': session }));
    const path = files.path('pruned.jsonl');
    expect((await runCli(['compact', '--strategy', 'prune', '--force', '--keep-recent', '100', path])).exitCode).toBe(0);
    const audit = jsonLines((await runCli(['audit', '--json', path])).stdout)[0]!;
    const [compaction] = audit.compactions;
    expect(compaction).toMatchObject({ source: 'sidecar', strategy: 'prune', first_kept_index: 4 });
    // the command and the request are still in the conversation; the FAIL line was pruned
    expect(counts(compaction)).toBe('0/0 1/1 0/1 1/1');
    expect(compaction.missing).toEqual([{ kind: 'error', text: 'FAIL src/parse.test.ts', message_id: 'm3' }]);
  });
});

describe('audit errors', () => {
  it('rejects an unknown strategy as a usage error', async () => {
    const result = await runCli(['audit', '--strategy', 'extract,bogus', 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--strategy: unknown strategy "bogus" (known: truncate, summarize, extract, prune)');
    expect(result.stdout).toBe('');
  });

  it('reports a bad session and carries on with the others', async () => {
    const files = removeAfterTest(await writeSessions({ 'good.jsonl': new SessionBuilder().user('hello there, please list the files') }));
    const bad = join(files.dir, 'bad.jsonl');
    // A block without a type is an error (an unknown type is only a warning, see README "Bad input").
    await writeFile(bad, '{"id":"m1","role":"user","content":[{"text":"no type"}]}\n');
    const result = await runCli(['audit', '--json', '--format', 'canonical', files.dir]);
    expect(result.exitCode).toBe(1);
    const records = jsonLines(result.stdout);
    expect(records.map((r) => [r.session.split('/').pop(), r.status ?? 'ok'])).toEqual([
      ['bad.jsonl', 'failed'],
      ['good.jsonl', 'ok'],
    ]);
    expect(records[0]!.error).toMatch(/bad\.jsonl:1: /);
    expect(records[1]!.compactions).toEqual([]);
  });
});
