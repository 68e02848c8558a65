/**
 * Forking a session, as one use case: the session refused first if its agent could not continue
 * it (no file at all then), compacted as `compact` does (session.ts: the sidecar written or
 * reused), then a new session file written in its own format that its agent resumes with the
 * compaction applied (fork/). A session with nothing to compact, or whose fork would not make
 * the agent's request smaller (`no-gain`), is not forked.
 */
import { readSession } from '../formats/index.js';
import { forkSession, refusedFork } from '../fork/index.js';
import { unresumableReason } from '../fork/source.js';
import type { SessionSource } from '../read/index.js';
import { sessionInput } from '../read/index.js';
import type { CompactJob, CompactTools, ForkOutcome } from './job.js';
import { compactSession, failedOutcome } from './session.js';

/** Where the fork goes and when it is made. */
export interface ForkPlace {
  /** Write the fork here instead of where the agent looks for it. */
  readonly outDir?: string;
  /** The fork's creation time; default: now. */
  readonly now?: Date;
  /** Write a fork that would not make the agent's request smaller (`--allow-no-gain`). */
  readonly allowNoGain?: boolean;
}


export async function forkCompacted(source: SessionSource, job: CompactJob, tools: CompactTools, sweep: (path: string) => void, place: ForkPlace = {}): Promise<ForkOutcome> {
  const { path } = sessionInput(source);
  try {
    // Refused before compacting: a session the agent cannot continue gets no file at all.
    const session = await readSession(path, job.format);
    const unforkable = refusedFork(session) ?? unresumableReason(session);
    if (unforkable) throw unforkable;
  } catch (error) {
    return failedOutcome(path, error, tools.signal);
  }
  const compaction = await compactSession(path, { ...job, dryRun: false }, tools, sweep);
  const { warnings, events } = compaction;
  if (compaction.status === 'failed') return compaction;
  if (compaction.status !== 'compacted' && compaction.status !== 'up-to-date') return { status: 'not-forked', compaction, warnings, events };
  try {
    const fork = await forkSession(path, { format: job.format, strict: job.strict, ...place });
    if (fork.status === 'no-gain') return { status: 'no-gain', fork, compaction, warnings, events };
    return { status: 'forked', fork, compaction, warnings, events };
  } catch (error) {
    return failedOutcome(path, error, tools.signal, { warnings, events });
  }
}
