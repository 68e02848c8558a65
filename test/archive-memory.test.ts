/**
 * The archive view's memory does not grow with the number of sessions (issue 29 item 7): the
 * batch that runs `inspect` over an archive, and the step that bills a call two sessions hold
 * once, let go of each session's result once it is emitted. Checked by what the garbage
 * collector can free mid-run (WeakRefs to each result, a full collection at the last emit), not
 * by timing or by a heap size. runBatch, which compact, replay and estimate use, still hands
 * every outcome back.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runBatch, streamBatch } from '../src/pipeline/batch.js';
import type { Outcome } from '../src/pipeline/batch.js';
import { billedOnce, callDigest } from '../src/pipeline/billed-once.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const SESSIONS = 300;
const CONCURRENCY = 4;

/** A session's result: big enough to matter, tracked by a WeakRef. */
function resultFor(refs: WeakRef<object>[], index: number) {
  const value = { index, spendKeys: [`call-${index}`], payload: new Array(256).fill(index) };
  refs[index] = new WeakRef(value);
  return value;
}

/** Results still alive after a full collection, counted on a later turn (WeakRefs hold until then). */
async function alive(refs: readonly WeakRef<object>[]): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return refs.filter((ref) => ref.deref() !== undefined).length;
}

describe('the archive view holds no per-session result', () => {
  it('streamBatch: at the last emit, only the results in flight are alive', async () => {
    const refs: WeakRef<object>[] = [];
    const sources = Array.from({ length: SESSIONS }, (_, index) => `s${index}.jsonl`);
    let live = -1;
    let emitted = 0;
    const done = await streamBatch(
      sources,
      async (path) => resultFor(refs, Number(path.slice(1, -6))),
      async () => {
        if (++emitted === SESSIONS) live = await alive(refs);
      },
      CONCURRENCY,
      new AbortController().signal,
    );
    expect(done).toBe(SESSIONS);
    // The sessions in flight at most (each runner's last), not the 300 emitted.
    expect(live).toBeLessThanOrEqual(CONCURRENCY);
  });

  it('runBatch (compact, replay, estimate) still keeps every outcome, in input order', async () => {
    const refs: WeakRef<object>[] = [];
    const sources = Array.from({ length: SESSIONS }, (_, index) => `s${index}.jsonl`);
    let live = -1;
    let emitted = 0;
    const outcomes = await runBatch(
      sources,
      async (path) => resultFor(refs, Number(path.slice(1, -6))),
      async () => {
        if (++emitted === SESSIONS) live = await alive(refs);
      },
      CONCURRENCY,
      new AbortController().signal,
    );
    expect(live).toBe(SESSIONS);
    expect(outcomes.map((outcome) => outcome.path)).toEqual(sources);
  });

  it('billedOnce keeps no outcome, and still bills a shared call in the first session', async () => {
    const refs: WeakRef<object>[] = [];
    const agains: { path: string; billedIn: Readonly<Record<string, string>> }[] = [];
    let live = -1;
    let emitted = 0;
    const paths: string[] = [];
    const emit = billedOnce<{ spendKeys: readonly string[] }>(
      async (outcome) => {
        paths.push(outcome.path);
        if (++emitted === SESSIONS + 1) live = await alive(refs);
      },
      async (path, billedIn) => {
        agains.push({ path, billedIn });
        return { spendKeys: [] };
      },
    );
    for (let index = 0; index < SESSIONS; index++) await emit({ path: `s${index}`, ok: true, value: resultFor(refs, index) } as Outcome<{ spendKeys: readonly string[] }>);
    // A fork holding its parent's call (s7's) is worked out again with it billed in s7.
    await emit({ path: 'fork', ok: true, value: { spendKeys: ['call-7', 'call-fork'] } });
    expect(agains).toEqual([{ path: 'fork', billedIn: { 'call-7': 's7' } }]);
    expect(paths).toHaveLength(SESSIONS + 1);
    expect(live).toBe(0);
  });

  it('a call digest is 4 characters and tells close keys apart', () => {
    const keys = Array.from({ length: 20_000 }, (_, index) => `msg_01${index.toString(36)}@2025-06-01T10:00:00.${String(index % 1000).padStart(3, '0')}Z`);
    const digests = new Set(keys.map(callDigest));
    expect(digests.size).toBe(keys.length);
    expect(callDigest(keys[0]!)).toHaveLength(4);
    expect(callDigest(keys[0]!)).toBe(callDigest(`${keys[0]}`));
  });
});
