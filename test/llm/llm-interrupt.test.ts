/**
 * SIGINT while summarizer calls are in flight: `compact --strategy summarize --concurrency 4`
 * over 8 sessions against a fake that answers the first two calls at once and holds the next
 * four. The signal is sent once the fake holds four calls, so the state at that moment is known:
 * two sessions done, four waiting on the endpoint, two not started. The held calls must be
 * aborted (the fake sees the client hang up), the run exits 130 long before the fake would have
 * answered, and a rerun against the same endpoint resumes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { sidecarSchema } from '../../src/sidecar/schema.js';
import { sidecarPath } from '../../src/sidecar/store.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import type { Fault } from '../helpers/fake-provider.js';
import { fakeFlags, useLlmTest } from '../helpers/llm.js';
import { startCli } from '../helpers/process.js';
import { agentTurns, writeSession } from '../helpers/sessions.js';

const t = useLlmTest();

const SESSIONS = 8;
const PROMPT = 2;
const HELD = 4;
/** Far longer than the run may take once interrupted; a run that waits for it has not aborted. */
const HOLD_MS = 30_000;

describe.each(['fail', 'truncate'] as const)('SIGINT with summarizer calls in flight (--on-error %s)', (onError) => {
  it('aborts the calls, exits 130 at once, leaves whole sidecars only; a rerun resumes', async () => {
    const paths: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      paths.push(join(t.scratch.dir, `s${i}.jsonl`));
      await writeSession(paths[i]!, agentTurns(1, 4, 400, 80));
    }
    // Faults go to requests in arrival order; every request after these is answered at once.
    const faults: Fault[] = [...Array<Fault>(PROMPT).fill({ kind: 'delay', ms: 0 }), ...Array<Fault>(HELD).fill({ kind: 'delay', ms: HOLD_MS })];
    const fake = await t.start({ faults });
    const args = ['compact', ...paths, '--json', '--strategy', 'summarize', '--concurrency', '4', '--on-error', onError, '--force', '--keep-recent', '200', ...fakeFlags(fake)];

    const run = startCli(args, t.scratch.env);
    // Two sessions had to finish before the fifth and sixth could start: four calls are held now.
    await fake.received(PROMPT + HELD);
    run.child.kill('SIGINT');
    const exited = await Promise.race([run.exit, sleep(HOLD_MS / 2).then(() => null)]);
    if (exited === null) run.child.kill('SIGKILL');
    expect(exited, 'still running long after SIGINT: the held calls were not aborted').toEqual({ code: 130, signal: null });

    // The endpoint saw all four held calls hang up, and answered none of them.
    await vi.waitFor(() => expect(fake.requests.filter((request) => request.answered === 'disconnected')).toHaveLength(HELD), { timeout: 10_000 });
    expect(fake.requests.map((request) => request.answered).sort()).toEqual([...Array(PROMPT).fill('summary'), ...Array(HELD).fill('disconnected')].sort());
    expect(run.stderr().trimEnd().split('\n')).toEqual([
      'compactor: SIGINT: stopping after the sessions in progress (again to stop now)',
      `compactor: interrupted by SIGINT: ${PROMPT} of ${SESSIONS} sessions done, ${SESSIONS - PROMPT} not done; run the same command again to resume`,
    ]);

    // The two finished sessions have whole summarize sidecars (no fallback for the aborted ones);
    // nothing else was written, and no temp or lock file is left.
    const records = jsonLines(run.stdout());
    expect(records).toHaveLength(PROMPT);
    const done = records.map((record) => record['session'] as string);
    for (const record of records) expect(record).toMatchObject({ status: 'compacted', strategy: 'summarize', fallback: false });
    for (const path of done) {
      const sidecar = sidecarSchema.parse(JSON.parse(await readFile(sidecarPath(path), 'utf8')));
      expect(sidecar.strategy).toBe('summarize');
    }
    const names = (await readdir(t.scratch.dir)).sort();
    expect(names).toEqual([...paths, ...done.map(sidecarPath)].map((path) => path.slice(t.scratch.dir.length + 1)).sort());

    // The same command again (the fake now answers at once): the finished ones are up to date, the rest compacted.
    const rerun = await runCli(args, { env: t.scratch.env });
    expect(rerun.exitCode).toBe(0);
    expect(jsonLines(rerun.stdout).map((record) => record['status'])).toEqual(paths.map((path) => (done.includes(path) ? 'up-to-date' : 'compacted')));
    expect(fake.summaries()).toHaveLength(SESSIONS);
    for (const path of paths) expect(sidecarSchema.parse(JSON.parse(await readFile(sidecarPath(path), 'utf8'))).strategy).toBe('summarize');
  });
});
