/**
 * A walk's files are sniffed in the workers of a pool the command started early as well as in
 * the main thread (src/pipeline/sniff.ts): each file's sniff comes back in the walk's order
 * whoever did it, a chunk a worker fails on is sniffed again here, and what a command prints
 * (sessions, warnings, their order) is the same with a pool as without.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalkedFile } from '../src/formats/index.js';
import { sniffWalkedFile } from '../src/formats/index.js';
import type { RemoteSniff } from '../src/pipeline/sniff.js';
import { sniffWalked } from '../src/pipeline/sniff.js';
import { FIXTURES, runCli } from './helpers/cli.js';

let dir: string;
/** A walk's worth of files: sessions of two formats, empty files, files no reader knows. */
let paths: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-sniff-pool-'));
  const walked = join(dir, 'walked');
  await mkdir(walked);
  paths = [];
  for (let index = 0; index < 80; index++) {
    const path = join(walked, `s${String(index).padStart(3, '0')}.jsonl`);
    if (index % 9 === 4) await writeFile(path, '');
    else if (index % 7 === 3) await writeFile(path, '{"neither":"a message"}\n');
    else await cp(join(FIXTURES, index % 2 === 0 ? 'bug.jsonl' : 'formats/openai-chat.jsonl'), path);
    paths.push(path);
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sniffedHere = () => paths.map((path) => ({ ok: true, found: sniffWalkedFile(path) }));

describe('sniffWalked', () => {
  it('hands chunks to the workers and puts every sniff back in the walk order', async () => {
    const sent: string[][] = [];
    const remote: RemoteSniff = {
      capacity: 2,
      ready: async () => {},
      run: async (chunk) => {
        sent.push([...chunk]);
        // Replies come later than this thread's own chunks, and out of order.
        await new Promise((resolve) => setTimeout(resolve, sent.length % 2 === 0 ? 5 : 1));
        return chunk.map(sniffWalkedFile);
      },
    };
    const sniffed = await sniffWalked(paths, remote);
    expect(sniffed).toEqual(sniffedHere());
    expect(sent.length).toBeGreaterThan(1);
    // Each file is sniffed once, by one thread; none was left to this thread alone.
    expect(new Set(sent.flat()).size).toBe(sent.flat().length);
    expect(sent.flat().length).toBeLessThan(paths.length);
  });

  it('sniffs a chunk here when its worker fails on it', async () => {
    let calls = 0;
    const remote: RemoteSniff = {
      capacity: 2,
      ready: async () => {},
      run: async (chunk) => {
        calls++;
        if (calls === 1) throw new Error('worker exited with code 1');
        // A worker that lost a file's sniff: the chunk is not taken as it came.
        return calls === 2 ? chunk.slice(1).map(sniffWalkedFile) : chunk.map(sniffWalkedFile);
      },
    };
    expect(await sniffWalked(paths, remote)).toEqual(sniffedHere());
    expect(calls).toBeGreaterThan(2);
  });

  it('sniffs here what a worker still holds once nothing is left to take, and never waits for it', async () => {
    const sent: string[][] = [];
    // Workers that never answer: the walk goes on without them.
    const remote: RemoteSniff = { capacity: 2, ready: async () => {}, run: (chunk) => (sent.push([...chunk]), new Promise(() => {})) };
    expect(await sniffWalked(paths, remote)).toEqual(sniffedHere());
    expect(sent.length).toBe(2);
  });

  it('takes no chunk for the workers before one is ready', async () => {
    const sent: string[][] = [];
    // Workers that never finish starting: this thread sniffs everything, once.
    const remote: RemoteSniff = { capacity: 2, ready: () => new Promise(() => {}), run: async (chunk) => (sent.push([...chunk]), chunk.map(sniffWalkedFile)) };
    expect(await sniffWalked(paths, remote)).toEqual(sniffedHere());
    expect(sent).toEqual([]);
  });

  it('sniffs everything here without workers', async () => {
    expect(await sniffWalked(paths, null)).toEqual(sniffedHere());
  });
});

describe('an early pool', () => {
  it("lends its workers to the walk's sniff, which they run in their thread", async () => {
    // tsc's build: its pool starts dist/worker.js, whose registry holds the sniff task.
    const { earlyStart } = await import('../dist/pipeline/sessions.js');
    const early = earlyStart(() => 2, 'estimate');
    try {
      const remote = early.walked(paths.length);
      expect(remote).not.toBeNull();
      expect(remote?.capacity).toBe(4);
      // Ready once a worker has imported its command's modules.
      await remote?.ready();
      const found: readonly WalkedFile[] = (await remote?.run(paths)) ?? [];
      expect(found).toEqual(paths.map(sniffWalkedFile));
    } finally {
      await early.pool()?.close();
    }
    expect(earlyStart(() => 1, 'estimate').walked(paths.length)).toBeNull();
  });

  it.each([['estimate', '--json'], ['inspect', '--json'], ['compact', '--dry-run', '--json', '--strategy', 'truncate', '--force']])(
    '%s prints the same sessions and warnings, in the same order, sniffed with workers or without',
    async (...command) => {
      const walked = join(dir, 'walked');
      const pooled = await runCli([...command, '--jobs', '2', walked]);
      const alone = await runCli([...command, '--jobs', '1', walked]);
      expect(pooled.stderr).toContain('empty file; skipped');
      expect(pooled.stderr).toContain('not a session file (no known format); skipped');
      expect(pooled.stdout).toBe(alone.stdout);
      expect(pooled.stderr).toBe(alone.stderr);
      expect(pooled.exitCode).toBe(alone.exitCode);
    },
  );
});
