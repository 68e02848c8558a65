/**
 * A walked file's format is detected once: the walk's sniff returns the reader it found, which
 * goes with the path (as data, to a worker too) to the read, which uses it instead of detecting
 * again, but only when the sniff saw exactly the lines detection parses and the file has not
 * changed since. Otherwise detection runs as before, with its own errors.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalkedFile } from '../../src/formats/index.js';
import { readSession, resolveFormat, sniffWalkedFile } from '../../src/formats/index.js';
import { formatIfUnchanged } from '../../src/formats/sniffed.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-sniffed-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CLAUDE = join(FIXTURES, 'real/claude-code/claude-code-viewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl');

function canonicalLine(index: number): string {
  return JSON.stringify({ id: `m${index}`, role: index % 2 === 0 ? 'assistant' : 'user', content: `message ${index}` });
}

async function file(name: string, lines: readonly string[], ending = '\n'): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, lines.join('\n') + ending);
  return path;
}

/** The format a sniff found for a session, or null. */
function sniffedFormat(path: string, found: WalkedFile): string | null {
  expect(found.kind).toBe('session');
  return found.kind === 'session' ? formatIfUnchanged(path, found.sniffed) : null;
}

describe('the sniff of a walked file', () => {
  it('returns the format it found, with the path: nothing is remembered between calls', async () => {
    const path = await file('plain.jsonl', [1, 2, 3].map(canonicalLine));
    const found = sniffWalkedFile(path);
    expect(sniffedFormat(path, found)).toBe('canonical');
    // The same answer again: no table was used up.
    expect(sniffedFormat(path, sniffWalkedFile(path))).toBe('canonical');
  });

  it('counts only the lines detection parses: a bad line after the first 20 does not matter', async () => {
    const lines = Array.from({ length: 25 }, (_, index) => canonicalLine(index + 1));
    lines[22] = '{"id": oops';
    const path = await file('long.jsonl', lines);
    expect(sniffedFormat(path, sniffWalkedFile(path))).toBe('canonical');
  });

  it('finds a last line without its newline, as detection reads it', async () => {
    const path = await file('unterminated.jsonl', [1, 2].map(canonicalLine), '');
    expect(sniffedFormat(path, sniffWalkedFile(path))).toBe('canonical');
  });

  it('gives no format after a first line that is not an object', async () => {
    const path = await file('odd.jsonl', ['[1, 2]', JSON.stringify({ role: 'user', content: 'hi' })]);
    expect(sniffWalkedFile(path)).toEqual({ kind: 'session' });
  });

  it('gives no format after a bad line among the first 20 when the first value does not settle it (Codex)', async () => {
    const meta = JSON.stringify({ timestamp: '2025-01-01T00:00:00Z', type: 'session_meta', payload: { id: 'x', cwd: '/w' } });
    const path = await file('odd-codex.jsonl', [meta, '{"type": oops']);
    expect(sniffWalkedFile(path)).toEqual({ kind: 'session' });
  });

  it.each([
    ['a bad line among the first 20', [canonicalLine(1), canonicalLine(2), '{"id": oops']],
    ['a second line longer than the sniff reads', [canonicalLine(1), JSON.stringify({ id: 'm2', role: 'assistant', content: 'x'.repeat(300 << 10) })]],
  ])('parses only the first value when it settles the format (canonical, Claude Code), whatever follows: %s', async (_, lines) => {
    const path = await file('settled.jsonl', lines);
    expect(sniffWalkedFile(path)).toMatchObject({ kind: 'session', sniffed: { format: 'canonical', seen: 'first value' } });
  });

  it('parses the first 20 lines of a Claude Code session whose first line is no Claude Code line of its own', async () => {
    const path = await file('claude-late.jsonl', [JSON.stringify({ type: 'mystery' }), ...(await readFile(CLAUDE, 'utf8')).split('\n').slice(0, 3)]);
    expect(sniffWalkedFile(path)).toMatchObject({ kind: 'session', sniffed: { format: 'claude-code', seen: 'head' } });
    expect(sniffWalkedFile(CLAUDE)).toMatchObject({ kind: 'session', sniffed: { format: 'claude-code', seen: 'first value' } });
  });

  it('a read with a format its first value settled fails with detection’s error: the bad JSON, not the bad message before it', async () => {
    const path = await file('settled-bad.jsonl', [canonicalLine(1), JSON.stringify({ id: 'm2', role: 'assistant', content: 5 }), '{"id": oops', canonicalLine(4)]);
    const found = sniffWalkedFile(path);
    expect(found).toMatchObject({ kind: 'session', sniffed: { seen: 'first value' } });
    const sniffed = found.kind === 'session' ? found.sniffed : undefined;
    await expect(readSession(path, 'auto', {}, sniffed)).rejects.toThrow(/invalid JSON/);
  });

  it('is not used once the file has changed: the session is detected again', async () => {
    const path = await file('changed.jsonl', [1, 2].map(canonicalLine));
    const found = sniffWalkedFile(path);
    if (found.kind !== 'session' || !found.sniffed) throw new Error('expected a sniffed session');
    await cp(CLAUDE, path);
    expect(formatIfUnchanged(path, found.sniffed)).toBeNull();
    const session = await readSession(path, 'auto', {}, found.sniffed);
    expect(session.format).toBe('claude-code');
  });

  it('is what the read uses while the file is unchanged', async () => {
    const path = await file('used.jsonl', [JSON.stringify({ role: 'user', content: 'hi' })]);
    const found = sniffWalkedFile(path);
    if (found.kind !== 'session' || !found.sniffed) throw new Error('expected a sniffed session');
    // A format the file is not in: only the sniff's answer can make the read pick it.
    expect(await resolveFormat(path, 'auto', { ...found.sniffed, format: 'canonical' })).toBe('canonical');
    expect(await resolveFormat(path, 'auto', found.sniffed)).toBe('openai-chat');
    expect(await resolveFormat(path, 'auto')).toBe('openai-chat');
  });
});

