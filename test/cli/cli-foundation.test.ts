/**
 * The Foundation's "done when", through the built CLI as a user runs it.
 */
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sidecarSchema } from '../../src/sidecar/schema.js';
import { BIN, FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

const BUG = 'fixtures/bug.jsonl';
const BASELINES = [20_264, 22_565, 58_884, 77_702, 77_875, 78_703, 81_427, 89_910, 90_212];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});
async function scratch(...names: string[]) {
  const copy = await scratchCopy(...names);
  cleanups.push(copy.cleanup);
  return copy.dir;
}
const sha = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

describe('compactor inspect', () => {
  it('reports the nine baselines of the bug report exactly and a total within 2% of 4.25M', async () => {
    const result = await runCli(['inspect', '--json', BUG]);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record!.session).toBe(BUG);
    expect(record!.turns.map((t: { baseline_input_tokens: number }) => t.baseline_input_tokens)).toEqual(BASELINES);
    expect(record!.turns[2].requests).toBe(13);
    expect(Math.abs(record!.totals.input_tokens - 4_250_000) / 4_250_000).toBeLessThan(0.02);
    expect(record!.totals.requests).toBe(record!.turns.reduce((n: number, t: { requests: number }) => n + t.requests, 0));
  });

  it('takes the policy flags like every command: which turns start above the trigger', async () => {
    const result = await runCli(['inspect', '--json', '--context-limit', '80000', BUG]);
    const [record] = jsonLines(result.stdout);
    // trigger = 80,000 - 30,000 (default reserve) = 50,000; baselines from turn 3 on are above it
    expect(record!.trigger_tokens).toBe(50_000);
    expect(record!.policy).toMatchObject({ context_limit: 80_000, reserve_tokens: 30_000 });
    expect(record!.turns.map((t: { over_trigger: boolean }) => t.over_trigger)).toEqual([false, false, true, true, true, true, true, true, true]);
    const human = await runCli(['inspect', '--context-limit', '80000', BUG]);
    expect(human.stdout).toContain('turns starting above the compaction trigger (50,000 tokens): 3, 4, 5, 6, 7, 8, 9');
    const bad = await runCli(['inspect', '--reserve', '-1', BUG]);
    expect(bad.exitCode).toBe(2);
  });

  it('prints a table that fits 80 columns', async () => {
    const result = await runCli(['inspect', BUG]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('58,884');
    expect(Math.max(...result.stdout.split('\n').map((line) => line.length))).toBeLessThanOrEqual(80);
  });
});

describe('compactor replay', () => {
  it('bounds the baselines after compaction at an 80,000 window and reports the reduction', async () => {
    const result = await runCli(['replay', '--json', '--context-limit', '80000', BUG]);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    const turns = record!.turns as { baseline_before: number; baseline_after: number; compacted: boolean; input_tokens_after: number }[];
    expect(turns.map((t) => t.baseline_before)).toEqual(BASELINES);
    expect(turns.every((t) => t.baseline_after <= 80_000)).toBe(true);
    // The first turn over the trigger (80,000 - 30,000) is turn 3: it compacts and its baseline drops.
    expect(turns[2]!.compacted).toBe(true);
    expect(turns[2]!.baseline_after).toBeLessThan(turns[2]!.baseline_before);
    expect(turns[8]!.baseline_after).toBeLessThan(60_000);
    expect(record!.totals.input_tokens_after).toBe(turns.reduce((n, t) => n + t.input_tokens_after, 0));
    expect(record!.totals.reduction).toBeCloseTo(1 - record!.totals.input_tokens_after / record!.totals.input_tokens_before, 10);
    expect(record!.totals.reduction).toBeGreaterThan(0.2);
  });

  it('reduces nothing when the window is never reached', async () => {
    const result = await runCli(['replay', '--json', '--context-limit', '10000000', BUG]);
    const [record] = jsonLines(result.stdout);
    expect(record!.totals.reduction).toBe(0);
    expect(record!.totals.compactions).toBe(0);
    expect(record!.totals.input_tokens_after).toBe(record!.totals.input_tokens_before);
  });

  it('prices input and output in dollars per million tokens', async () => {
    const result = await runCli(['replay', '--json', '--context-limit', '10000000', '--price-input', '15', '--price-output', '75', BUG]);
    const [record] = jsonLines(result.stdout);
    const expected = (record!.totals.input_tokens_before * 15 + record!.totals.output_tokens * 75) / 1e6;
    const costs = record!.policies[0].costs;
    expect(costs.naive.before.total_usd).toBeCloseTo(expected, 6);
    expect(costs.naive.after.total_usd).toBeCloseTo(expected, 6);
    expect(record!.policies[0].savings.naive_usd).toBeCloseTo(0, 6);
  });

  it('cuts inside a tool loop with the tool-safe rule, where conservative must drop the whole turn to get under the trigger', async () => {
    const conservative = jsonLines((await runCli(['replay', '--json', '--context-limit', '80000', BUG])).stdout)[0]!;
    const toolSafe = jsonLines((await runCli(['replay', '--json', '--context-limit', '80000', '--cut-rule', 'tool-safe', BUG])).stdout)[0]!;
    const [kept] = conservative.turns[2].compactions;
    const [inLoop] = toolSafe.turns[2].compactions;
    // Both get under the trigger (50,000); tool-safe keeps its 20,000 tokens of turn 2's loop.
    expect(kept.tokens_after).toBeLessThanOrEqual(50_000);
    expect(inLoop.tokens_after).toBeLessThanOrEqual(50_000);
    expect(inLoop.tokens_after).toBeGreaterThan(kept.tokens_after);
  });
});

