/**
 * The compaction policy through the real CLI: a compaction must pay (`no-gain`) and get under
 * the trigger (`would-thrash`), in compact, estimate and replay alike; a larger --keep-recent never
 * keeps fewer messages under --force; sizes as shares of the window; and the policy settings from
 * COMPACTOR_* variables and the config file, with the summarizer's precedence and validation.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { removeAfterTest } from '../helpers/session-builder.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const CODEX = 'real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl';

/** An empty XDG config home, so no config of the machine's user is read. */
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'compactor-config-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});
const cli = (args: readonly string[], env: Record<string, string> = {}) => runCli(args, { env: { XDG_CONFIG_HOME: home, ...env } });

describe('a compaction must pay', () => {
  it('compact skips one that does not shrink the context as no-gain, writes nothing, and exits 0', async () => {
    const scratch = removeAfterTest(await scratchCopy('formats/openai-chat.jsonl', CODEX));
    const result = await cli(['compact', '--json', '--force', '--strategy', 'truncate', scratch.dir]);
    expect(result.exitCode).toBe(0);
    const records = jsonLines(result.stdout);
    expect(records.map((record) => record['status'])).toEqual(['no-gain', 'no-gain']);
    // 53,412 -> 53,404: eight tokens of 53,412 do not pay for what the summary loses.
    expect(records[0]).toMatchObject({ tokens_before: 53_412, tokens_after: 53_404 });
    expect(records[0]!['reason']).toContain('--allow-no-gain writes it');
    expect(records[1]!['tokens_after']).toBeGreaterThanOrEqual(records[1]!['tokens_before']);
    expect((await readdir(scratch.dir)).filter((name) => name.endsWith('_compaction.json'))).toEqual([]);

    const human = await cli(['compact', '--force', '--strategy', 'truncate', scratch.dir]);
    expect(human.stdout).toMatch(/^no-gain {4}\S+openai-chat\.jsonl \(1,380 -> [\d,]+ tokens: the compaction would not pay/m);
    expect(human.stdout).toContain('0 compacted, 0 skipped, 0 up-to-date, 2 no-gain, 0 failed');
  });

  it('writes it when asked with --allow-no-gain', async () => {
    const scratch = removeAfterTest(await scratchCopy('formats/openai-chat.jsonl'));
    const result = await cli(['compact', '--json', '--force', '--allow-no-gain', '--strategy', 'truncate', scratch.dir]);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'compacted' });
  });

  it('replay does not count a simulated compaction that does not pay, and keeps it with --allow-no-gain', async () => {
    // Forced at every turn start (the 200,000 window is never reached): at turns 3 to 5 the budget's
    // cut only summarizes turn 1's prompt, 210 tokens of 57,000.
    const [record] = jsonLines((await cli(['replay', '--json', '--force', BUG])).stdout);
    const refused = record!.turns.flatMap((turn: any) => turn.refused_compactions.map((refusal: any) => ({ turn: turn.turn, ...refusal })));
    expect(refused.map((refusal: any) => [refusal.turn, refusal.status])).toEqual([[3, 'no-gain'], [4, 'no-gain'], [5, 'no-gain']]);
    expect(refused[0]).toMatchObject({ trigger: 'proactive', tokens_before: 56_939, tokens_after: 56_729 });
    expect(record!.totals).toMatchObject({ compactions: 3, no_gain: 3, would_thrash: 0 });
    expect(record!.turns[2].compacted).toBe(false);
    const [allowed] = jsonLines((await cli(['replay', '--json', '--force', '--allow-no-gain', BUG])).stdout);
    expect(allowed!.totals).toMatchObject({ compactions: 4, no_gain: 0 });
    expect(allowed!.policy).toMatchObject({ allow_no_gain: true, allow_thrash: false });
  });
});

