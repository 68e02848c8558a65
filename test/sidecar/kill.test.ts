/**
 * SIGKILL at random points of a bulk `compact`, at least 100 times: afterwards every sidecar
 * is the old one or a new whole one (never torn), the only leftovers are our own temp and lock
 * files, the next run is not tripped by them (it removes them), and a final run resumes.
 *
 * Sessions grow between runs (two messages appended), so each run rewrites sidecars and a kill
 * can land inside a write. Two directories (one per core) run side by side to keep the test short.
 */
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { sidecarSchema } from '../../src/sidecar/schema.js';
import { checkFreshness } from '../../src/sidecar/staleness.js';
import { sidecarPath } from '../../src/sidecar/store.js';
import { goodLines } from '../corpus/make-bad-inputs.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { startCli } from '../helpers/process.js';

const KILLS = 100;
const LANES = 2;
const SESSIONS = 8;
const COMPACT = ['compact', '--json', '--force', '--allow-no-gain', '--keep-recent', '1', '--format', 'canonical'];

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'compactor-kill-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** xorshift32: the same kill schedule every run (the machine's speed still varies where it lands). */
function random(seed: number): () => number {
  let state = seed || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

/** Our own names: sessions, sidecars, write-file-atomic temps, locks and lock staging files. */
const OURS = /^s\d+\.jsonl$|^s\d+_compaction\.json(?:\.\d+|\.lock|\.lock\.\d+)?$/;
const LEFTOVER = /_compaction\.json(?:\.\d+|\.lock|\.lock\.\d+)$/;

interface LaneReport {
  kills: number;
  runs: number;
  leftoversSeen: number;
}

async function checkSidecars(dir: string, sessions: readonly string[], before: ReadonlyMap<string, string | null>): Promise<void> {
  for (const session of sessions) {
    const old = before.get(session) ?? null;
    let text: string | null;
    try {
      text = await readFile(sidecarPath(session), 'utf8');
    } catch {
      text = null;
    }
    if (text === old) continue; // the old one, untouched
    expect(text, `${session}: a sidecar vanished`).not.toBeNull();
    const state = sidecarSchema.parse(JSON.parse(text!));
    const { messages } = await readSession(session, 'canonical');
    expect(checkFreshness(state, messages).kind, session).toBe('fresh');
    const previous = old ? (JSON.parse(old) as { compactions: number }).compactions : 0;
    expect(state.compactions, session).toBe(previous + 1);
  }
  for (const name of await readdir(dir)) expect(name, `unexpected file in ${dir}`).toMatch(OURS);
}

async function lane(index: number, kills: number): Promise<LaneReport> {
  const dir = join(root, `lane${index}`);
  const next = random(0x9e3779b9 + index);
  const sessions: string[] = [];
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir);
  const lines = goodLines().map((line) => JSON.stringify(line)).join('\n') + '\n';
  for (let i = 0; i < SESSIONS; i++) {
    const path = join(dir, `s${String(i).padStart(2, '0')}.jsonl`);
    await writeFile(path, lines);
    sessions.push(path);
  }
  const report: LaneReport = { kills: 0, runs: 0, leftoversSeen: 0 };
  for (let round = 0; report.kills < kills && round < kills * 4; round++) {
    for (const session of sessions) {
      await appendFile(
        session,
        `${JSON.stringify({ id: `u${round}`, role: 'user', content: `more ${round}` })}\n` +
          `${JSON.stringify({ id: `a${round}`, role: 'assistant', content: `done ${round}` })}\n`,
      );
    }
    const before = new Map<string, string | null>();
    for (const session of sessions) before.set(session, await readFile(sidecarPath(session), 'utf8').catch(() => null));
    const run = startCli([...COMPACT, dir]);
    report.runs++;
    // Kill once the batch is writing (its first record is out), after a random part of it.
    const delay = next() < 0.25 ? 0 : Math.floor(next() * 60);
    run.child.stdout.once('data', () => setTimeout(() => run.child.kill('SIGKILL'), delay));
    const exit = await run.exit;
    if (exit.signal === 'SIGKILL') report.kills++;
    else {
      // Finished before the kill: it must have succeeded, leftovers of earlier kills and all.
      expect(exit.code, run.stderr()).toBe(0);
      expect(jsonLines(run.stdout()).every((record) => record['status'] === 'compacted')).toBe(true);
    }
    if ((await readdir(dir)).some((name) => LEFTOVER.test(name))) report.leftoversSeen++;
    await checkSidecars(dir, sessions, before);
  }
  // Rerun: resumes and removes every leftover; then nothing is left to do.
  const final = await runCli([...COMPACT, dir]);
  expect(final.exitCode, final.stderr).toBe(0);
  expect(jsonLines(final.stdout).map((record) => record['status']).filter((status) => status !== 'compacted' && status !== 'up-to-date')).toEqual([]);
  expect((await readdir(dir)).filter((name) => LEFTOVER.test(name))).toEqual([]);
  const again = await runCli([...COMPACT, dir]);
  expect(jsonLines(again.stdout).map((record) => record['status'])).toEqual(sessions.map(() => 'up-to-date'));
  for (const session of sessions) expect(checkFreshness(sidecarSchema.parse(JSON.parse(await readFile(sidecarPath(session), 'utf8'))), (await readSession(session)).messages).kind).toBe('fresh');
  return report;
}

it(`survives ${KILLS} SIGKILLs at random points with every sidecar old or new, never torn`, async () => {
  const perLane = Math.ceil(KILLS / LANES);
  const reports = await Promise.all(Array.from({ length: LANES }, (_, index) => lane(index, perLane)));
  const kills = reports.reduce((total, report) => total + report.kills, 0);
  expect(kills).toBeGreaterThanOrEqual(KILLS);
  // Kills inside a write leave temps or locks behind at least sometimes; the next run removed them (checked above).
  console.log(`kill test: ${kills} kills in ${reports.reduce((t, r) => t + r.runs, 0)} runs; leftovers seen after ${reports.reduce((t, r) => t + r.leftoversSeen, 0)}`);
}, 180_000);
