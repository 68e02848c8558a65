#!/usr/bin/env node
/**
 * The benchmark's yardstick, run as its own process: read each file into a Buffer, find
 * newlines with indexOf, JSON.parse every line. Prints lines and keys parsed so the work cannot
 * be optimized away. Usage: node bare-loop.js FILE_LIST [THREADS] [MODE] (one path a line).
 * MODE `pieces` reads each file 1 MiB at a time instead of whole. `usage-lines` parses
 * only the lines that carry a `"usage":` key, and nothing of the others but their newline: the
 * least a report of what a Claude Code corpus spent must do in JavaScript (ccusage's report
 * reads nothing else). It is the floor under the Claude Code target: no row that also sizes
 * every message's text can come nearer to ccusage's native binary than this loop does.
 * `usage-lines-counted` also counts the characters of every other line: the floor
 * of a report that, as ours, sizes what the model saw exactly.
 *
 * THREADS 2 is the two-core yardstick: the main thread and one worker thread each take a share
 * of the files, dealt biggest first to the lighter share, as our pool deals sessions. Rows that
 * use both cores are measured against it, so that a machine whose two cores run slower together
 * than alone (a host that shares them) moves the row and its yardstick alike.
 */
import { readFileSync, statSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { parseEveryLine, parseEveryLineInPieces, parseUsageLines } from './bare-lines.js';

/** `mode`: 'pieces', 'usage-lines', 'usage-lines-counted' or '' (every line, each file read whole). */
function parseAll(files, mode) {
  const parse =
    mode === 'pieces' ? parseEveryLineInPieces : mode === 'usage-lines' ? parseUsageLines : mode === 'usage-lines-counted' ? (file, onValue) => parseUsageLines(file, onValue, true) : parseEveryLine;
  let lines = 0;
  let keys = 0;
  let units = 0;
  for (const file of files) {
    parse(file, (value) => {
      if (typeof value === 'number') units += value;
      else {
        keys += Object.keys(value).length;
        lines++;
      }
    });
  }
  return { lines, keys, units };
}

/** Files dealt into `count` shares of about equal bytes, biggest first to the lightest share. */
function shares(files, count) {
  const sized = files.map((file) => ({ file, size: statSync(file).size })).sort((a, b) => b.size - a.size);
  const out = Array.from({ length: count }, () => ({ files: [], bytes: 0 }));
  for (const { file, size } of sized) {
    const lightest = out.reduce((best, share) => (share.bytes < best.bytes ? share : best));
    lightest.files.push(file);
    lightest.bytes += size;
  }
  return out.map((share) => share.files);
}

if (!isMainThread) {
  parentPort.postMessage(parseAll(workerData.files, workerData.mode));
} else {
  const files = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean);
  const threads = Math.max(1, Number(process.argv[3] ?? 1));
  const mode = process.argv[4] ?? '';
  let total;
  if (threads === 1) total = parseAll(files, mode);
  else {
    const [own, ...others] = shares(files, threads);
    const pending = others.map(
      (share) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(new URL(import.meta.url), { workerData: { files: share, mode } });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    );
    const mine = parseAll(own, mode);
    total = (await Promise.all(pending)).reduce((sum, part) => ({ lines: sum.lines + part.lines, keys: sum.keys + part.keys, units: sum.units + part.units }), mine);
  }
  process.stdout.write(`${JSON.stringify({ files: files.length, threads, ...total })}\n`);
}
