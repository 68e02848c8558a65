/**
 * What the settings show a user, pinned byte for byte in test/golden/settings/: every command's
 * `--help`, the policy each command echoes in `--json` (inspect, audit, replay and its presets)
 * with settings from flags, COMPACTOR_* variables and the config file, estimate's and compact's
 * records under those settings, and the one line a bad setting gets. The settings table
 * (src/config/settings.ts) may be reorganised; none of this may move.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines, runCli, sessionRecords } from '../helpers/cli.js';

const GOLDEN = join(import.meta.dirname, '..', 'golden', 'settings');
const BUG = 'fixtures/bug.jsonl';
const CODEX = 'fixtures/real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl';

/** An empty XDG config home (no config of the machine's user is read) holding the config files below. */
let home = '';
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'compactor-golden-settings-'));
  await writeFile(join(home, 'percent.json'), JSON.stringify({ trigger_percent: 70, keep_recent: '10%', cut_rule: 'tool-safe', context_limit: 90000 }));
  await writeFile(join(home, 'reserve.json'), JSON.stringify({ reserve: 12000, keep_recent: 4000, strategy: 'extract', tokenizer: 'o200k' }));
  await writeFile(join(home, 'bad-value.json'), JSON.stringify({ keep_recent: '120%' }));
  await writeFile(join(home, 'api-key.json'), JSON.stringify({ api_key: 'sk-not-read' }));
  await writeFile(join(home, 'not-object.json'), '[1, 2]');
});
afterAll(() => rm(home, { recursive: true, force: true }));

/** `$ args` with the exit code, stdout and stderr, the config home's path taken out. */
async function run(args: readonly string[], env: Record<string, string> = {}, pick?: (stdout: string) => string): Promise<string> {
  const result = await runCli(args.map((arg) => arg.replace('<home>', home)), { env: { XDG_CONFIG_HOME: home, COLUMNS: '80', ...env } });
  const stdout = pick && result.exitCode === 0 ? pick(result.stdout) : result.stdout;
  const shownEnv = Object.entries(env).map(([name, value]) => `${name}=${value} `).join('');
  const text = `$ ${shownEnv}compactor ${args.join(' ')}\nexit ${result.exitCode}\n--- stdout\n${stdout}\n--- stderr\n${result.stderr}\n`;
  return text.split(home).join('<home>');
}

/** Only the settings each record echoes, one JSON line each, in the order printed. */
const echoed = (fields: readonly string[]) => (stdout: string) =>
  jsonLines(stdout)
    .map((record) => JSON.stringify(Object.fromEntries(fields.filter((field) => field in record).map((field) => [field, record[field]]))))
    .join('\n');

/** replay's policies: the first at the top level, then every one compared. */
// Each session's record (the roll-up across sessions that ends a run over two echoes no policy).
const replayPolicies = (stdout: string) =>
  sessionRecords(stdout)
    .flatMap((record) => [JSON.stringify(record['policy']), ...(record['policies'] as { policy: unknown }[]).map((entry) => JSON.stringify(entry.policy))])
    .join('\n');

const COMMANDS = ['estimate', 'inspect', 'compact', 'replay', 'context', 'fork', 'audit', 'completion'];

