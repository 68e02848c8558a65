#!/usr/bin/env node
/**
 * The benchmark's yardstick, run as its own process: read each file into a Buffer, find
 * newlines with indexOf, JSON.parse every line, on one core. Prints lines and bytes parsed so
 * the work cannot be optimized away. Usage: node bare-loop.js FILE_LIST (one path a line).
 */
import { readFileSync } from 'node:fs';
import { parseEveryLine } from './bare-lines.js';

const files = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean);
let lines = 0;
let keys = 0;
for (const file of files) {
  parseEveryLine(file, (value) => {
    keys += Object.keys(value).length;
    lines++;
  });
}
process.stdout.write(`${JSON.stringify({ files: files.length, lines, keys })}\n`);