describe('no thrash by default', () => {
  it('replay: every compaction of the default policy gets under the trigger; the coop preset, replayed as written, still thrashes', async () => {
    const [record] = jsonLines((await cli(['replay', '--json', '--policy', 'custom,coop', '--context-limit', '80000', BUG])).stdout);
    const [custom, coop] = record!.policies;
    const events = custom.turns.flatMap((turn: any) => turn.compactions);
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect(event.tokens_after).toBeLessThanOrEqual(50_000);
    expect(custom.thrash.detected).toBe(false);
    expect(custom.break_even.every((entry: any) => entry.calls !== null)).toBe(true);
    expect(custom.savings.cache_aware_usd).toBeGreaterThan(0);
    expect(coop.thrash).toMatchObject({ detected: true, fastest_refill_turns: 0 });
    expect(coop.policy).toMatchObject({ allow_no_gain: true, allow_thrash: true });
  });

  it('compact and estimate say would-thrash when no cut can get under the trigger, and write nothing', async () => {
    // At 40,000 the trigger is 10,000, below the 20,200 tokens of system prompt and tools every call carries.
    const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
    const result = await cli(['compact', '--json', '--strategy', 'truncate', '--context-limit', '40000', scratch.dir]);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({ status: 'would-thrash', tokens_before: 96_212 });
    expect(record!['reason']).toBe('96,212 tokens: no valid cut brings the context under the trigger (10,000 tokens)');
    expect(await readdir(scratch.dir)).toEqual(['bug.jsonl']);
    const human = await cli(['compact', '--strategy', 'truncate', '--context-limit', '40000', scratch.dir]);
    expect(human.stdout).toContain('0 compacted, 0 skipped, 0 up-to-date, 1 would-thrash, 0 failed');

    const [estimate] = jsonLines((await cli(['estimate', '--json', '--context-limit', '40000', BUG])).stdout);
    expect(estimate).toMatchObject({ would_compact: false, would_thrash: true, cut: null });
    expect((await cli(['estimate', '--context-limit', '40000', BUG])).stdout).toMatch(/\bwould-thrash\b/);
  });
});

describe('--force with a larger --keep-recent', () => {
  it('never keeps fewer messages', async () => {
    const kept: number[] = [];
    for (const keep of ['2000', '20000', '40000', '60000', '100000']) {
      const [record] = jsonLines((await cli(['estimate', '--json', '--force', '--keep-recent', keep, BUG])).stdout);
      kept.push(record!.messages - record!.cut.index);
    }
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
    // The whole session fits 100,000: the earliest valid cut, which keeps all but the first turn's prompt and reply.
    expect(kept.at(-1)).toBeGreaterThan(100);
  });
});

describe('sizes as shares of the window', () => {
  it('takes --reserve and --keep-recent in percent of the window the session ran with', async () => {
    const policyOf = async (args: string[]) => jsonLines((await cli(['inspect', '--json', ...args, BUG])).stdout)[0]!.policy;
    expect(await policyOf(['--reserve', '25%', '--keep-recent', '35%', '--context-limit', '80000'])).toMatchObject({
      context_limit: 80_000,
      reserve_tokens: 20_000,
      keep_recent_tokens: 28_000,
    });
    // bug.jsonl ran on Opus: the catalog's 200,000.
    expect(await policyOf(['--reserve', '25%', '--keep-recent', '35%'])).toMatchObject({ context_limit: 200_000, reserve_tokens: 50_000, keep_recent_tokens: 70_000 });
    expect(await policyOf(['--reserve', '16384', '--keep-recent', '20000'])).toMatchObject({ reserve_tokens: 16_384, keep_recent_tokens: 20_000 });
  });

  it('rejects anything else with a line naming the flag (exit 2)', async () => {
    // Text is quoted, a number is not.
    for (const [flag, value, got] of [['--reserve', '101%', '"101%"'], ['--keep-recent', 'lots', '"lots"'], ['--reserve', '-1', '-1'], ['--keep-recent', '1.5', '1.5']]) {
      const result = await cli(['estimate', flag!, value!, BUG]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr.split('\n')[0]).toBe(`compactor: ${flag}: must be a whole number of tokens >= 0 or a percentage of the window (like 25%), got ${got}`);
    }
  });
});

