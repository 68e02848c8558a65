/**
 * `compact` in worker threads works on batches of sessions (src/pipeline/sessions.ts): each
 * worker locks, compacts and stages a batch's sidecars, commits them together and releases the
 * locks. Per session nothing changes: the same records in input order as one thread, a session
 * another process holds is `locked` and left alone, a failing session fails alone, leftovers of
 * killed runs are swept, and no staging, temp or lock file of ours is left behind.
 */
import { execa } from 'execa';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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
import { startCli } from '../helpers/process.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-batches-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const COMPACT = ['compact', '--json', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '1'];
const FOLDERS = ['a', 'b', 'c'];
/** More than one batch per folder, and enough sessions that `--jobs 2` starts workers. */
const PER_FOLDER = 40;

async function writeArchive(): Promise<string[]> {
  const body = `${goodLines().map((line) => JSON.stringify(line)).join('\n')}\n`;
  const sessions: string[] = [];
  for (const folder of FOLDERS) {
    await mkdir(join(dir, folder));
    for (let i = 0; i < PER_FOLDER; i++) {
      const path = join(dir, folder, `s${String(i).padStart(3, '0')}.jsonl`);
      await writeFile(path, body);
      sessions.push(path);
    }
  }
  return sessions.sort();
}

const withoutClock = (text: string) => text.replace(/"created_at": ?"[^"]*"/g, '');

