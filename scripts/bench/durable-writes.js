#!/usr/bin/env node
/**
 * The floor under the small-session target, run as its own process: for each session in the
 * list, write a file of SIZE bytes beside it the way a sidecar must be written to be atomic and
 * to survive a crash, and nothing else (no session is read, no lock is taken). Each file goes to
 * a new temp name, all temps are fsynced at once (libuv's thread pool, as the sidecar store's
 * batch commit does), renamed into place, then each directory is fsynced once. The files are
 * named `<session>.durable-floor`; the bench removes them before each run, as it removes the
 * sidecars before each `compact`. Prints how many it wrote.
 * Usage: node durable-writes.js FILE_LIST [SIZE]
 */
import { closeSync, fsync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

const files = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean);
const payload = Buffer.alloc(Number(process.argv[3] ?? 840), 'x');
const SUFFIX = '.durable-floor';

const fsyncAsync = (fd) => new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));

// Created one by one: creating them at once in the thread pool measured no faster (the names
// share a directory, whose lock serializes them) and took more system time.
const staged = files.map((file) => {
  const temp = `${file}${SUFFIX}.${process.pid}`;
  const fd = openSync(temp, 'wx', 0o644);
  writeSync(fd, payload);
  return { fd, temp, path: `${file}${SUFFIX}` };
});
await Promise.all(staged.map(({ fd }) => fsyncAsync(fd)));
for (const { fd, temp, path } of staged) {
  closeSync(fd);
  renameSync(temp, path);
}
await Promise.all(
  [...new Set(files.map((file) => dirname(file)))].map(async (directory) => {
    const fd = openSync(directory, 'r');
    try {
      await fsyncAsync(fd);
    } finally {
      closeSync(fd);
    }
  }),
);
process.stdout.write(`${JSON.stringify({ files: staged.length, bytes: payload.length })}\n`);