describe('walked sessions read in workers', () => {
  it('get the format each was sniffed as', async () => {
    const walked = await mkdtemp(join(dir, 'walk-'));
    await cp(CLAUDE, join(walked, 'a-claude.jsonl'));
    await cp(join(FIXTURES, 'formats/openai-chat.jsonl'), join(walked, 'b-openai.jsonl'));
    await cp(join(FIXTURES, 'bug.jsonl'), join(walked, 'c-canonical.jsonl'));
    const result = await runCli(['estimate', '--json', '--jobs', '2', walked]);
    expect(result.stderr).toBe('');
    expect(jsonLines(result.stdout).map((record) => [record['session'], record['format']])).toEqual([
      [join(walked, 'a-claude.jsonl'), 'claude-code'],
      [join(walked, 'b-openai.jsonl'), 'openai-chat'],
      [join(walked, 'c-canonical.jsonl'), 'canonical'],
    ]);
  });

  it('fail with detection’s error when the sniff skipped a bad line: the bad JSON, not the bad message before it', async () => {
    const walked = await mkdtemp(join(dir, 'walk-'));
    await cp(join(FIXTURES, 'bug.jsonl'), join(walked, 'a-good.jsonl'));
    const bad = join(walked, 'b-bad.jsonl');
    await writeFile(bad, [canonicalLine(1), JSON.stringify({ id: 'm2', role: 'assistant', content: 5 }), '{"id": oops', canonicalLine(4)].join('\n') + '\n');
    const result = await runCli(['estimate', '--json', '--jobs', '2', walked]);
    expect(result.exitCode).toBe(1);
    const records = jsonLines(result.stdout);
    expect(records.map((record) => [record['session'], record['status']])).toEqual([
      [join(walked, 'a-good.jsonl'), undefined],
      [bad, 'failed'],
    ]);
    expect(records[1]!['error']).toBe(`${bad}:3: invalid JSON: Unexpected token 'o', "{"id": oops" is not valid JSON`);
  });
});