describe('compact in batches on worker threads', () => {
  it('prints what one thread prints, leaves a held session alone, fails a bad one alone, sweeps leftovers', async () => {
    const sessions = await writeArchive();
    const held = sessions[5]!;
    const bad = sessions[PER_FOLDER + 7]!;
    const swept = sessions[2 * PER_FOLDER + 3]!;
    await writeFile(bad, '{"id":"m1","role":"user","content":"hi"}\nnot json\n');
    const lock = `${sidecarPath(held)}.lock`;
    const holder = JSON.stringify({ pid: process.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z' });
    await writeFile(lock, holder);
    await writeFile(`${sidecarPath(swept)}.3141592653`, '{"half": ');
    await writeFile(`${sidecarPath(swept)}.lock.999999999`, '{}');

    const two = await runCli([...COMPACT, '--jobs', '2', dir]);
    expect(two.exitCode).toBe(1);
    const records = jsonLines(two.stdout);
    expect(records.map((record) => record['session'])).toEqual(sessions);
    expect(records[sessions.indexOf(held)]).toEqual({ session: held, status: 'locked', lock, locked_by_pid: process.pid });
    expect(records[sessions.indexOf(bad)]).toEqual({ session: bad, status: 'failed', error: `${bad}:2: invalid JSON: Unexpected token 'o', "not json" is not valid JSON` });
    expect(records.filter((record) => record['status'] === 'compacted')).toHaveLength(sessions.length - 2);
    expect(await readFile(lock, 'utf8')).toBe(holder);

    for (const folder of FOLDERS) {
      const names = await readdir(join(dir, folder));
      const others = names.filter((name) => !name.endsWith('.jsonl') && !name.endsWith('_compaction.json'));
      expect(others).toEqual(folder === 'a' ? ['s005_compaction.json.lock'] : []);
    }
    for (const session of sessions) {
      if (session === held || session === bad) continue;
      const text = await readFile(sidecarPath(session), 'utf8');
      const state = sidecarSchema.parse(JSON.parse(text));
      expect(checkFreshness(state, (await readSession(session)).messages).kind, session).toBe('fresh');
      expect((await stat(sidecarPath(session))).mode & 0o777).toBe(0o644);
    }

    // One thread, from the same starting point, writes the same sidecars and prints the same records.
    const written = new Map<string, string>();
    for (const session of sessions) {
      if (session !== held && session !== bad) written.set(session, withoutClock(await readFile(sidecarPath(session), 'utf8')));
      await rm(sidecarPath(session), { force: true });
    }
    const one = await runCli([...COMPACT, '--jobs', '1', dir]);
    expect(withoutClock(one.stdout)).toBe(withoutClock(two.stdout));
    expect(one.stderr).toBe(two.stderr);
    for (const [session, text] of written) expect(withoutClock(await readFile(sidecarPath(session), 'utf8')), session).toBe(text);
  });

  it('writes sidecars with mode 0644 whatever the umask, as before', async () => {
    const sessions = await writeArchive();
    const result = await execa('sh', ['-c', `umask 077 && exec "${process.execPath}" "${BIN}" ${COMPACT.join(' ')} --jobs 2 "${dir}"`], {
      reject: false,
      env: { CI: 'true' },
      stdin: 'ignore',
    });
    expect(result.exitCode).toBe(0);
    for (const session of [sessions[0]!, sessions[sessions.length - 1]!]) expect((await stat(sidecarPath(session))).mode & 0o777).toBe(0o644);
  });

  it('SIGINT while a batch waits in a worker: the batches in flight stage, commit and unlock, and leave no temp or lock', async () => {
    const sessions = await writeArchive();
    // A named pipe holds the worker's first batch open inside its fourth session, with the
    // worker's other batch staged meanwhile (named files are read, pipes too).
    const held = sessions[3]!;
    await rm(held);
    await makeFifo(held);
    const run = startCli([...COMPACT, '--jobs', '2', '--format', 'canonical', ...sessions]);
    const writer = await waitForReader(held);
    run.child.kill('SIGINT');
    await run.stderrMatches(/stopping after the sessions in progress/);
    feed(writer, `${goodLines().map((line) => JSON.stringify(line)).join('\n')}\n`);
    const result = await run.exit;
    expect(result.code).toBe(130);
    const done = jsonLines(run.stdout());
    expect(done.length).toBeGreaterThan(3);
    expect(done.every((record) => record['status'] === 'compacted')).toBe(true);
    for (const record of done) sidecarSchema.parse(JSON.parse(await readFile(String(record['sidecar']), 'utf8')));
    const written = new Set(done.map((record) => String(record['sidecar'])));
    for (const folder of FOLDERS) {
      for (const name of await readdir(join(dir, folder))) {
        // Sessions, and the sidecars of the sessions done: no temp, lock or lock staging file.
        expect(name).toMatch(/^s\d+\.jsonl$|^s\d+_compaction\.json$/);
        if (name.endsWith('_compaction.json')) expect(written.has(join(dir, folder, name)), name).toBe(true);
      }
    }
  });

  it('a SIGKILL in the middle of batches leaves every sidecar old or whole new, and the next run cleans up', async () => {
    const sessions = await writeArchive();
    const ours = /^s\d+\.jsonl$|^s\d+_compaction\.json(?:\.\d+|\.lock|\.lock\.\d+)?$/;
    let kills = 0;
    for (let round = 0; round < 6; round++) {
      for (const session of sessions) await appendFile(session, `${JSON.stringify({ id: `u${round}`, role: 'user', content: `more ${round}` })}\n`);
      const before = new Map<string, string | null>();
      for (const session of sessions) before.set(session, await readFile(sidecarPath(session), 'utf8').catch(() => null));
      const run = startCli([...COMPACT, '--jobs', '2', '--format', 'canonical', dir]);
      run.child.stdout.once('data', () => setTimeout(() => run.child.kill('SIGKILL'), round * 7));
      if ((await run.exit).signal === 'SIGKILL') kills++;
      for (const session of sessions) {
        const text = await readFile(sidecarPath(session), 'utf8').catch(() => null);
        if (text === before.get(session)) continue;
        expect(text, `${session}: a sidecar vanished`).not.toBeNull();
        const state = sidecarSchema.parse(JSON.parse(text!));
        expect(checkFreshness(state, (await readSession(session, 'canonical')).messages).kind, session).toBe('fresh');
      }
      for (const folder of FOLDERS) for (const name of await readdir(join(dir, folder))) expect(name).toMatch(ours);
    }
    expect(kills).toBeGreaterThan(0);
    const final = await runCli([...COMPACT, '--jobs', '2', '--format', 'canonical', dir]);
    expect(final.exitCode, final.stderr).toBe(0);
    // Resumes: what the killed runs did not finish is compacted now, the rest is up-to-date.
    const statuses = jsonLines(final.stdout).map((record) => record['status']);
    expect(statuses).toHaveLength(sessions.length);
    expect(statuses.filter((status) => status !== 'compacted' && status !== 'up-to-date')).toEqual([]);
    for (const session of sessions) {
      const state = sidecarSchema.parse(JSON.parse(await readFile(sidecarPath(session), 'utf8')));
      expect(checkFreshness(state, (await readSession(session, 'canonical')).messages).kind, session).toBe('fresh');
    }
    for (const folder of FOLDERS) {
      const names = await readdir(join(dir, folder));
      expect(names.filter((name) => !name.endsWith('.jsonl') && !name.endsWith('_compaction.json'))).toEqual([]);
    }
  }, 120_000);
});
