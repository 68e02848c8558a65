/**
 * Where a pool's workers optimize their hot code: on V8's helper threads only while a core is
 * left for them (workers/pool.ts compilingFlag). V8 reads the flag as an isolate starts, so the
 * pool must set it before its first worker, and set it back for a pool that leaves a core free.
 * The machine is given four cores, so both cases run on any machine (one core has no spare).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const events: string[] = [];
const CORES = 4;

vi.mock('node:os', async (original) => ({ ...(await original<typeof import('node:os')>()), availableParallelism: () => CORES }));

vi.mock('../src/lazy-builtins.js', async (original) => {
  const actual = await original<typeof import('../src/lazy-builtins.js')>();
  class FakeWorker {
    constructor() {
      events.push('spawn');
    }
    on() {}
    postMessage() {}
    ref() {}
    unref() {}
    terminate() {
      return Promise.resolve(0);
    }
  }
  return {
    ...actual,
    lazyV8: () => ({ setFlagsFromString: (flag: string) => events.push(flag) }),
    lazyWorkerThreads: () => ({ Worker: FakeWorker }),
  };
});

const { WorkerPool, compilingFlag } = await import('../src/workers/pool.js');

afterEach(() => {
  events.length = 0;
});

describe('compilingFlag', () => {
  it('compiles in place once the workers take every core, on helper threads while one is free', () => {
    expect(compilingFlag(2, 2)).toBe('--no-concurrent-recompilation');
    expect(compilingFlag(3, 2)).toBe('--no-concurrent-recompilation');
    expect(compilingFlag(1, 2)).toBe('--concurrent-recompilation');
    expect(compilingFlag(4, 8)).toBe('--concurrent-recompilation');
  });
});

describe('WorkerPool', () => {
  it('sets where its workers compile before it spawns the first of them', async () => {
    const full = new WorkerPool(CORES);
    expect(events.slice(0, events.indexOf('spawn'))).toContain('--no-concurrent-recompilation');
    expect(events.filter((event) => event === 'spawn')).toHaveLength(CORES);
    await full.close();
    events.length = 0;
    // A later pool that leaves a core free gets the helper threads back (the flag is the process's).
    const spare = new WorkerPool(CORES - 1);
    expect(events.slice(0, events.indexOf('spawn'))).toContain('--concurrent-recompilation');
    expect(events.filter((event) => event === 'spawn')).toHaveLength(CORES - 1);
    await spare.close();
  });
});
