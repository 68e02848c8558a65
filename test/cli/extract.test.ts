/**
 * `--strategy extract` through the real CLI: the checkpoint's sections and contents on
 * fixtures/bug.jsonl, determinism, merging with a previous extract, the size budget, split
 * turns, and session shapes from other agents (Codex shell arrays, pi exit lines, pastes).
 */
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { filler, removeAfterTest, SessionBuilder, writeSessions } from '../helpers/session-builder.js';


/**
 * Forced at the model's window (200,000), under the trigger, so the keep budget alone places the
 * cut: the first two turns are summarized (at an 80,000 window the cut must also bring the context
 * under the trigger and lies further on).
 */
async function compactBug(...flags: string[]): Promise<Record<string, any>> {
  const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
  const result = await runCli(['compact', '--strategy', 'extract', '--force', ...flags, join(scratch.dir, 'bug.jsonl')]);
  expect(result.exitCode).toBe(0);
  return JSON.parse(await readFile(join(scratch.dir, 'bug_compaction.json'), 'utf8'));
}

/** Forced and written whatever it gains: these sessions are a few hundred tokens. */
async function compactFile(path: string, ...flags: string[]): Promise<Record<string, any>> {
  const result = await runCli(['compact', '--strategy', 'extract', '--force', '--allow-no-gain', ...flags, path]);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(await readFile(path.replace(/\.jsonl$/, '_compaction.json'), 'utf8'));
}