describe('settings as a user sees them are unchanged', () => {
  it('--help of the program and of every command', async () => {
    const parts = [await run(['--help'])];
    for (const command of COMMANDS) parts.push(await run([command, '--help']));
    await expect(parts.join('\n')).toMatchFileSnapshot(join(GOLDEN, 'help.txt'));
  });

  it('the policy inspect and audit echo, from each source', async () => {
    const inspect = echoed(['policy', 'trigger_tokens']);
    const parts = [
      await run(['inspect', '--json', BUG, CODEX], {}, inspect),
      await run(['inspect', '--json', '--reserve', '25%', '--keep-recent', '35%', '--cut-rule', 'tool-safe', '--force', BUG, CODEX], {}, inspect),
      await run(['inspect', '--json', '--trigger-percent', '80', '--context-limit', '100000', BUG], {}, inspect),
      await run(['inspect', '--json', '--reserve', '5000', BUG], { COMPACTOR_TRIGGER_PERCENT: '60', COMPACTOR_KEEP_RECENT: '3000' }, inspect),
      await run(['inspect', '--json', BUG], { COMPACTOR_RESERVE: '50%', COMPACTOR_CUT_RULE: 'tool-safe', COMPACTOR_CONTEXT_LIMIT: '150000' }, inspect),
      await run(['inspect', '--json', '--config', '<home>/percent.json', BUG], {}, inspect),
      await run(['inspect', '--json', '--config', '<home>/percent.json', '--reserve', '1000', BUG], { COMPACTOR_KEEP_RECENT: '2%' }, inspect),
      await run(['inspect', '--json', '--config', '<home>/reserve.json', BUG], { COMPACTOR_TRIGGER_PERCENT: '95' }, inspect),
      await run(['audit', '--json', '--strategy', 'truncate,extract', '--keep-recent', '5000', BUG], {}, echoed(['policy'])),
      await run(['audit', '--json', '--strategy', 'truncate', '--config', '<home>/percent.json', '--force', BUG], {}, echoed(['policy'])),
    ];
    await expect(parts.join('\n')).toMatchFileSnapshot(join(GOLDEN, 'policy-echo.txt'));
  });

  it('the policies replay echoes: custom from each source, and every preset', async () => {
    const all = 'custom,pi,codex,claude-code,opencode,opal,coop';
    const parts = [
      await run(['replay', '--json', '--policy', all, BUG], {}, replayPolicies),
      await run(['replay', '--json', '--policy', all, '--context-limit', '60000', '--allow-no-gain', '--force', BUG], {}, replayPolicies),
      await run(['replay', '--json', '--policy', 'opal,custom', '--trigger-percent', '75', '--keep-recent', '30%', '--cut-rule', 'tool-safe', BUG, CODEX], {}, replayPolicies),
      await run(['replay', '--json', '--policy', 'custom,codex', '--config', '<home>/percent.json', BUG], { COMPACTOR_RESERVE: '20000' }, replayPolicies),
    ];
    await expect(parts.join('\n')).toMatchFileSnapshot(join(GOLDEN, 'replay-policies.txt'));
  });

  it('estimate and compact --dry-run under settings from each source', async () => {
    const parts = [
      await run(['estimate', '--json', '--reserve', '90%', '--keep-recent', '10%', BUG, CODEX]),
      await run(['estimate', '--json', '--tokenizer', 'cl100k', BUG], { COMPACTOR_TRIGGER_PERCENT: '20', COMPACTOR_CUT_RULE: 'tool-safe' }),
      await run(['estimate', '--json', '--config', '<home>/reserve.json', BUG]),
      await run(['compact', '--dry-run', '--json', '--config', '<home>/reserve.json', BUG, CODEX]),
      await run(['compact', '--dry-run', '--json', '--force', '--strategy', 'truncate', BUG], { COMPACTOR_KEEP_RECENT: '25%', COMPACTOR_CONTEXT_LIMIT: '80000' }),
      await run(['compact', '--dry-run', '--json', BUG], { COMPACTOR_STRATEGY: 'prune', COMPACTOR_TOKENIZER: 'o200k' }),
    ];
    await expect(parts.join('\n')).toMatchFileSnapshot(join(GOLDEN, 'records.txt'));
  });

  it('a bad setting is one line naming where it came from', async () => {
    const parts = [
      await run(['estimate', '--reserve', '101%', BUG]),
      await run(['estimate', '--keep-recent', 'lots', BUG]),
      await run(['estimate', '--context-limit', '0', BUG]),
      await run(['estimate', '--trigger-percent', '0', BUG]),
      await run(['estimate', '--cut-rule', 'anywhere', BUG]),
      await run(['estimate', '--tokenizer', 'words', BUG]),
      await run(['compact', '--dry-run', '--strategy', 'magic', BUG]),
      await run(['compact', '--dry-run', '--concurrency', '0', BUG]),
      await run(['compact', '--dry-run', '--base-url', 'ftp://x', BUG]),
      await run(['compact', '--dry-run', '--max-retries', '11', BUG]),
      await run(['compact', '--dry-run', '--on-error', 'ignore', BUG]),
      await run(['compact', '--dry-run', '--base-url', 'http://127.0.0.1:9/v1', BUG]),
      await run(['replay', '--summarizer-model', '', BUG]),
      await run(['compact', '--dry-run', '--max-summary-tokens', '0', BUG]),
      await run(['estimate', BUG], { COMPACTOR_CUT_RULE: 'anywhere' }),
      await run(['estimate', BUG], { COMPACTOR_RESERVE: 'x' }),
      await run(['estimate', BUG], { COMPACTOR_CONTEXT_LIMIT: '12.5' }),
      await run(['compact', '--dry-run', BUG], { COMPACTOR_TIMEOUT: '-1' }),
      await run(['compact', '--dry-run', BUG], { COMPACTOR_API_KEY_ENV: 'not a name' }),
      await run(['estimate', '--config', '<home>/bad-value.json', BUG]),
      await run(['estimate', '--config', '<home>/api-key.json', BUG]),
      await run(['estimate', '--config', '<home>/not-object.json', BUG]),
      await run(['estimate', '--config', '<home>/missing.json', BUG]),
      await run(['estimate', '--reserve', '1000', '--reserve', '2000', '--json', BUG], {}, echoed(['context_window', 'reason'])),
    ];
    await expect(parts.join('\n')).toMatchFileSnapshot(join(GOLDEN, 'errors.txt'));
  });
});
