/**
 * The command line's V8 code caches (bin/code-cache.js) are made by the build, one per command,
 * beside the bundle (dist/code-cache/): a user's run reads its command's cache and writes
 * nothing, anywhere; a cache that is damaged, cut short, or made for another build is not used,
 * and changes nothing a command prints. Never timed.
 */
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, ROOT } from '../helpers/cli.js';

const SESSION = join(FIXTURES, 'formats', 'claude-code.jsonl');
const folders: string[] = [];

function folder(): string {
  const made = mkdtempSync(join(tmpdir(), 'code-cache-'));
  folders.push(made);
  return made;
}

afterAll(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

/** `estimate --json` of a fixture by the command line installed at `root`, with nothing of this machine's settings. */
async function estimate(root: string, cwd: string) {
  const env = { CI: 'true', NO_COLOR: '1', HOME: cwd, XDG_CONFIG_HOME: cwd, XDG_CACHE_HOME: cwd, PATH: process.env['PATH'] ?? '' };
  const result = await execa('node', [join(root, 'bin', 'compactor.js'), 'estimate', '--json', SESSION], { cwd, env, extendEnv: false, reject: false });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** What bin/code-cache.js did with the estimate cache of the bundle at `root`: used, rejected, none. */
async function cacheUse(root: string): Promise<string> {
  const script = `const c = require(${JSON.stringify(join(root, 'bin', 'code-cache.js'))}); c.requireCached(${JSON.stringify(join(root, 'dist', 'cli-bundle.cjs'))}, 'estimate'); process.stdout.write(c.lastCache());`;
  return String((await execa('node', ['-e', script])).stdout);
}

/** A copy of the built command line (bin/, dist/, package.json; node_modules linked) whose caches a test may damage. */
function installedCopy(): string {
  const root = folder();
  cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

/** Every file under `dir`, with a hash of its bytes. */
function snapshot(dir: string): Map<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return new Map(files.map((entry) => [join(entry.parentPath, entry.name), createHash('sha256').update(readFileSync(join(entry.parentPath, entry.name))).digest('hex')]));
}

describe('the code caches', () => {
  it('are made by the build, one per command but fork', () => {
    const names = readdirSync(join(ROOT, 'dist', 'code-cache')).sort();
    expect(names).toEqual(['audit', 'compact', 'context', 'estimate', 'inspect', 'other', 'replay'].map((name) => `${name}.bin`));
  });

  it('are read by a run, which writes nothing: not a cache, not in its folder, home or cache home', async () => {
    const root = installedCopy();
    const before = snapshot(root);
    const cwd = folder();
    const first = await estimate(root, cwd);
    expect(first.exitCode).toBe(0);
    expect(await cacheUse(root)).toBe('used');
    expect(readdirSync(cwd)).toEqual([]);
    expect(snapshot(root)).toEqual(before);
  }, 60_000);

  it('damaged, cut short, or made for another build: not used, and the output is the same', async () => {
    const root = installedCopy();
    const cwd = folder();
    const reference = await estimate(root, cwd);
    const file = join(root, 'dist', 'code-cache', 'estimate.bin');
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
      // Made for another build of the bundle (the build's hash in the key).
      Buffer.concat([Buffer.from(good.toString('utf8', 0, newline).replace(/"([0-9a-f]{16})"/, (_, hash: string) => `"${hash.replace(/^./, (c) => (c === '0' ? '1' : '0'))}"`)), good.subarray(newline)]),
      Buffer.from('not a cache\n'),
      Buffer.alloc(0),
    ];
    for (const bytes of damaged) {
      writeFileSync(file, bytes);
      expect(await cacheUse(root)).toBe('none');
      expect(await estimate(root, cwd)).toEqual(reference);
      expect(readFileSync(file).equals(bytes)).toBe(true);
    }
    // A bundle rebuilt without its caches made again: the caches' build is not this one.
    writeFileSync(file, good);
    const bundle = join(root, 'dist', 'cli-bundle.cjs');
    writeFileSync(bundle, readFileSync(bundle, 'utf8').replace(/\/\/ build ([0-9a-f]+)\n$/, (_, hash: string) => `// build ${hash.replace(/^./, (c) => (c === '0' ? '1' : '0'))}\n`));
    expect(await cacheUse(root)).toBe('none');
    expect(await estimate(root, cwd)).toEqual(reference);
  }, 120_000);
});
