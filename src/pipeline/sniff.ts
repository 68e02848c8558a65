/**
 * The sniff of the files a walk or glob found (formats/index.ts sniffWalkedFile), in chunks of
 * paths: in this thread, and also in the workers of a pool the command started as the walk
 * ended (sessions.ts earlyStart), which would otherwise wait for the sniff with nothing to do.
 * Each file's sniff comes back in its place in the walk's order, whichever thread did it, so
 * the sessions, the warnings and their order are those of a sniff in this thread alone. A chunk
 * a worker fails on (the worker died, a sniff threw), or still holds when this thread has no
 * other left, is sniffed here, where a file that throws throws in its turn.
 */
import type { WalkedFile } from '../formats/index.js';
import { sniffWalkedFile } from '../formats/index.js';
import { sessionTask } from '../workers/task.js';

/** A chunk of walked paths sniffed in a worker thread (its name is its key in tasks.ts). */
export const sniffTask = sessionTask('sniff', async (paths: readonly string[]) => paths.map(sniffWalkedFile));

/** Where chunks can be sniffed besides this thread: a pool's workers (sessions.ts). */
export interface RemoteSniff {
  /** Sniffs a chunk, its files in order; a rejection sends the chunk back to this thread. */
  readonly run: (paths: readonly string[]) => Promise<readonly WalkedFile[]>;
  /** Chunks it works on at once. */
  readonly capacity: number;
  /** Resolves when a worker can start on a chunk at once (its own modules imported). */
  readonly ready: () => Promise<void>;
}

/** One file's sniff, or what it threw (thrown again when the walk's order reaches the file). */
export type Sniffed = { readonly ok: true; readonly found: WalkedFile } | { readonly ok: false; readonly error: unknown };

/** Files sniffed here between turns of the event loop when no worker helps (a few reads a file). */
const CHUNK_ALONE = 256;
/** With workers: at most this many a chunk, and some four chunks per thread, so all end together. */
const CHUNK_SHARED = 32;
const CHUNKS_PER_THREAD = 4;

function sniffHere(path: string): Sniffed {
  try {
    return { ok: true, found: sniffWalkedFile(path) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Every path's sniff, in the order of `paths`; `remote` shares the work when given. */
export async function sniffWalked(paths: readonly string[], remote: RemoteSniff | null): Promise<Sniffed[]> {
  const sniffed: Sniffed[] = new Array<Sniffed>(paths.length);
  const threads = 1 + (remote?.capacity ?? 0);
  const size = remote ? Math.max(1, Math.min(CHUNK_SHARED, Math.ceil(paths.length / (threads * CHUNKS_PER_THREAD)))) : CHUNK_ALONE;
  let next = 0;
  /** The next chunk's [start, end), or null when every path is taken. */
  const take = (): Chunk | null => {
    if (next >= paths.length) return null;
    const start = next;
    next = Math.min(paths.length, start + size);
    return { start, end: next, done: false };
  };
  /** Chunks a worker holds and has not answered yet. */
  const away = new Set<Chunk>();
  const here = (chunk: Chunk) => {
    for (let index = chunk.start; index < chunk.end; index++) sniffed[index] = sniffHere(paths[index]!);
    chunk.done = true;
  };
  const inWorkers = async (workers: RemoteSniff) => {
    // A chunk is taken only when a worker is free to sniff it: one sent earlier would wait for
    // the worker's start-up, and this thread would sniff it again.
    await workers.ready();
    for (let chunk = take(); chunk !== null; chunk = take()) {
      away.add(chunk);
      const found = await workers.run(paths.slice(chunk.start, chunk.end)).catch(() => null);
      away.delete(chunk);
      if (chunk.done) continue;
      if (found?.length !== chunk.end - chunk.start) here(chunk);
      else found.forEach((file, offset) => (sniffed[chunk.start + offset] = { ok: true, found: file }));
      chunk.done = true;
    }
  };
  // The workers' chunks are sent first; this thread then sniffs its own while they work.
  if (remote) for (let worker = 0; worker < remote.capacity; worker++) void inWorkers(remote);
  // Once none is left to take, what the workers still hold is sniffed here too: a worker slowed
  // down (on a busy machine) never holds the walk up, and whichever thread answers first is
  // taken, the same sniff either way.
  for (let chunk = take() ?? unanswered(away); chunk !== null; chunk = take() ?? unanswered(away)) {
    here(chunk);
    // A turn of the event loop: the workers' replies come in and their next chunks go out.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return sniffed;
}

/** A chunk of the paths, [start, end); done once its sniffs are in place. */
interface Chunk {
  readonly start: number;
  readonly end: number;
  done: boolean;
}

/** A chunk a worker still holds, to be sniffed here as well once this thread has no other. */
function unanswered(away: ReadonlySet<Chunk>): Chunk | null {
  for (const chunk of away) if (!chunk.done) return chunk;
  return null;
}
