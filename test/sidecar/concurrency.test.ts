/**
 * Two compactors at once: one writer per sidecar (src/sidecar/lock.ts), contention reported as
 * `locked`, stale locks and temp files of killed runs cleaned, nothing corrupt.
 */
import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { sidecarSchema } from '../../src/sidecar/schema.js';
import { checkFreshness } from '../../src/sidecar/staleness.js';
import { sidecarPath } from '../../src/sidecar/store.js';
import { goodLines } from '../corpus/make-bad-inputs.js';
import { BIN, jsonLines, runCli } from '../helpers/cli.js';
import { feed, makeFifo, waitForReader } from '../helpers/fifo.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-concurrency-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const COMPACT = ['compact', '--json', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '1'];

async function writeSessions(count: number, size = 1): Promise<string[]> {
  const paths: string[] = [];
  const lines = goodLines().map((line) => JSON.stringify(line));
  // Bigger sessions make each compaction take longer, so two runs overlap more.
  const body = Array.from({ length: size }, (_, copy) => lines.map((line) => line.replace(/"(m\d|t\d)"/g, `"$1-${copy}"`)).join('\n')).join('\n');
  for (let i = 0; i < count; i++) {
    const path = join(dir, `s${String(i).padStart(4, '0')}.jsonl`);
    await writeFile(path, `${body}\n`);
    paths.push(path);
  }
  return paths;
}

/** A pid that is certainly not running: a child that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

async function expectValidFreshSidecar(session: string): Promise<void> {
  const state = sidecarSchema.parse(JSON.parse(await readFile(sidecarPath(session), 'utf8')));
  const { messages } = await readSession(session);
  expect(checkFreshness(state, messages).kind, session).toBe('fresh');
}

describe('the sidecar lock', () => {
  it('reports `locked` for a session another live compactor holds, and leaves it alone', async () => {
    const [session] = await writeSessions(1);
    const lock = `${sidecarPath(session!)}.lock`;
    const holder = JSON.stringify({ pid: process.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z' });
    await writeFile(lock, holder);
    const json = await runCli([...COMPACT, session!]);
    expect(json.exitCode).toBe(0);
    expect(jsonLines(json.stdout)).toEqual([{ session, status: 'locked', lock, locked_by_pid: process.pid }]);
    const human = await runCli(['compact', '--strategy', 'truncate', '--force', '--keep-recent', '1', session!]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain(`locked     ${session} (another compactor is writing its sidecar: pid ${process.pid} on ${hostname()})`);
    expect(human.stdout).toContain('0 compacted, 0 skipped, 0 up-to-date, 1 locked, 0 failed');
    expect(await readFile(lock, 'utf8')).toBe(holder);
    expect((await readdir(dir)).sort()).toEqual([`s0000.jsonl`, `s0000_compaction.json.lock`]);
  });

  it('treats a lock from another host as held (it cannot check that pid)', async () => {
    const [session] = await writeSessions(1);
    await writeFile(`${sidecarPath(session!)}.lock`, JSON.stringify({ pid: deadPid(), host: `not-${hostname()}`, since: 'x' }));
    const result = await runCli([...COMPACT, session!]);
    expect(jsonLines(result.stdout)[0]!['status']).toBe('locked');
  });

  it('takes over a lock whose process is dead, and releases it when done', async () => {
    const [session] = await writeSessions(1);
    await writeFile(`${sidecarPath(session!)}.lock`, JSON.stringify({ pid: deadPid(), host: hostname(), since: 'x' }));
    const result = await runCli([...COMPACT, session!]);
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]!['status']).toBe('compacted');
    expect((await readdir(dir)).sort()).toEqual(['s0000.jsonl', 's0000_compaction.json']);
    await expectValidFreshSidecar(session!);
  });

  it("removes the temp files a killed run left, and keeps a live process's and other files", async () => {
    const [session] = await writeSessions(1);
    const sidecar = sidecarPath(session!);
    const live = `${sidecar}.lock.${process.pid}`;
    await writeFile(`${sidecar}.3141592653`, '{"half": ');
    await writeFile(`${sidecar}.lock.${deadPid()}`, '{}');
    await writeFile(live, '{}');
    await writeFile(join(dir, 'notes.123'), 'mine');
    const result = await runCli([...COMPACT, session!]);
    expect(result.exitCode).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['notes.123', 's0000.jsonl', 's0000_compaction.json', 's0000_compaction.json.lock.' + process.pid]);
    expect(live.endsWith(String(process.pid))).toBe(true);
  });
});

describe('two compact processes over the same directory', () => {
  it('the second reports `locked` with the pid of the first while the first is inside that session', async () => {
    const [other] = await writeSessions(1);
    const held = join(dir, 'held.jsonl');
    await makeFifo(held);
    // --format canonical: the session is opened once (auto-detection would read the pipe twice).
    const first = execa(process.execPath, [BIN, ...COMPACT, '--format', 'canonical', held], { reject: false, env: { CI: 'true' }, stdin: 'ignore' });
    const writer = await waitForReader(held);
    const second = await runCli([...COMPACT, '--format', 'canonical', held, other!]);
    feed(writer, goodLines().map((line) => JSON.stringify(line)).join('\n') + '\n');
    const done = await first;
    expect(second.exitCode).toBe(0);
    expect(jsonLines(second.stdout)).toEqual([
      { session: held, status: 'locked', lock: `${sidecarPath(held)}.lock`, locked_by_pid: first.pid },
      expect.objectContaining({ session: other, status: 'compacted' }),
    ]);
    expect(done.exitCode).toBe(0);
    expect(jsonLines(String(done.stdout))).toEqual([expect.objectContaining({ session: held, status: 'compacted' })]);
    expect((await readdir(dir)).sort()).toEqual(['held.jsonl', 'held_compaction.json', 's0000.jsonl', 's0000_compaction.json']);
  });

  it('corrupt nothing: each session is compacted exactly once, the other run sees it up-to-date or locked', async () => {
    const sessions = await writeSessions(80, 10);
    const run = () => execa(process.execPath, [BIN, ...COMPACT, dir], { reject: false, env: { CI: 'true' }, stdin: 'ignore' });
    const [first, second] = await Promise.all([run(), run()]);
    for (const result of [first, second]) {
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe('');
    }
    const statuses = new Map<string, string[]>();
    for (const result of [first, second]) {
      for (const record of jsonLines(String(result.stdout))) statuses.set(record['session'], [...(statuses.get(record['session']) ?? []), record['status']]);
    }
    expect(statuses.size).toBe(sessions.length);
    for (const [session, both] of statuses) {
      expect(both.filter((status) => status === 'compacted'), session).toHaveLength(1);
      expect(['up-to-date', 'locked']).toContain(both.find((status) => status !== 'compacted'));
    }
    for (const session of sessions) await expectValidFreshSidecar(session);
    const leftovers = (await readdir(dir)).filter((name) => !name.endsWith('.jsonl') && !name.endsWith('_compaction.json'));
    expect(leftovers).toEqual([]);
    // A third run finds nothing to do.
    const third = await runCli([...COMPACT, dir]);
    expect(new Set(jsonLines(third.stdout).map((record) => record['status']))).toEqual(new Set(['up-to-date']));
  });
});
