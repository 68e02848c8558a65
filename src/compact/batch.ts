/**
 * Compacting a batch of sessions in a worker thread (the task tasks.ts registers as `compact`),
 * in steps that each touch the file system's names together: every session's lock is taken
 * (their staging files made at once: sidecar/lock.ts), each session is decided as on the main
 * thread (session.ts), then the batch's sidecars are written together (session.ts: staged,
 * committed, their fsyncs at once) and the locks released. A name made or removed can wait for
 * the journal to commit other files; made together, they wait for it about once. A session that
 * fails, or whose write fails, fails alone. Interruption is the main thread's: it stops handing
 * out batches, and the ones in flight finish.
 */
import { createStrategy } from '../strategies/index.js';
import type { LockStager, SidecarLock } from '../sidecar/lock.js';
import { createLockStager } from '../sidecar/lock.js';
import { createTempSweeper } from '../sidecar/store.js';
import type { SessionInput } from '../read/index.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import type { Settled } from '../workers/task.js';
import { sessionTask } from '../workers/task.js';
import type { CompactJob, CompactOutcome, OfflineStrategyName } from './job.js';
import type { Decided } from './session.js';
import { failedOutcome, decideCompaction, lockedOutcome, writeSidecars } from './session.js';


/**
 * A worker compacts only with an offline strategy (a summarizer's client cannot cross threads);
 * `stagingGroup`: how many sidecars it stages at once (sidecar/open-files.ts).
 */
export type CompactBatchJob = CompactJob & { readonly strategy: OfflineStrategyName; readonly stagingGroup: number };

/** Temp files of killed runs, in a worker thread (which lives for one run): each directory listed once. */
const sweepInWorker = createTempSweeper();

export const compactBatchTask = sessionTask(
  'compact',
  async (inputs: readonly SessionInput[], job: CompactBatchJob): Promise<Settled<CompactOutcome>[]> => {
    const tools = { strategy: createStrategy(job.strategy, job.strategyOptions), count: await loadTextCounter(job.tokenizer), signal: new AbortController().signal };
    const decided: Decided[] = new Array(inputs.length);
    const locks = createLockStager();
    const locked = inputs.map((input, index) => (job.dryRun ? null : takeLock(locks, input.path, index, decided, tools.signal)));
    locks.close();
    for (const [index, input] of inputs.entries()) {
      if (decided[index]) continue;
      const tookOver = locked[index]?.tookOver;
      decided[index] = await decideCompaction(input, job, tools, tookOver ? [tookOver] : []);
      // A session with nothing to write lets its lock go now; the others hold it until written.
      if (decided[index].kind === 'done') locked[index]?.release();
    }
    const outcomes = await writeSidecars(decided, job.stagingGroup);
    decided.forEach((entry, index) => {
      if (entry.kind === 'write') locked[index]?.release();
    });
    return outcomes.map((value) => ({ ok: true, value }));
  },
);

/**
 * Takes a session's sidecar lock for the batch and clears what killed runs left beside it; a
 * session another compactor holds, or one whose lock fails, is decided now (null).
 */
function takeLock(locks: LockStager, path: string, index: number, decided: Decided[], signal: AbortSignal): SidecarLock | null {
  try {
    const attempt = locks.take(path);
    if (attempt.kind === 'locked') {
      decided[index] = { kind: 'done', outcome: lockedOutcome(path, attempt) };
      return null;
    }
    sweepInWorker(path);
    return attempt.lock;
  } catch (error) {
    decided[index] = { kind: 'done', outcome: failedOutcome(path, error, signal) };
    return null;
  }
}
