/**
 * How `compact` reads a session: lean first, then in full only what the compaction reads.
 *
 * The first read is lean (slim messages, with estimates taken while reading, pipeline/load.ts),
 * which is all planning needs. A session that needs no compaction (under the threshold, its
 * sidecar up to date, no cut) is done there: a re-run over an archive never holds its text. Otherwise the file is read again, keeping full
 * messages only where the compaction reads text (compaction/text-reads.ts) and slim ones
 * elsewhere. A file that cannot be read twice (stdin, a named pipe) is read once, in full. The caller
 * compacts and writes what this returns.
 */
import type { CompactionPlan, CompactionSubject } from '../compaction/compact.js';
import { planCompaction, previousFor } from '../compaction/compact.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { readableOnlyOnce, withHeldInput } from '../formats/input-source.js';
import { readsTextOf, textReads } from '../compaction/text-reads.js';
import type { Diagnostic, Session } from '../session/model.js';
import { isSlim } from '../session/slim.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { LoadedSession } from './load.js';
import { loadSession, rereadInPart } from './load.js';

export interface CompactReadOptions {
  readonly format: string;
  readonly strict: boolean;
  readonly count?: TextCounter;
  /** Only plans: the lean read is all it needs. */
  readonly dryRun: boolean;
  /** Read in full at once, as compact did before the two reads (tests compare the two). */
  readonly inFull?: boolean;
}

export interface CompactRead {
  /**
   * The warnings of the read that stands for the session (the lean one, or the full read that
   * replaced it). Not the lean read itself: its messages are let go once read again.
   */
  readonly warnings: readonly Diagnostic[];
  /** The subject to compact, with the previous state `strategy` can build on. */
  readonly subject: CompactionSubject;
  /** Why a previous state was set aside (previousFor), or null. */
  readonly discarded: string | null;
  readonly plan: CompactionPlan;
  /** The policy the plan followed (policyFor the session read). */
  readonly policy: CompactionPolicy;
  /** `lean`: slim messages only; `partial`: full where the compaction reads text; `full`: all full. */
  readonly read: 'lean' | 'partial' | 'full';
}

/** The policy for a session once it is read: its window is the one the session ran with (pricing/window.ts). */
export type PolicyFor = (session: Session) => CompactionPolicy | Promise<CompactionPolicy>;

async function planned(
  loaded: LoadedSession,
  strategy: CompactionStrategy,
  policyFor: PolicyFor,
  read: CompactRead['read'],
): Promise<CompactRead & { readonly leanInOrder: boolean; readonly format: string }> {
  const { subject, discarded } = previousFor(loaded.subject, strategy);
  const policy = await policyFor(loaded.session);
  const plan = planCompaction(subject, policy);
  return { warnings: loaded.warnings, subject, discarded, plan, policy, read, leanInOrder: loaded.leanInOrder, format: loaded.session.format };
}

export function readForCompaction(
  path: string,
  options: CompactReadOptions,
  strategy: CompactionStrategy,
  policyFor: PolicyFor,
): Promise<CompactRead> {
  // Both reads of a compressed file take its bytes from memory (input-source.ts).
  return withHeldInput(path, () => readHeld(path, options, strategy, policyFor));
}

async function readHeld(
  path: string,
  options: CompactReadOptions,
  strategy: CompactionStrategy,
  policyFor: PolicyFor,
): Promise<CompactRead> {
  // After the lean read, `format` is the one it found: the file is not detected again.
  const load = (messages: 'full' | 'lean', format = options.format) =>
    loadSession(path, {
      format,
      withSidecar: true,
      strict: options.strict,
      messages,
      ...(options.count ? { count: options.count } : {}),
    });
  const inFull = async (format?: string) => planned(await load('full', format), strategy, policyFor, 'full');
  // A pipe (stdin, a FIFO) is read once, in full: its bytes are held, not its messages, and a
  // partial second read would keep both. readableOnlyOnce is one synchronous stat (the thread
  // pool's round trip made 10,000 small sessions measurably slower).
  if (options.inFull || (!options.dryRun && readableOnlyOnce(path))) return inFull();
  const lean = await planned(await load('lean'), strategy, policyFor, 'lean');
  const { subject, plan, leanInOrder, format } = lean;
  // A previous prune's savings are sized from the pruned messages' text (prune.ts pruningSavings),
  // which even the plan's context needs: such a session is read in full, as before.
  if (!options.dryRun && (subject.previous?.state.pruned_outputs?.length ?? 0) > 0) return inFull(format);
  if (options.dryRun || plan.kind === 'skip') return lean;
  const reads = textReads(subject, plan, strategy);
  const { messages } = subject;
  // A lean read redone in full (a reader that does not take the keep hook, or renamed messages
  // after it) already gave full messages.
  if (!messages.some((message, index) => isSlim(message) && readsTextOf(reads, index))) return { ...lean, read: 'full' };
  // The second read keeps and hashes by position, in the order the reader hands messages over:
  // a reader that left messages out or moved them (a Claude Code branch) is read in full.
  if (!leanInOrder) return inFull(format);
  const partial = await rereadInPart(path, format, messages, (index) => readsTextOf(reads, index), plan.cut.index);
  if (!partial) return inFull(format);
  return { ...lean, subject: { ...subject, messages: partial }, read: 'partial' };
}
