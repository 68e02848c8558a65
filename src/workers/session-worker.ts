/**
 * The worker thread's side of pool.ts: imports the task a request names, runs it on one
 * session (or a batch task on several), and posts back the result or the error as the one line the CLI would print.
 */
import { parentPort } from 'node:worker_threads';
import { describeError } from '../errors.js';
import { rememberSniffed, takeSniffed } from '../formats/sniffed.js';
import type { TaskReply, TaskRequest } from './pool.js';
import { isSessionTask } from './task.js';

const port = parentPort;
if (!port) throw new Error('session-worker.js runs only as a worker thread');

port.on('message', async (request: TaskRequest) => {
  let reply: TaskReply;
  // Formats the main thread detected while walking: reading the session uses them (up) once.
  for (const entry of request.sniffed) rememberSniffed(entry);
  try {
    const module = (await import(request.module)) as Record<string, unknown>;
    const task = module[request.name];
    if (!isSessionTask(task)) throw new Error(`internal: ${request.name} in ${request.module} is not a session task`);
    reply = { id: request.id, ok: true, value: await task.run(request.input, request.options) };
  } catch (error) {
    reply = { id: request.id, ok: false, error: describeError(error) };
  }
  // What the task did not use (another --format, a session that failed first) is not kept.
  takeSniffed(request.sniffed.map((entry) => entry.path));
  port.postMessage(reply);
});
