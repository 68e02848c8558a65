/**
 * SIGINT / SIGTERM during a bulk `compact`: the session in flight finishes, no new one starts,
 * nothing is half-written, a line says what was done, the exit code is 130, and a rerun resumes.
 * The run is held inside one session by a named pipe, so the signal lands there every time.
 */
import { closeSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sidecarSchema } from '../../src/sidecar/schema.js';
import { sidecarPath } from '../../src/sidecar/store.js';
import { goodLines } from '../corpus/make-bad-inputs.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { feed, makeFifo, waitForReader } from '../helpers/fifo.js';
import { startCli } from '../helpers/process.js';

const SESSIONS = 10;
const HELD = 3;
// One session at a time, so the held session starts only after the ones before it are done.
const COMPACT = ['compact', '--json', '--strategy', 'truncate', '--concurrency', '1', '--force', '--allow-no-gain', '--keep-recent', '1', '--format', 'canonical'];
const CONTENT = goodLines().map((line) => JSON.stringify(line)).join('\n') + '\n';

let dir: string;
let paths: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-interrupt-'));
  paths = [];
  for (let i = 0; i < SESSIONS; i++) {
    const path = join(dir, `s${String(i).padStart(2, '0')}.jsonl`);
    if (i === HELD) await makeFifo(path);
    else await writeFile(path, CONTENT);
    paths.push(path);
  }
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function start() {
  return startCli([...COMPACT, ...paths]);
}

/** The handler has seen the signal once this line is out. */
const STOPPING = /stopping after the sessions in progress/;

describe.each(['SIGINT', 'SIGTERM'] as const)('%s during a bulk compact', (signal) => {
  it('finishes the session in flight, starts no other, says so, exits 130; a rerun resumes', async () => {
    const run = start();
    const writer = await waitForReader(paths[HELD]!);
    run.child.kill(signal);
    // The pipe holds the session until fed: it can only finish after the handler has run.
    await run.stderrMatches(STOPPING);
    feed(writer, CONTENT);
    const result = await run.exit;
    expect(result.code).toBe(130);
    const records = jsonLines(run.stdout());
    expect(records.map((record) => [record['session'], record['status']])).toEqual(paths.slice(0, HELD + 1).map((path) => [path, 'compacted']));
    expect(run.stderr().trimEnd().split('\n')).toEqual([
      `compactor: ${signal}: stopping after the sessions in progress (again to stop now)`,
      `compactor: interrupted by ${signal}: ${HELD + 1} of ${SESSIONS} sessions done, ${SESSIONS - HELD - 1} not done; run the same command again to resume`,
    ]);
    // Whole sidecars for the finished sessions, none for the others, no temp or lock left.
    for (const path of paths.slice(0, HELD + 1)) sidecarSchema.parse(JSON.parse(await readFile(sidecarPath(path), 'utf8')));
    const names = (await readdir(dir)).sort();
    expect(names).toEqual([...paths.map((path) => path.slice(dir.length + 1)), ...paths.slice(0, HELD + 1).map((path) => sidecarPath(path).slice(dir.length + 1))].sort());

    // The held session becomes a plain file with the same content: its sidecar is still fresh.
    await unlink(paths[HELD]!);
    await writeFile(paths[HELD]!, CONTENT);
    const rerun = await runCli(COMPACT.concat(paths));
    expect(rerun.exitCode).toBe(0);
    expect(jsonLines(rerun.stdout).map((record) => record['status'])).toEqual(paths.map((_, index) => (index <= HELD ? 'up-to-date' : 'compacted')));
  });
});

it('a second signal stops at once, exit 130, without a half-written sidecar or a lock left behind', async () => {
  const run = start();
  const writer = await waitForReader(paths[HELD]!);
  run.child.kill('SIGINT');
  await run.stderrMatches(STOPPING);
  run.child.kill('SIGINT');
  await run.stderrMatches(/stopped now/);
  // Tidiness only: a pipe is read without blocking a thread, so the exit does not wait for it (inputs.test.ts).
  closeSync(writer);
  const result = await run.exit;
  expect(result.code).toBe(130);
  expect(run.stderr().trimEnd().split('\n')).toEqual([
    'compactor: SIGINT: stopping after the sessions in progress (again to stop now)',
    'compactor: SIGINT again: stopped now; finished sidecars are kept, none is half-written',
  ]);
  expect(jsonLines(run.stdout())).toHaveLength(HELD);
  const names = (await readdir(dir)).sort();
  expect(names).toEqual([...paths.map((path) => path.slice(dir.length + 1)), ...paths.slice(0, HELD).map((path) => sidecarPath(path).slice(dir.length + 1))].sort());
});
