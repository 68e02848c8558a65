/**
 * The worker thread's entry point, the other side of workers/pool.ts: finds the task a request
 * names in the registry (tasks.ts), runs it on one session (or a batch task on several), and
 * posts back the result or the error as the one line the CLI would print.
 */
import { parentPort } from 'node:worker_threads';
import { describeError } from './errors.js';
import { sessionTaskNamed } from './tasks.js';
import type { PartReply, PreloadRequest, TaskReply, TaskRequest } from './workers/pool.js';

const port = parentPort;
if (!port) throw new Error('worker.js runs only as a worker thread');

port.on('message', async (request: TaskRequest | PreloadRequest) => {
  if ('preload' in request) {
    // A failure here is the first task's to report.
    await sessionTaskNamed(request.preload).catch(() => {});
    return;
  }
  let reply: TaskReply;
  try {
    const task = await sessionTaskNamed(request.name);
    // Each part goes as it is made, before the result (workers/task.ts PartSink).
    const part = (value: unknown) => port.postMessage({ id: request.id, part: value } satisfies PartReply);
    reply = { id: request.id, ok: true, value: await task.run(request.input, request.options, part) };
  } catch (error) {
    reply = { id: request.id, ok: false, error: describeError(error) };
  }
  port.postMessage(reply, reply.ok ? movedBytes(reply.value) : []);
});

/**
 * The buffers of the bytes a task's result holds at its top (a long record's JSON in pieces:
 * pipeline/output.ts printedJson): moved to the main thread, not copied. Only a buffer the bytes
 * fill alone (a pooled Buffer's is shared).
 */
function movedBytes(value: unknown): ArrayBuffer[] {
  if (typeof value !== 'object' || value === null) return [];
  const moved: ArrayBuffer[] = [];
  for (const field of Object.values(value)) {
    if (!Array.isArray(field)) continue;
    for (const piece of field) {
      if (piece instanceof Uint8Array && piece.buffer instanceof ArrayBuffer && piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength) moved.push(piece.buffer);
    }
  }
  return moved;
}