describe('compactor estimate', () => {
  it('reports counts, context and the cut it would take', async () => {
    const result = await runCli(['estimate', '--json', '--context-limit', '80000', BUG]);
    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({ session: BUG, format: 'canonical', messages: 116, would_compact: true });
    // The last call reported 96,212 - 400 (its output) - 35 … : the hybrid context ends at the session's end.
    expect(record!.context_tokens).toBeGreaterThan(90_212);
    // The keep budget's cut (a turn start) would leave 57,601 tokens, over the trigger (50,000):
    // the cut moves to the earliest one that gets under it, inside a turn.
    expect(record!.cut).toMatchObject({ split_turn: true, forced: false, past_keep_budget: true });
    expect(record!.context_tokens - record!.cut.tokens_to_summarize).toBeLessThanOrEqual(50_000);
    expect(record!.cut.first_kept_message_id).toBe(`msg-${String(record!.cut.index + 1).padStart(4, '0')}`);
    expect(record!.cut.tokens_to_summarize + record!.cut.tokens_kept).toBe(record!.estimated_tokens);
  });

  it('says no cut and would not compact under the threshold', async () => {
    const [record] = jsonLines((await runCli(['estimate', '--json', BUG])).stdout);
    expect(record!.would_compact).toBe(false);
    expect(record!.reason).toBe('under the compaction threshold');
  });
});