describe('policy settings from COMPACTOR_* variables and the config file', () => {
  const policyOf = async (args: string[], env: Record<string, string> = {}) => jsonLines((await cli(['inspect', '--json', ...args, BUG], env)).stdout)[0]!.policy;

  async function config(settings: Record<string, unknown>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'compactor-config-'));
    const path = join(dir, 'config.json');
    await writeFile(path, JSON.stringify(settings));
    removeAfterTest({ cleanup: () => rm(dir, { recursive: true, force: true }) });
    return path;
  }

  it('reads every policy key from the config file', async () => {
    const path = await config({ context_limit: 80_000, reserve: '25%', keep_recent: 1_000, cut_rule: 'tool-safe' });
    expect(await policyOf(['--config', path])).toMatchObject({ context_limit: 80_000, reserve_tokens: 20_000, keep_recent_tokens: 1_000, cut_rule: 'tool-safe' });
    const percent = await config({ trigger_percent: 80 });
    expect(await policyOf(['--config', percent])).toMatchObject({ trigger_percent: 80 });
    // The default config file, where XDG puts it.
    const xdg = await mkdtemp(join(tmpdir(), 'compactor-xdg-'));
    removeAfterTest({ cleanup: () => rm(xdg, { recursive: true, force: true }) });
    await mkdir(join(xdg, 'session-compactor'));
    await writeFile(join(xdg, 'session-compactor', 'config.json'), JSON.stringify({ keep_recent: '35%' }));
    expect(await policyOf([], { XDG_CONFIG_HOME: xdg })).toMatchObject({ keep_recent_tokens: 70_000 });
  });

  it('takes strategy and tokenizer from the file too', async () => {
    const path = await config({ strategy: 'extract', tokenizer: 'o200k', context_limit: 80_000 });
    const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
    const [record] = jsonLines((await cli(['compact', '--json', '--config', path, scratch.dir])).stdout);
    expect(record).toMatchObject({ status: 'compacted', strategy: 'extract' });
    const counted = async (args: string[]) => jsonLines((await cli(['estimate', '--json', ...args, BUG])).stdout)[0]!['estimated_tokens'];
    expect(await counted(['--config', path])).toBe(await counted(['--tokenizer', 'o200k']));
    expect(await counted(['--config', path])).not.toBe(await counted([]));
  });

  it('ranks flags over variables over the file, key by key', async () => {
    const path = await config({ keep_recent: 1_000, reserve: 10_000, context_limit: 80_000 });
    const env = { COMPACTOR_KEEP_RECENT: '2000', COMPACTOR_CUT_RULE: 'tool-safe' };
    expect(await policyOf(['--config', path], env)).toMatchObject({ keep_recent_tokens: 2_000, reserve_tokens: 10_000, cut_rule: 'tool-safe', context_limit: 80_000 });
    expect(await policyOf(['--config', path, '--keep-recent', '3000', '--cut-rule', 'conservative'], env)).toMatchObject({ keep_recent_tokens: 3_000, cut_rule: 'conservative' });
  });

  it('treats reserve and trigger percent as one choice: the higher source wins whichever it names', async () => {
    const percent = await config({ trigger_percent: 80 });
    const reserveFlag = await policyOf(['--config', percent, '--reserve', '16384']);
    expect(reserveFlag).toMatchObject({ reserve_tokens: 16_384 });
    expect(reserveFlag).not.toHaveProperty('trigger_percent');
    const reserveFile = await config({ reserve: 16_384 });
    expect(await policyOf(['--config', reserveFile], { COMPACTOR_TRIGGER_PERCENT: '90' })).toMatchObject({ trigger_percent: 90 });
  });

  it('rejects a bad value in one line naming where it came from', async () => {
    const path = await config({ keep_recent: '120%' });
    const file = await cli(['estimate', '--config', path, BUG]);
    expect(file.exitCode).toBe(1);
    expect(file.stderr.trim()).toBe(
      `compactor: ${path}: invalid config: keep_recent: must be a whole number of tokens >= 0 or a percentage of the window (like 25%), got "120%"`,
    );
    const env = await cli(['estimate', BUG], { COMPACTOR_CUT_RULE: 'aggressive' });
    expect(env.exitCode).toBe(1);
    expect(env.stderr).toMatch(/^compactor: environment variable COMPACTOR_CUT_RULE: .*conservative.*tool-safe/);
    expect(env.stderr.trim().split('\n')).toHaveLength(1);
    const limit = await cli(['estimate', BUG], { COMPACTOR_CONTEXT_LIMIT: '0' });
    expect(limit.stderr.trim()).toBe('compactor: environment variable COMPACTOR_CONTEXT_LIMIT: must be a whole number >= 1, got 0');
    const unknown = await cli(['estimate', '--config', await config({ keep: 5 }), BUG]);
    expect(unknown.stderr).toContain('unknown setting "keep"');
  });
});
