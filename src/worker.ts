/**
 * The worker thread's entry point, the other side of workers/pool.ts: finds the task a request
 * names in the registry (tasks.ts), runs it on one session (or a batch task on several), and
 * posts back the result or the error as the one line the CLI would print.
 */
import { parentPort } from 'node:worker_threads';
import { describeError } from './errors.js';
import { rememberSniffed, takeSniffed } from './formats/sniffed.js';
import { sessionTaskNamed } from './tasks.js';
import type { TaskReply, TaskRequest } from './workers/pool.js';

const port = parentPort;
if (!port) throw new Error('worker.js runs only as a worker thread');

port.on('message', async (request: TaskRequest) => {
  let reply: TaskReply;
  // Formats the main thread detected while walking: reading the session uses them (up) once.
  for (const entry of request.sniffed) rememberSniffed(entry);
  try {
    const task = await sessionTaskNamed(request.name);
    reply = { id: request.id, ok: true, value: await task.run(request.input, request.options) };
  } catch (error) {
    reply = { id: request.id, ok: false, error: describeError(error) };
  }
  // What the task did not use (another --format, a session that failed first) is not kept.
  takeSniffed(request.sniffed.map((entry) => entry.path));
  port.postMessage(reply);
});
