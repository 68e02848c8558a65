/**
 * The progress bar appears on a terminal only: `script` gives the CLI a real pseudo-terminal, and
 * a headless terminal emulator (xterm.js) replays what it wrote to show the screen a user sees.
 */
import { Terminal } from '@xterm/headless';
import { execa } from 'execa';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, FIXTURES, runCli } from './helpers/cli.js';

async function batchDir(names = ['a', 'b', 'c']): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-progress-'));
  for (const name of names) await cp(join(FIXTURES, 'bug.jsonl'), join(dir, `${name}.jsonl`));
  return dir;
}

const COLUMNS = 100;

/** `command` on a terminal COLUMNS wide: stdout and stderr both go to it, as in a shell. */
async function onPty(command: string): Promise<{ exitCode: number; raw: string }> {
  const line = `stty cols ${COLUMNS} rows 40; ${command}`;
  const result = await execa('script', ['-qec', line, '/dev/null'], { env: { CI: '', TERM: 'xterm' }, reject: false, extendEnv: true });
  return { exitCode: result.exitCode ?? -1, raw: String(result.stdout) };
}

/**
 * The screen (and scrollback) after `raw` was written to a terminal COLUMNS wide, one entry per
 * line as written: a line the terminal wrapped is joined again.
 */
function screen(raw: string): Promise<string[]> {
  const terminal = new Terminal({ cols: COLUMNS, rows: 40, scrollback: 1000, allowProposedApi: true });
  return new Promise((resolve) =>
    terminal.write(raw, () => {
      const buffer = terminal.buffer.active;
      const lines: string[] = [];
      for (let row = 0; row < buffer.length; row++) {
        const line = buffer.getLine(row);
        const text = line?.translateToString(true) ?? '';
        if (line?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
        else lines.push(text);
      }
      while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
      terminal.dispose();
      resolve(lines);
    }),
  );
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

  it('leaves every result line and the final tally whole on the screen, and no trace of itself', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const dir = await batchDir(names);
    try {
      const { exitCode, raw } = await onPty(`node ${BIN} compact --dry-run --context-limit 80000 ${dir}`);
      expect(exitCode).toBe(0);
      expect(raw).toMatch(/[░█]+ \d\/6 sessions/); // it was drawn…
      const lines = await screen(raw);
      expect(lines.join('\n')).not.toMatch(/[░█]|sessions \|/); // …and is gone
      expect(lines).toEqual([
        'compactor: no summarizer configured (--model / --base-url, COMPACTOR_MODEL or the config file); using --strategy truncate',
        ...names.map((name) => `would compact ${join(dir, `${name}.jsonl`)}: 49 messages, 96,212 -> 39,202 tokens + the summary, keep from msg-0050`),
        '',
        '6 would be compacted, 0 skipped, 0 up-to-date, 0 failed',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints warnings and failures above the bar too', async () => {
    const dir = await batchDir(['a', 'b', 'c']);
    try {
      await writeFile(join(dir, 'broken.jsonl'), '{"id":"a","role":"user","content":"hi"}\n{oops\n');
      const { raw } = await onPty(`node ${BIN} estimate --context-limit 80000 ${dir}`);
      expect(raw).toMatch(/[░█]+ \d\/4 sessions/);
      const lines = await screen(raw);
      expect(lines.join('\n')).not.toMatch(/[░█]|sessions \|/);
      expect(lines[0]!.startsWith(`compactor: error: ${join(dir, 'broken.jsonl')}:2: invalid JSON`)).toBe(true);
      expect(lines[1]).toMatch(/^\s*session\s/);
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

  it('is drawn for inspect, whose archive view comes at the end (and the reports after it, --detail)', async () => {
    const dir = await batchDir();
    try {
      const toTerminal = await onTerminal(`node ${BIN} inspect ${dir}`);
      expect(toTerminal).toContain('3 sessions, the top 3 by spend');
      expect(toTerminal).toMatch(/[░█]+ \d\/3 sessions/);
      const detail = await onTerminal(`node ${BIN} inspect --detail ${dir}`);
      expect(detail).toContain('baseline');
      expect(detail).toMatch(/[░█]+ \d\/3 sessions/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
