/**
 * The command line's V8 code cache (bin/code-cache.js) is only ever a shortcut: it lives under
 * ${XDG_CACHE_HOME:-~/.cache}/session-compactor/code-cache, never in the folder a command runs
 * in; a run without one writes it, a run with a good one reads it and writes nothing; a cache
 * that is damaged, made for another build, or that cannot be written changes nothing a command
 * prints. Never timed.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, FIXTURES } from './helpers/cli.js';

const SESSION = join(FIXTURES, 'formats', 'claude-code.jsonl');
const folders: string[] = [];

function folder(): string {
  const made = mkdtempSync(join(tmpdir(), 'code-cache-'));
  folders.push(made);
  return made;
}

afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

async function estimate(cwd: string, env: Record<string, string>) {
  const result = await execa('node', [BIN, 'estimate', '--json', SESSION], { cwd, env: { CI: 'true', NO_COLOR: '1', ...env }, extendEnv: false, reject: false });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The one cache file under `cacheHome`, for `estimate`. */
function cacheFile(cacheHome: string): string {
  const dir = join(cacheHome, 'session-compactor', 'code-cache');
  const files = readdirSync(dir);
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(/-estimate\.bin$/);
  return join(dir, files[0]!);
}

describe('the code cache', () => {
  it('is written by a first run outside the working folder, then read without being written again', async () => {
    const cwd = folder();
    const cache = folder();
    const first = await estimate(cwd, { XDG_CACHE_HOME: cache, HOME: cwd });
    expect(first.exitCode).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    const file = cacheFile(cache);
    const written = readFileSync(file);
    const second = await estimate(cwd, { XDG_CACHE_HOME: cache, HOME: cwd });
    expect(second).toEqual(first);
    expect(readFileSync(file).equals(written)).toBe(true);
    expect(readdirSync(cwd)).toEqual([]);
  }, 60_000);

  it('damaged, made for another build, or not a cache: the output is the same and a good cache replaces it', async () => {
    const cwd = folder();
    const cache = folder();
    const reference = await estimate(cwd, { XDG_CACHE_HOME: cache });
    const file = cacheFile(cache);
    const good = readFileSync(file);
    const newline = good.indexOf(10);
    const flipped = (at: number) => {
      const bytes = Buffer.from(good);
      for (let index = at; index < at + 4; index++) bytes[index] = bytes[index]! ^ 0xff;
      return bytes;
    };
    const damaged: Buffer[] = [
      // Bytes flipped inside V8's data (a release build of V8 does not check its own checksum: Node crashed on these).
      flipped(newline + 1 + Math.floor((good.length - newline) / 8)),
      flipped(newline + 1 + Math.floor((good.length - newline) / 2)),
      flipped(good.length - 8),
      // Cut short.
      good.subarray(0, Math.floor(good.length / 2)),
      // Another build of the bundle (its size in the key changed).
      Buffer.concat([Buffer.from(good.toString('utf8', 0, newline).replace(/,(\d+),/, (_, size: string) => `,${Number(size) + 1},`)), good.subarray(newline)]),
      Buffer.from('not a cache\n'),
      Buffer.alloc(0),
    ];
    for (const bytes of damaged) {
      writeFileSync(file, bytes);
      expect(await estimate(cwd, { XDG_CACHE_HOME: cache })).toEqual(reference);
      const rewritten = readFileSync(file);
      expect(rewritten.equals(bytes)).toBe(false);
      // The new one is good: read, not written again.
      expect(await estimate(cwd, { XDG_CACHE_HOME: cache })).toEqual(reference);
      expect(readFileSync(file).equals(rewritten)).toBe(true);
    }
  }, 120_000);

  it('that cannot be written, or whose folder setting is relative, changes nothing and lands in no working folder', async () => {
    const cwd = folder();
    const home = folder();
    const reference = await estimate(cwd, { XDG_CACHE_HOME: folder() });
    const notAFolder = join(folder(), 'file');
    writeFileSync(notAFolder, '');
    expect(await estimate(cwd, { XDG_CACHE_HOME: notAFolder })).toEqual(reference);
    // XDG says a relative XDG_CACHE_HOME is ignored: the cache goes under the home folder.
    mkdirSync(join(cwd, 'relative'));
    expect(await estimate(cwd, { XDG_CACHE_HOME: 'relative', HOME: home })).toEqual(reference);
    expect(readdirSync(join(cwd, 'relative'))).toEqual([]);
    cacheFile(join(home, '.cache'));
  }, 60_000);
});
