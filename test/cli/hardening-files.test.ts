/**
 * Issue 31, "Files, locks and names" and "What a new user trips on": stdin without `-`, fork
 * and stdin, stale locks with impossible pids, duplicate tool call ids, config files with a BOM
 * and wrong types, control characters in file names, sidecars pointing outside their session,
 * random bytes, the path column's width, switching the relevance filter off, the bench's help,
 * the demo's length, `--price-model`, and open descriptors under a low `ulimit -n`. Each case
 * runs the built CLI as a user would.
 */
import { execa } from 'execa';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CompactionPolicy } from '../../src/compaction/policy.js';
import type { SummaryInput, TextStrategy } from '../../src/compaction/strategy.js';
import { readSession } from '../../src/formats/index.js';
import { customPolicy } from '../../src/replay/presets.js';
import { replaySession } from '../../src/replay/simulate.js';
import { stagingGroupSize, threadsWithinOpenFiles } from '../../src/sidecar/open-files.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { BIN, FIXTURES, ROOT, runCli } from '../helpers/cli.js';

const SESSION = join(FIXTURES, 'formats', 'codex.jsonl');
const scratch = mkdtempSync(join(tmpdir(), 'compactor-hardening-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The CLI run by bash, so that stdin is a real pipe (`cat f | compactor …`), as in a shell. */
async function inShell(script: string, env: Record<string, string> = {}) {
  const result = await execa('bash', ['-c', script], { cwd: ROOT, env: { CI: 'true', NO_COLOR: '1', COMPACTOR: `node ${BIN}`, ...env }, reject: false, stdin: 'ignore' });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe('stdin without a name (item 8)', () => {
  it('reads a piped session when no path is given, as jq and wc do', async () => {
    const piped = await inShell(`cat '${SESSION}' | $COMPACTOR estimate --json`);
    const named = await runCli(['estimate', '--json', SESSION]);
    expect(piped.stderr).toBe('');
    expect(piped.exitCode).toBe(0);
    const tokens = (stdout: string) => (JSON.parse(stdout.trim().split('\n')[0]!) as { tokens: number }).tokens;
    expect(tokens(piped.stdout)).toBe(tokens(named.stdout));
  });

  it('reads a redirected file too', async () => {
    const result = await inShell(`$COMPACTOR inspect --json < '${SESSION}'`);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('"session":"-"');
  });

  it('fork refuses stdin with one usage line (exit 2), piped or named', async () => {
    for (const script of [`cat '${SESSION}' | $COMPACTOR fork -`, `cat '${SESSION}' | $COMPACTOR fork`]) {
      const result = await inShell(script);
      expect(result.exitCode, script).toBe(2);
      expect(result.stderr.split('\n')[0], script).toMatch(/^compactor: fork does not read stdin \(-\)/);
      expect(result.stderr, script).not.toMatch(/empty file|\n\s+at /);
    }
  });
});

describe('a lock naming a pid no process can have (item 10)', () => {
  it('is stale: taken over with a warning, and the session compacted', async () => {
    for (const pid of [-1, 0, 1.5, '"12"']) {
      const dir = mkdtempSync(join(scratch, 'lock-'));
      const session = join(dir, 's.jsonl');
      copyFileSync(SESSION, session);
      const lock = join(dir, 's_compaction.json.lock');
      writeFileSync(lock, `{"pid":${pid},"host":"${hostname()}","since":"2026-01-01T00:00:00.000Z"}\n`);
      const result = await runCli(['compact', '--strategy', 'truncate', '--force', '--keep-recent', '200', session]);
      expect(result.exitCode, String(pid)).toBe(0);
      expect(result.stdout, String(pid)).not.toMatch(/locked/);
      expect(result.stderr, String(pid)).toMatch(/compactor: warning: .*s_compaction\.json\.lock: .*taken over as stale/);
      expect(existsSync(lock), String(pid)).toBe(false);
    }
  });
});

describe('config files (item 12)', () => {
  it('accept a UTF-8 byte-order mark, as sessions do', async () => {
    const config = join(scratch, 'bom-config.json');
    writeFileSync(config, '\uFEFF{"keep_recent": 1000}\n');
    const result = await runCli(['estimate', '--config', config, SESSION]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('name the type of a wrong value, never [object Object]', async () => {
    for (const [value, shown] of [
      ['{"a": 1}', 'got an object ({"a":1})'],
      ['[5, 6]', 'got an array ([5,6])'],
    ] as const) {
      const config = join(scratch, 'typed-config.json');
      writeFileSync(config, `{"keep_recent": ${value}}\n`);
      const result = await runCli(['estimate', '--config', config, SESSION]);
      expect(result.exitCode, value).not.toBe(0);
      expect(result.stderr, value).not.toContain('[object Object]');
      expect(result.stderr.trim().split('\n'), value).toEqual([expect.stringContaining(`keep_recent: must be a whole number of tokens >= 0 or a percentage of the window (like 25%), ${shown}`)]);
    }
  });
});

describe('control characters in file names (item 13)', () => {
  it('are escaped in text output, on stdout and stderr, and kept as they are in --json', async () => {
    const dir = mkdtempSync(join(scratch, 'names-'));
    const odd = 'a\u001b[31mred\nx.jsonl';
    copyFileSync(SESSION, join(dir, odd));
    writeFileSync(join(dir, 'b\u0007bad.jsonl'), 'garbage\n{');
    const shown = 'a\\x1b[31mred\\nx.jsonl';
    // inspect over several sessions opens with the archive view, which names no file: --detail adds each report.
    for (const args of [['estimate'], ['inspect', '--detail'], ['replay'], ['audit'], ['compact', '--strategy', 'truncate', '--force', '--keep-recent', '200']]) {
      const result = await runCli([...args, odd, 'b\u0007bad.jsonl'], { cwd: dir });
      const text = result.stdout + result.stderr;
      expect(text, args[0]).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
      expect(text, args[0]).toContain(shown);
      expect(result.stderr, args[0]).toContain('b\\x07bad.jsonl');
    }
    const json = await runCli(['estimate', '--json', join(dir, odd)]);
    expect(JSON.parse(json.stdout.trim()).session).toBe(join(dir, odd));
  });
});

describe('a sidecar whose first_kept_index is outside the session (item 14)', () => {
  it('is stale: context fails with one line, compact warns in one line and starts over', async () => {
    const dir = mkdtempSync(join(scratch, 'index-'));
    const session = join(dir, 's.jsonl');
    copyFileSync(join(FIXTURES, 'real', 'pi', 'pi-mono_before-compaction_v1.jsonl'), session);
    const flags = ['--strategy', 'truncate', '--force', '--keep-recent', '2000'];
    expect((await runCli(['compact', ...flags, session])).stdout).toMatch(/^compacted /);
    const sidecar = join(dir, 's_compaction.json');
    const state = JSON.parse(readFileSync(sidecar, 'utf8'));
    writeFileSync(sidecar, JSON.stringify({ ...state, first_kept_index: 99999 }));
    const context = await runCli(['context', session]);
    expect(context.exitCode).toBe(1);
    expect(context.stdout).toBe('');
    expect(context.stderr.split('\n').filter((line) => line.includes('first_kept_index'))).toEqual([
      expect.stringMatching(/^compactor: .*s_compaction\.json: stale sidecar \(its first_kept_index 99999 is outside the session's \d+ messages; .*\); run compact again$/),
    ]);
    const again = await runCli(['compact', ...flags, session]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(/^compacted /);
    expect(again.stderr.split('\n').filter((line) => line.includes('first_kept_index 99999'))).toHaveLength(1);
    expect(JSON.parse(readFileSync(sidecar, 'utf8')).first_kept_index).toBe(state.first_kept_index);
  });
});

describe('random bytes with no newline (item 15)', () => {
  it('are not text, not a JSONL session, even when they start with { or [; a line cut mid-character is still one being written', async () => {
    const noise = Buffer.from(Array.from({ length: 600 }, (_, i) => 0x80 + ((i * 37) % 128)));
    for (const start of ['{', '[', ' ', 'x']) {
      const file = join(scratch, `noise-${start.trim() || 'blank'}.jsonl`);
      writeFileSync(file, Buffer.concat([Buffer.from(start), noise]));
      for (const args of [['estimate', file], ['estimate', '-']]) {
        const result = await runCli(args, args[1] === '-' ? { input: readFileSync(file) } : {});
        expect(result.exitCode, `${start} ${args[1]}`).toBe(1);
        expect(result.stderr.trim(), `${start} ${args[1]}`).toMatch(/^compactor: error: \S+:1: not text \(invalid UTF-8\), not a JSONL session$/);
      }
    }
    const writing = join(scratch, 'being-written.jsonl');
    writeFileSync(writing, Buffer.concat([Buffer.from('{"id":"m1","role":"user","content":"h'), Buffer.from([0xc3])]));
    expect((await runCli(['estimate', writing])).stderr).toMatch(/no complete JSON line yet \(file still being written\?\)/);
  });
});

describe('estimate DIR: the session column (item 19)', () => {
  it('uses the width COLUMNS gives and keeps each project visible', async () => {
    const root = mkdtempSync(join(scratch, 'projects-'));
    const sessions = ['-home-dev-src-my-shop', '-home-dev-src-the-billing-service'].map((project) => {
      mkdirSync(join(root, project));
      const path = join(root, project, '4f1c2e7a-9b3d-4c5e-8f60-718293a4b5c6.jsonl');
      copyFileSync(SESSION, path);
      return path;
    });
    const wide = await runCli(['estimate', root], { env: { COLUMNS: '200' } });
    for (const path of sessions) expect(wide.stdout).toContain(path);
    for (const columns of ['80', '100']) {
      const result = await runCli(['estimate', root], { env: { COLUMNS: columns } });
      const lines = result.stdout.trimEnd().split('\n');
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(Number(columns));
      // Cut in the middle: the start stays, and the project (the end of the folder's name).
      expect(lines[1], columns).toMatch(/^ -ho\S*my-shop\/4f1\S*\.jsonl /);
      expect(lines[2], columns).toMatch(columns === '80' ? /^ -ho\S*service\/4f1\S*\.jsonl / : /^ -ho\S*billing-service\/4f1\S*\.jsonl /);
    }
  });
});

describe('switching the relevance filter off (item 21)', () => {
  it('--no-relevance, COMPACTOR_RELEVANCE=false and "relevance": false in the config file each keep every output in the span', async () => {
    const runs: [string, string[], Record<string, string>][] = [
      ['on', [], {}],
      ['flag', ['--no-relevance'], {}],
      ['variable', [], { COMPACTOR_RELEVANCE: 'false' }],
      ['config', ['--config', join(scratch, 'relevance-off.json')], {}],
    ];
    writeFileSync(join(scratch, 'relevance-off.json'), '{"relevance": false}\n');
    for (const [name, flags, env] of runs) {
      const dir = mkdtempSync(join(scratch, `relevance-${name}-`));
      copyFileSync(join(FIXTURES, 'bug.jsonl'), join(dir, 'bug.jsonl'));
      const result = await runCli(['compact', '--strategy', 'extract', '--context-limit', '80000', ...flags, join(dir, 'bug.jsonl')], { env });
      expect(result.exitCode, name).toBe(0);
      const sidecar = JSON.parse(readFileSync(join(dir, 'bug_compaction.json'), 'utf8'));
      expect(sidecar.dropped_outputs.length, name).toBe(name === 'on' ? 7 : 0);
    }
  });
});

describe('replay --no-relevance (item 21)', () => {
  /** What a summarizer is handed in replay's simulated compactions of bug.jsonl: the characters of its spans. */
  async function spanSizes(relevance: boolean | undefined): Promise<number[]> {
    const session = await readSession(join(FIXTURES, 'bug.jsonl'));
    const sizes: number[] = [];
    const strategy: TextStrategy = {
      name: 'recording',
      summarize: async (input: SummaryInput) => {
        sizes.push(JSON.stringify(input.history).length);
        return { summary: 'summary', turnPrefixSummary: null, usage: null, details: {} };
      },
    };
    const policy: CompactionPolicy = { contextLimit: 80_000, trigger: { kind: 'reserve', tokens: 30_000 }, keepRecentTokens: 20_000, cutRule: 'conservative', force: false };
    await replaySession({ sessionName: 'bug', messages: session.messages, tokens: estimateAll(session.messages), policy: customPolicy(policy), strategy, ...(relevance === undefined ? {} : { relevance }) });
    return sizes;
  }

  it('hands the summarizer every output of the span, as compact --no-relevance does; the filter is on by default', async () => {
    const on = await spanSizes(undefined);
    const off = await spanSizes(false);
    expect(on.length).toBeGreaterThan(0);
    expect(off).toHaveLength(on.length);
    expect(off[0]!).toBeGreaterThan(on[0]!);
    expect(await spanSizes(true)).toEqual(on);
  });

  it('is a replay flag (--help shows it; --no-relevance and COMPACTOR_RELEVANCE=false are taken)', async () => {
    const help = await runCli(['replay', '--help']);
    expect(help.stdout).toContain('--relevance');
    const off = await runCli(['replay', '--no-relevance', '--json', join(FIXTURES, 'bug.jsonl')], { env: { COMPACTOR_RELEVANCE: 'false' } });
    expect(off.exitCode).toBe(0);
  });
});

describe('npm run bench -- --help (item 24)', () => {
  it('prints the bench help without building or failing; an unknown flag is one line and exit 2', async () => {
    const help = await execa('npm', ['run', '--silent', 'bench', '--', '--help'], { cwd: ROOT, reject: false });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run bench -- \[flags\]/);
    expect(help.stdout).toContain('--sizes 200M,1G|none');
    expect(help.stdout + help.stderr).not.toMatch(/build-cli|unknown argument/);
    const unknown = await execa('node', ['scripts/bench/run.js', '--bogus'], { cwd: ROOT, reject: false });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('bench: unknown argument --bogus');
  });
});

describe('npm run demo (item 23)', () => {
  it('shows what the tool is for in a screen or two: 80 columns, no warning lines, the numbers the CLI printed', async () => {
    const demo = await execa('node', ['scripts/demo.js'], { cwd: ROOT, reject: false, env: { NO_COLOR: '1' } });
    expect(demo.exitCode).toBe(0);
    const lines = demo.stdout.split('\n');
    expect(lines.length).toBeLessThanOrEqual(80);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(demo.stdout + demo.stderr).not.toMatch(/compactor: warning:|^skipped /m);
    expect(demo.stdout).toContain('compacted  bug.jsonl: 96,212 -> 39,401 tokens');
    expect(demo.stdout).toMatch(/^49 sessions: /m);
  });
});

describe('--price-model on inspect and replay (item 18)', () => {
  it('names the price model; --model there is its deprecated spelling, read with a warning', async () => {
    const BUG = join(FIXTURES, 'bug.jsonl');
    for (const command of ['inspect', 'replay']) {
      const renamed = await runCli([command, '--json', '--price-model', 'gpt-4o', BUG]);
      expect(renamed.exitCode, command).toBe(0);
      expect(renamed.stderr, command).not.toContain('deprecated');
      const old = await runCli([command, '--json', '--model', 'gpt-4o', BUG]);
      expect(old.exitCode, command).toBe(0);
      expect(old.stderr.split('\n').filter((line) => line.includes('deprecated')), command).toEqual([
        `compactor: warning: --model on ${command} is deprecated (it names the summarizer on compact and fork); use --price-model`,
      ]);
      const pricing = (stdout: string) => (JSON.parse(stdout.split('\n')[0]!) as { pricing: { model: string } }).pricing.model;
      expect(pricing(renamed.stdout), command).toBe('gpt-4o');
      expect(pricing(old.stdout), command).toBe('gpt-4o');
      const help = await runCli([command, '--help']);
      expect(help.stdout, command).toContain('--price-model');
      expect(help.stdout, command).not.toMatch(/^\s+--model\b/m);
    }
  });
});

describe('open files under a low ulimit -n (item 9)', () => {
  it('compact of 300 small sessions at ulimit -n 64 keeps within it: no EMFILE, every sidecar written', async () => {
    const dir = mkdtempSync(join(scratch, 'many-'));
    for (let i = 0; i < 300; i++) copyFileSync(SESSION, join(dir, `s${i}.jsonl`));
    const result = await inShell(`ulimit -n 64; $COMPACTOR compact --strategy truncate --force --allow-no-gain --keep-recent 100 --jobs 4 '${dir}'`);
    expect(result.stderr).not.toContain('EMFILE');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^300 compacted, 0 skipped, 0 up-to-date, 0 failed$/m);
    expect(readdirSync(dir).filter((name) => name.endsWith('_compaction.json'))).toHaveLength(300);
  });

  it('sizes staging groups and threads from the limit', () => {
    expect(stagingGroupSize(4, 64)).toBe(4);
    expect(stagingGroupSize(2, 20_000)).toBe(32);
    expect(stagingGroupSize(16, 50)).toBe(1);
    expect(threadsWithinOpenFiles(64)).toBe(2);
    expect(threadsWithinOpenFiles(128)).toBe(10);
  });
});
