#!/usr/bin/env node
/**
 * The benchmark's yardstick, run as its own process: read each file into a Buffer, find
 * newlines with indexOf, JSON.parse every line, on one core. Prints lines and bytes parsed so
 * the work cannot be optimized away. Usage: node bare-loop.js FILE_LIST (one path a line).
 */
import { readFileSync } from 'node:fs';

const files = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean);
let lines = 0;
let keys = 0;
for (const file of files) {
  const buffer = readFileSync(file);
  let from = 0;
  while (from < buffer.length) {
    let end = buffer.indexOf(0x0a, from);
    if (end < 0) end = buffer.length;
    if (end > from) {
      const value = JSON.parse(buffer.toString('utf8', from, end));
      keys += Object.keys(value).length;
      lines++;
    }
    from = end + 1;
  }
}
process.stdout.write(`${JSON.stringify({ files: files.length, lines, keys })}\n`);
