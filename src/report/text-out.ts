/**
 * Text written to stdout in pieces of about `size` characters, each written before the next is
 * taken: a view printed as its session is read (`context`) must not pile up in memory behind a
 * slow reader, and a stream's `write` to a pipe only queues. So each piece goes to stdout's file
 * descriptor synchronously, waiting while a pipe is full; gathered first, because a write (a
 * system call) for every small piece of a request body would cost more than the text.
 */
import { writeSync } from 'node:fs';

export interface TextOut {
  write(text: string): void;
  /** Writes what is still gathered. */
  close(): void;
}

/** A cell to wait on: Atomics.wait is the one plain synchronous sleep. */
const WAIT_CELL = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `text` to stdout before returning. An error goes to stdout's own error listeners
 * (the command line's: a closed pipe ends the run quietly, anything else is `cannot write output`).
 */
export function writeStdoutSync(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(1, bytes, offset);
    } catch (error) {
      // A non-blocking pipe that is full: wait a millisecond for its reader.
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
        Atomics.wait(WAIT_CELL, 0, 0, 1);
        continue;
      }
      if (process.stdout.listenerCount('error') > 0) {
        process.stdout.emit('error', error);
        return;
      }
      throw error;
    }
  }
}

export function textOut(write: (text: string) => void = writeStdoutSync, size = 1 << 16): TextOut {
  let pieces: string[] = [];
  let gathered = 0;
  const flush = () => {
    if (pieces.length === 0) return;
    write(pieces.length === 1 ? pieces[0]! : pieces.join(''));
    pieces = [];
    gathered = 0;
  };
  return {
    write(text) {
      pieces.push(text);
      gathered += text.length;
      if (gathered >= size) flush();
    },
    close: flush,
  };
}