describe('extract on fixtures/bug.jsonl', () => {
  it('writes the checkpoint sections with the requests, commands, errors and files of the span', async () => {
    const sidecar = await compactBug();
    expect(sidecar).toMatchObject({ strategy: 'extract', first_kept_index: 24, usage: null, pruned_outputs: null });
    const summary: string = sidecar.summary;
    const headings = summary.split('\n').filter((line) => /^(##|<read-files>|<modified-files>)/.test(line));
    expect(headings).toEqual([
      '## Goal',
      '## Constraints & Preferences',
      '## Progress',
      '### Done',
      '### In Progress',
      '## Key Decisions',
      '## Next Steps',
      '## Critical Context',
      '<read-files>',
    ]);
    // the first request is the goal, verbatim; the second is in progress
    expect(summary).toContain(
      '## Goal\nOur gateway re-sends the whole conversation on every provider call. Look at crates/coop-gateway and tell me where the history is built.\n',
    );
    expect(summary).toContain('### In Progress\n- [ ] Read the session store, the provider trait and the gateway loop, then propose how to add compaction. Do not change coop-core types.\n');
    expect(summary).toContain('- Do not change coop-core types.');
    expect(summary).toContain('- `rg -n "fn messages|assistant_response" crates/` → ok (2 runs)\n- `cargo test --workspace` → exit 101, error');
    expect(summary).toContain(
      'Errors seen, oldest first (verbatim):\n- error[E0599]: no method named `with_metadata` found for struct `Message` in the current scope',
    );
    expect(summary).toContain('2. The last command failed: `cargo test --workspace` → exit 101, error; see Critical Context.');
    expect(summary).toContain('<read-files>\ncrates/coop-core/src/provider.rs\n');
    expect(sidecar.details.extract).toMatchObject({
      commands: [
        { command: 'rg -n "fn messages|assistant_response" crates/', outcome: 'ok', runs: 2 },
        { command: 'cargo test --workspace', outcome: 'exit 101, error', runs: 1 },
      ],
      errors: ['error[E0599]: no method named `with_metadata` found for struct `Message` in the current scope'],
      earlier: null,
    });
    expect(sidecar.details.extract.requests).toHaveLength(2);
  });

  it('is deterministic: the same session gives the same summary, byte for byte', async () => {
    const [first, second] = await Promise.all([compactBug(), compactBug()]);
    expect(second.summary).toBe(first.summary);
    expect(second.details).toEqual(first.details);
    expect(second.summary_tokens).toBe(first.summary_tokens);
  });

  it('stays within --max-summary-tokens, saying what it left out', async () => {
    const sidecar = await compactBug('--max-summary-tokens', '300');
    expect(sidecar.summary.length).toBeLessThanOrEqual(1200);
    // decisions and constraints go before any fact; both requests stay verbatim
    expect(sidecar.summary).toMatch(/- … \d+ older decisions omitted for size/);
    expect(sidecar.summary).toContain('Our gateway re-sends the whole conversation on every provider call.');
    expect(sidecar.summary).toContain('Read the session store, the provider trait and the gateway loop');
    const tiny = await compactBug('--max-summary-tokens', '40');
    expect(tiny.summary.length).toBeLessThanOrEqual(160);
    expect(tiny.summary.endsWith('[… checkpoint cut to its size budget]')).toBe(true);
  });

  it('rejects a budget that is not a whole number', async () => {
    const result = await runCli(['compact', '--strategy', 'extract', '--max-summary-tokens', '0', 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--max-summary-tokens must be a whole number >= 1, got 0');
  });
});

describe('extract merges with the previous compaction', () => {
  it('keeps the earlier facts and adds the new span', async () => {
    const first = new SessionBuilder()
      .user('Set up the build and make it pass. Never edit the vendored code.')
      .tool('bash', { command: 'make build' }, `cc -c main.c\nmain.c:3:10: fatal error: util.h: No such file or directory\n${filler('build', 600)}`, true)
      .assistant('I will add the missing header instead of changing the include path.')
      .user('Good, now run the tests.')
      .tool('bash', { command: 'make test' }, `${filler('test', 800)}\nexit code: 0`)
      .assistant('All tests pass.')
      .user('Thanks. Now document the build in README.md.');
    const files = removeAfterTest(await writeSessions({ 'merge.jsonl': first }));
    const path = files.path('merge.jsonl');
    const one = await compactFile(path, '--keep-recent', '20');
    expect(one.first_kept_index).toBe(4);

    const more = new SessionBuilder()
      .tool('write_file', { path: 'README.md', content: '# Build\nRun make build.' }, 'Wrote file.')
      .tool('bash', { command: 'make build' }, `${filler('build', 400)}\nexit code: 0`)
      .assistant('Documented and rebuilt.')
      .user('Finally, tag the release.');
    // the appended part continues the ids and call ids of the first part
    const appended = more.records.map((record, i) => ({
      ...JSON.parse(JSON.stringify(record).replaceAll('call_', 'call_b')),
      id: `m${first.records.length + i + 1}`,
    }));
    await appendFile(path, appended.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const two = await compactFile(path, '--keep-recent', '1');
    expect(two.compactions).toBe(2);
    expect(two.first_kept_index).toBe(14);
    expect(two.details.extract.requests).toEqual([
      'Set up the build and make it pass. Never edit the vendored code.',
      'Good, now run the tests.',
      'Thanks. Now document the build in README.md.',
    ]);
    expect(two.details.extract.commands).toEqual([
      { command: 'make test', outcome: 'exit 0', runs: 1 },
      { command: 'make build', outcome: 'exit 0', runs: 2 },
    ]);
    expect(two.details.extract.errors).toEqual(['main.c:3:10: fatal error: util.h: No such file or directory']);
    expect(two.summary).toContain('## Goal\nSet up the build and make it pass. Never edit the vendored code.');
    expect(two.summary).toContain('- [x] Good, now run the tests.');
    expect(two.summary).toContain('- [ ] Thanks. Now document the build in README.md.');
    expect(two.summary).toContain('- Never edit the vendored code.');
    expect(two.summary).toContain('<modified-files>\nREADME.md\n</modified-files>');

    const audit = jsonLines((await runCli(['audit', '--json', path])).stdout)[0]!;
    expect(audit.compactions[0]).toMatchObject({ source: 'sidecar', strategy: 'extract', retention: 1 });
  });

  it('keeps a previous summary written by another strategy verbatim', async () => {
    const session = new SessionBuilder()
      .user('Count the lines of every file in src and report the largest one.')
      .tool('bash', { command: 'wc -l src/*.ts' }, filler('wc', 900))
      .assistant('The largest file is src/cli.ts.')
      .user('Now split it in two.');
    const files = removeAfterTest(await writeSessions({ 'switch.jsonl': session }));
    const path = files.path('switch.jsonl');
    const result = await runCli(['compact', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '10', path]);
    expect(result.exitCode).toBe(0);
    const truncated = JSON.parse(await readFile(path.replace('.jsonl', '_compaction.json'), 'utf8'));
    await appendFile(path, `${JSON.stringify({ id: 'm6', role: 'assistant', content: 'Split into cli.ts and args.ts.' })}\n${JSON.stringify({ id: 'm7', role: 'user', content: 'Run the build again please.' })}\n`);
    const merged = await compactFile(path, '--keep-recent', '10');
    expect(merged.details.extract.earlier).toBe(truncated.summary);
    expect(merged.summary).toContain(`Earlier summary:\n${truncated.summary}`);
  });
});

describe('extract on other agents\' shapes', () => {
  it('reads Codex shell arrays, pi exit lines and pasted text, and skips injected context', async () => {
    const paste = `Here is the log, find why the deploy fails:\n${filler('log', 5000)}`;
    const session = new SessionBuilder()
      .user('<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>')
      .user('<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>')
      .user(paste)
      .tool('shell', { command: ['bash', '-lc', 'npm run deploy'], workdir: '/home/dev/app' }, '{"output":"Error: missing DEPLOY_TOKEN\\n","metadata":{"exit_code":1,"duration_seconds":0.4}}')
      .tool('bash', { command: 'npx tsc --noEmit' }, "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n\n\nCommand exited with code 2", true)
      .assistant('Both are fixed by setting the token and the type.')
      .user('Set the token from the vault, and do not commit it.');
    const files = removeAfterTest(await writeSessions({ 'shapes.jsonl': session }));
    const sidecar = await compactFile(files.path('shapes.jsonl'), '--keep-recent', '5');
    expect(sidecar.first_kept_index).toBe(8);
    const { extract } = sidecar.details;
    expect(extract.requests).toHaveLength(1);
    expect(extract.requests[0]).toMatch(/^Here is the log, find why the deploy fails:\nlog line 1\n/);
    expect(extract.requests[0]).toMatch(/\n\[… \d+ more characters of pasted text cut\]$/);
    expect(extract.requests[0].length).toBeLessThan(2100);
    expect(extract.commands).toEqual([
      { command: 'npm run deploy', outcome: 'exit 1', runs: 1 },
      { command: 'npx tsc --noEmit', outcome: 'exit 2, error', runs: 1 },
    ]);
    expect(extract.errors).toEqual([
      'Error: missing DEPLOY_TOKEN',
      "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    ]);
    expect(sidecar.summary).not.toContain('environment_context');
    expect(sidecar.summary).not.toContain('command-name');
    const audit = jsonLines((await runCli(['audit', '--json', files.path('shapes.jsonl')])).stdout)[0]!;
    expect(audit.compactions[0].facts).toEqual({
      file: { found: 0, kept: 0 },
      command: { found: 2, kept: 2 },
      error: { found: 2, kept: 2 },
      // the paste's head: its first line and the log lines that fit in 2,000 characters are not sentences
      directive: { found: 1, kept: 1 },
    });
  });

  it('gives a split turn its own summary of what the turn did so far', async () => {
    const session = new SessionBuilder()
      .user('Rename every use of oldName to newName across the repo.')
      .tool('bash', { command: 'npm test' }, `FAIL src/f2.test.ts\n${filler('trace', 300)}`, true);
    for (let i = 1; i <= 3; i++) session.tool('edit_file', { path: `src/f${i}.ts`, old_string: 'oldName', new_string: 'newName' }, filler(`edit ${i}`, 300));
    session.tool('bash', { command: 'npm test' }, filler('passing', 300)).assistant('All tests pass with the new name.');
    const files = removeAfterTest(await writeSessions({ 'split.jsonl': session }));
    // tool-safe may cut before the last call; the turn's first 9 messages are then its prefix
    const sidecar = await compactFile(files.path('split.jsonl'), '--keep-recent', '40', '--cut-rule', 'tool-safe');
    expect(sidecar.first_kept_index).toBe(9);
    expect(sidecar.summary).toContain('## Goal\n(no user request in the compacted part)');
    expect(sidecar.summary).toContain('<modified-files>\nsrc/f1.ts\nsrc/f2.ts\nsrc/f3.ts\n</modified-files>');
    expect(sidecar.turn_prefix_summary).toBe(
      [
        '## Request in progress',
        'Rename every use of oldName to newName across the repo.',
        '',
        '## Done so far',
        '- `npm test` → error',
        '',
        '## Errors seen (verbatim)',
        '- FAIL src/f2.test.ts',
      ].join('\n'),
    );
  });
});
