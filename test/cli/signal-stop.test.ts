/**
 * Commands that write nothing stop at the first SIGTERM or SIGINT: no session in progress is
 * finished first (a big one can take many seconds), nothing is printed for it, one line says why,
 * exit 130 (README "Interruption and concurrent runs"). The run is held inside a session by a
 * named pipe, so the signal lands there every time; nothing is timed.
 */
import { closeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { goodLines } from '../corpus/make-bad-inputs.js';
import { makeFifo, waitForReader } from '../helpers/fifo.js';
import { startCli } from '../helpers/process.js';

const HALF = goodLines()
  .slice(0, 2)
  .map((line) => `${JSON.stringify(line)}\n`)
  .join('');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-signal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each([
  ['estimate'],
  ['inspect'],
  ['inspect --json'],
  ['replay --strategy truncate'],
  ['compact --dry-run --strategy truncate'],
  ['context'],
  ['audit'],
])('%s', (command) => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops at the first %s, exit 130, nothing printed for the session', async (signal) => {
    const path = join(dir, 'held.jsonl');
    await makeFifo(path);
    const run = startCli([...command.split(' '), '--format', 'canonical', path]);
    const writer = await waitForReader(path);
    // Half a session is in the pipe: the reader is inside it, waiting for the rest.
    const { writeSync } = await import('node:fs');
    writeSync(writer, HALF);
    run.child.kill(signal);
    await run.stderrMatches(/stopped/);
    // Node cannot finish exiting while a read of the pipe is pending; a real file never blocks so.
    closeSync(writer);
    const result = await run.exit;
    expect(result.code).toBe(130);
    expect(run.stdout()).toBe('');
    expect(run.stderr().trimEnd().split('\n')).toEqual([`compactor: ${signal}: stopped (this command writes nothing)`]);
  }, 60_000);
});
