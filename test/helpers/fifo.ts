/**
 * Named pipes as sessions, to hold a compactor still in the middle of a session without timing
 * anything: it blocks reading the pipe until the test writes the session into it.
 */
import { execa } from 'execa';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export async function makeFifo(path: string): Promise<void> {
  await execa('mkfifo', [path]);
}

/**
 * Waits until some process has the pipe open for reading (opening the write end without
 * blocking fails with ENXIO until then), and returns the write end. From here the reader is
 * inside that session, waiting for its content.
 */
export async function waitForReader(path: string, attempts = 3_000): Promise<number> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
      await sleep(10);
    }
  }
  throw new Error(`nobody opened ${path} for reading`);
}

/** Writes the session into the pipe and closes it, so the reader sees the whole file and its end. */
export function feed(fd: number, content: string): void {
  writeSync(fd, content);
  closeSync(fd);
}

/**
 * feed for content larger than the pipe holds (64 KB): the write end does not block, so the rest
 * is written as the reader drains the pipe.
 */
export async function feedAll(fd: number, content: string | Buffer): Promise<void> {
  const bytes = Buffer.from(content);
  for (let offset = 0; offset < bytes.length; ) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await sleep(5);
    }
  }
  closeSync(fd);
}