describe('compactor compact --strategy truncate', () => {
  it('writes valid sidecars, changes no session byte, and a second run is up-to-date', async () => {
    const dir = await scratch('bug.jsonl');
    const before = await sha(join(dir, 'bug.jsonl'));
    const first = await runCli(['compact', '--json', '--strategy', 'truncate', '--context-limit', '80000', dir]);
    expect(first.exitCode).toBe(0);
    expect(jsonLines(first.stdout)).toEqual([expect.objectContaining({ status: 'compacted', session: join(dir, 'bug.jsonl') })]);
    const sidecar = JSON.parse(await readFile(join(dir, 'bug_compaction.json'), 'utf8'));
    expect(sidecarSchema.safeParse(sidecar).success).toBe(true);
    expect(sidecar.summary).toMatch(/^\[Compacted \d+ messages: \d+ user, \d+ assistant, \d+ tool results\]/);
    expect(sidecar.read_files.length + sidecar.modified_files.length).toBeGreaterThan(0);
    expect(await sha(join(dir, 'bug.jsonl'))).toBe(before);

    const second = await runCli(['compact', '--json', '--strategy', 'truncate', '--context-limit', '80000', dir]);
    expect(jsonLines(second.stdout)).toEqual([expect.objectContaining({ status: 'up-to-date' })]);
    expect(await readdir(dir)).toEqual(['bug.jsonl', 'bug_compaction.json']);
    // One reason, the status's own (not also "under the compaction threshold").
    const third = await runCli(['compact', '--strategy', 'truncate', '--context-limit', '80000', dir]);
    expect(third.stdout.split('\n')[0]).toBe(`up-to-date ${join(dir, 'bug.jsonl')} (its sidecar still covers it)`);
  });

  it('merges with the previous sidecar after the session grows', async () => {
    const dir = await scratch('bug.jsonl');
    const session = join(dir, 'bug.jsonl');
    await runCli(['compact', '--strategy', 'truncate', '--context-limit', '80000', session]);
    const first = JSON.parse(await readFile(join(dir, 'bug_compaction.json'), 'utf8'));
    const more = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({ id: `extra-${i}`, role: i % 2 ? 'assistant' : 'user', content: 'y'.repeat(40_000) }),
    ).join('\n');
    await appendFile(session, `${more}\n`);
    const second = await runCli(['compact', '--json', '--strategy', 'truncate', '--context-limit', '80000', session]);
    expect(jsonLines(second.stdout)[0]).toMatchObject({ status: 'compacted' });
    const merged = JSON.parse(await readFile(join(dir, 'bug_compaction.json'), 'utf8'));
    expect(merged.compactions).toBe(2);
    expect(merged.messages_summarized_total).toBe(first.messages_summarized + merged.messages_summarized);
    expect(merged.first_kept_index).toBeGreaterThan(first.first_kept_index);
  });

  it('reports skipped under the threshold and writes nothing with --dry-run', async () => {
    const dir = await scratch('bug.jsonl');
    const skipped = await runCli(['compact', '--json', dir]);
    expect(jsonLines(skipped.stdout)[0]).toMatchObject({ status: 'skipped' });
    const dry = await runCli(['compact', '--json', '--dry-run', '--context-limit', '80000', dir]);
    // A dry run says what it would do, with the numbers: the plan's context after, before the summary.
    expect(jsonLines(dry.stdout)[0]).toMatchObject({ status: 'would-compact', dry_run: true, tokens_before: 96_212, tokens_after: 39_202, messages_summarized: 49 });
    const text = await runCli(['compact', '--dry-run', '--context-limit', '80000', dir]);
    expect(text.stdout.split('\n')[0]).toBe(`would compact ${join(dir, 'bug.jsonl')}: 49 messages, 96,212 -> 39,202 tokens + the summary, keep from msg-0050`);
    expect(await readdir(dir)).toEqual(['bug.jsonl']);
  });

  it('counts one message as one message in a dry run', async () => {
    const session = join(FIXTURES, 'agents/claude-code/auto-compact/projects/-tmp-compactor-agents-project/c0de0003-0000-4000-8000-000000000003.jsonl');
    const result = await runCli(['compact', '--dry-run', '--strategy', 'truncate', '--force', '--keep-recent', '5000', session]);
    expect(result.stdout.split('\n')[0]).toMatch(/^would compact .*: 1 message, 8,015 -> [\d,]+ tokens \+ the summary, keep from /);
  });

  it('fails a session with a bad line, keeps going, and exits 1', async () => {
    const dir = await scratch('bug.jsonl');
    await writeFile(join(dir, 'broken.jsonl'), '{"id":"a","role":"user","content":"hi"}\n{"id":"b","role":"user"}\n');
    const result = await runCli(['compact', '--json', '--context-limit', '80000', dir]);
    expect(result.exitCode).toBe(1);
    const records = jsonLines(result.stdout);
    // Sessions are processed and reported in sorted path order: broken.jsonl, then bug.jsonl.
    expect(records.map((r) => r.status)).toEqual(['failed', 'compacted']);
    expect(records[0]!.error).toMatch(/broken\.jsonl:2: .*content/);
  });

  it('says clearly that the LLM strategy is not available yet', async () => {
    const result = await runCli(['compact', '--strategy', 'summarize', BUG]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/summarize/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('compactor context', () => {
  it('prints the provider view: summary, acknowledgement, then the kept messages verbatim', async () => {
    const dir = await scratch('bug.jsonl');
    const session = join(dir, 'bug.jsonl');
    await runCli(['compact', '--context-limit', '80000', session]);
    const sidecar = JSON.parse(await readFile(join(dir, 'bug_compaction.json'), 'utf8'));
    const result = await runCli(['context', session]);
    expect(result.exitCode).toBe(0);
    const view = jsonLines(result.stdout);
    const original = jsonLines(await readFile(session, 'utf8'));
    expect(view[0]).toMatchObject({ role: 'user' });
    expect(view[0]!.content[0].text).toContain(sidecar.summary);
    expect(view[1]).toMatchObject({ role: 'assistant' });
    expect(view.slice(2)).toEqual(original.slice(sidecar.first_kept_index));
  });

  it('fails on a stale sidecar with one line that says why, and never claims to compact', async () => {
    const dir = await scratch('bug.jsonl');
    const session = join(dir, 'bug.jsonl');
    await runCli(['compact', '--context-limit', '80000', session]);
    // An edit before the cut: the summarized messages no longer hash as the sidecar says.
    const lines = (await readFile(session, 'utf8')).split('\n');
    lines[1] = lines[1]!.replace('"text":"', '"text":"edited ');
    await writeFile(session, lines.join('\n'));
    for (const flags of [[], ['--strict']]) {
      const result = await runCli(['context', ...flags, session]);
      expect(result.exitCode).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toMatch(/from scratch/);
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `compactor: ${join(dir, 'bug_compaction.json')}: stale sidecar (the summarized messages changed since it was written); run compact again`,
      ]);
    }
  });
});

describe('inputs and errors', () => {
  it('takes directories and globs, skipping sidecars', async () => {
    const dir = await scratch('bug.jsonl');
    await runCli(['compact', '--context-limit', '80000', dir]);
    const byDir = jsonLines((await runCli(['estimate', '--json', dir])).stdout);
    const byGlob = jsonLines((await runCli(['estimate', '--json', `${dir}/*.jsonl`])).stdout);
    expect(byDir.map((r) => r.session)).toEqual([join(dir, 'bug.jsonl')]);
    expect(byGlob.map((r) => r.session)).toEqual([join(dir, 'bug.jsonl')]);
    expect(byDir[0]!.compacted_before).toBe(true);
  });

  it('gives a one-line error and exit 2 for a path that matches nothing', async () => {
    const result = await runCli(['inspect', 'no/such/file.jsonl']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('compactor: no/such/file.jsonl: no such file, and no file matches it as a glob');
  });

  it('rejects bad flag values with exit 2', async () => {
    const result = await runCli(['estimate', '--keep-recent', '-5', BUG]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/--keep-recent: must be a whole number of tokens >= 0 or a percentage of the window \(like 25%\), got -5/);
  });

  it('names file and line for invalid JSON', async () => {
    const dir = await scratch('bug.jsonl');
    await writeFile(join(dir, 'bad.jsonl'), '{"id":"a","role":"user","content":"hi"}\n{oops\n{"id":"b","role":"user","content":"x"}\n');
    const result = await runCli(['inspect', join(dir, 'bad.jsonl')]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^compactor: error: ${join(dir, 'bad.jsonl')}:2: invalid JSON`));
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('--version', () => {
  it('prints the package version from any working directory', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    const result = await runCli(['--version'], { cwd: tmpdir() });
    expect(result.stdout.trim()).toBe(version);
  });
});

describe('--help', () => {
  const COMMANDS = ['', 'estimate', 'inspect', 'compact', 'replay', 'context', 'audit'];
  /**
   * The words of a help text: what wrapping may move between lines but never cut. yargs' layout
   * (cliui) sets a flag's `[number]` right against a description that ends exactly where it
   * starts (`[default: 8192][number]`): two whole words, not a cut one.
   */
  const words = (text: string) =>
    text
      .split(/\s+/)
      .flatMap((word) => word.split(/(?<=\S)(?=\[(?:boolean|number|string|array|required|choices:|default:))/))
      .filter((word) => word !== '');

  /** `compactor CMD --help` on a terminal COLUMNS wide (`script` gives it a real one), or in a pipe. */
  async function help(command: string, columns: number | 'pipe'): Promise<string> {
    if (columns === 'pipe') return (await runCli([...(command ? [command] : []), '--help'])).stdout;
    const line = `stty cols ${columns}; node ${BIN} ${command} --help`;
    const result = await execa('script', ['-qec', line, '/dev/null'], { env: { CI: 'true' }, extendEnv: true });
    return String(result.stdout).replace(/\r/g, '');
  }

  it.each(COMMANDS)('wraps %s between words at 40, 80 and 120 columns and in a pipe, within the width (100 at most)', async (command) => {
    // Unwrapped, every word is whole: each wrapped word must be one of them.
    const whole = new Set(words((await runCli([...(command ? [command] : []), '--help'], { env: { YARGS_DISABLE_WRAP: '1' } })).stdout));
    for (const columns of [40, 80, 120, 'pipe'] as const) {
      const text = await help(command, columns);
      const cut = words(text).filter((word) => !whole.has(word));
      // At 40 columns a description has 16 and an option name 20: only a longer word (a flag
      // name, a path) can be cut there, as no layout in that width could keep it whole.
      const tooLong = columns === 40 ? [...whole].filter((word) => [...word].length > 16) : [];
      expect(cut.filter((piece) => !tooLong.some((word) => word.includes(piece))), `${columns} columns`).toEqual([]);
      const width = columns === 'pipe' ? 80 : Math.min(columns, 100);
      const longest = Math.max(...text.split('\n').map((line) => [...line].length));
      expect(longest, `${columns} columns`).toBeLessThanOrEqual(width);
    }
  });
});
