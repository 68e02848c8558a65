#!/usr/bin/env node
/**
 * Counts the work a CLI run does without timing it: V8's precise block coverage gives how many
 * times each function and block ran (loop bodies included, in our code and in libraries), and
 * their sum is the run's work. Used by test/cli/linear-work.test.ts.
 *   node work-counter.mjs '<json: list of argv lists>'
 * Runs the first argv list once untimed (modules load, code warms), then each list with counters
 * reset, and prints one JSON array of work counts. Output of the runs goes to /dev/null.
 */
import { Session } from 'node:inspector/promises';
import { openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const runs = JSON.parse(process.argv[2]);
const { main } = await import(join(root, 'dist', 'cli.js'));

// The runs' own output is not wanted: send stdout's writes to /dev/null.
const devNull = openSync('/dev/null', 'w');
const { writeSync } = await import('node:fs');
process.stdout.write = (chunk, encoding, callback) => {
  writeSync(devNull, typeof chunk === 'string' ? chunk : Buffer.from(chunk));
  (typeof encoding === 'function' ? encoding : callback)?.();
  return true;
};

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });

const work = async () => {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  let total = 0;
  for (const script of result) for (const fn of script.functions) for (const range of fn.ranges) total += range.count;
  return total;
};

const counts = [];
await main(runs[0]);
for (const argv of runs) {
  await work();
  await main(argv);
  counts.push(await work());
}
process.exitCode = 0;
process.stderr.write(`${JSON.stringify(counts)}\n`);
