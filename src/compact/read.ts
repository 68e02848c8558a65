/**
 * Reading a session for compaction, and planning it. The first read is lean (slim messages, with
 * estimates taken while reading), which is all planning needs. A session that needs no
 * compaction (under the threshold, its sidecar up to date, no cut) is done there: a re-run over
 * an archive never holds its text. Otherwise the file is read again, keeping full messages only
 * where the compaction reads text (compaction/text-reads.ts) and slim ones elsewhere. A file that
 * cannot be read twice (stdin, a named pipe) is read once, in full, and so is a small plain file
 * (SMALL_SESSION_BYTES), whose full messages cost less than a second read.
 */
import type { CompactionPlan, CompactionSubject, RunnableSubject } from '../compaction/compact.js';
import { planCompaction, previousFor } from '../compaction/compact.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import { textReads } from '../compaction/text-reads.js';
import { policyFor } from '../config/policy.js';
import { inputShape, withHeldInput } from '../formats/json/input-source.js';
import type { ContextWindow } from '../pricing/window.js';
import { sessionWindow } from '../pricing/window.js';
import type { LoadedSession, SessionSource } from '../read/index.js';
import { loadSession, readAgainInPart, sessionInput } from '../read/index.js';
import type { AnyMessage, Diagnostic, Session } from '../session/model.js';
import { allFull } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { PolicyChoice } from './job.js';

export interface CompactReadOptions {
  readonly format: string;
  readonly strict: boolean;
  readonly count?: TextCounter;
  /** Only plans: the lean read is all it needs. */
  readonly dryRun: boolean;
  /** Read in full at once, as compact did before the two reads (tests compare the two). */
  readonly inFull?: boolean;
  /** A plain file smaller than this is read once, in full (default SMALL_SESSION_BYTES; 0: never, as tests of the two reads ask). */
  readonly smallFileBytes?: number;
}

interface ReadAndPlanned {
  /**
   * The warnings of the read that stands for the session (the lean one, or the full read that
   * replaced it). Not the lean read itself: its messages are let go once read again.
   */
  readonly warnings: readonly Diagnostic[];
  /** Why a previous state was set aside (previousFor), or null. */
  readonly discarded: string | null;
  readonly plan: CompactionPlan;
  /** The policy the plan followed, and the window it was taken at. */
  readonly policy: CompactionPolicy;
  readonly window: ContextWindow;
}

/**
 * A session read and planned. `lean`: slim messages only, enough to plan (a dry run, or a
 * session with nothing to compact); `partial`: full where the compaction reads text; `full`: all
 * full. Only the last two can be compacted: their subject is runnable.
 */
export type CompactRead = ReadAndPlanned &
  (
    | { readonly read: 'lean'; readonly subject: CompactionSubject<AnyMessage> }
    | { readonly read: 'partial' | 'full'; readonly subject: RunnableSubject }
  );

/** The policy for a session once it is read, and the window it was taken at. */
async function policyOf(session: Session<AnyMessage>, choice: PolicyChoice): Promise<{ readonly policy: CompactionPolicy; readonly window: ContextWindow }> {
  if (choice.kind === 'fixed') return { policy: choice.policy, window: choice.window };
  const window = await sessionWindow(session, { flag: choice.values.context_limit ?? undefined });
  return { policy: policyFor(choice.values, window.tokens), window };
}

async function planned<M extends AnyMessage>(loaded: LoadedSession<M>, strategy: CompactionStrategy, choice: PolicyChoice) {
  const { subject, discarded } = previousFor(loaded.subject, strategy);
  const { policy, window } = await policyOf(loaded.session, choice);
  const plan = planCompaction(subject, policy);
  return { warnings: loaded.warnings, subject, discarded, plan, policy, window };
}

/**
 * A plain session file smaller than this is read once, in full, when it may be compacted: its
 * messages take a few times its size in memory, which a worker holding two batches of small
 * sessions can spare; above it the lean read keeps memory to the number of messages.
 */
export const SMALL_SESSION_BYTES = 256 << 10;

/**
 * Reads a session for `compact`: lean, planned, then again in part when it is to be compacted (a
 * small file: once, in full). One `stat` of the file says what it is (inputShape) for all that
 * follows: whether it can be read twice, its size, the hold, and whether the format its walk
 * sniffed still holds (the size and mtime the sniff saw), so the read does not detect it again.
 */
export function readForCompaction(source: SessionSource, options: CompactReadOptions, strategy: CompactionStrategy, policy: PolicyChoice): Promise<CompactRead> {
  const { path, sniffed } = sessionInput(source);
  const shape = inputShape(path);
  const { plain } = shape;
  const format = options.format === 'auto' && sniffed && plain && plain.size === sniffed.size && plain.mtimeMs === sniffed.mtimeMs ? sniffed.format : options.format;
  // Both reads of a compressed file take its bytes from memory (input-source.ts).
  return withHeldInput(path, () => readHeld(source, { ...options, format }, shape, strategy, policy), plain !== null);
}

async function readHeld(source: SessionSource, options: CompactReadOptions, shape: ReturnType<typeof inputShape>, strategy: CompactionStrategy, policy: PolicyChoice): Promise<CompactRead> {
  const common = { withSidecar: true, strict: options.strict, ...(options.count ? { count: options.count } : {}) };
  // After the lean read, `format` is the one it found: the file is not detected again.
  const inFull = async (format = options.format): Promise<CompactRead> => ({
    ...(await planned(await loadSession(source, { ...common, format }), strategy, policy)),
    read: 'full',
  });
  // A pipe (stdin, a FIFO) is read once, in full: its bytes are held, not its messages, and a
  // partial second read would keep both. So is a small plain file: its full messages cost little
  // memory, and one read and parse beat two (the second read was a third of the work per small
  // session).
  if (options.inFull) return inFull();
  if (!options.dryRun && (shape.onlyOnce || (shape.plain !== null && shape.plain.size < (options.smallFileBytes ?? SMALL_SESSION_BYTES)))) return inFull();
  const loaded = await loadSession(source, { ...common, format: options.format, messages: 'lean' });
  const lean = await planned(loaded, strategy, policy);
  const { subject, plan } = lean;
  const { format } = loaded;
  if (options.dryRun || plan.kind === 'skip') return { ...lean, read: 'lean' };
  // A lean read redone in full (a reader that does not take the keep hook, or renamed messages
  // after it) already gave full messages.
  const { messages } = subject;
  if (allFull(messages)) return { ...lean, subject: { ...subject, messages }, read: 'full' };
  // The second read keeps and hashes by position, in the order the reader hands messages over:
  // a reader that left messages out or moved them (a Claude Code branch) is read in full.
  if (!loaded.leanInOrder) return inFull(format);
  const reads = textReads(subject, plan, strategy);
  const partial = await readAgainInPart(source, loaded, reads, plan.cut.index);
  if (!partial) return inFull(format);
  return { ...lean, subject: { ...subject, messages: partial.messages, prefixHashes: partial.prefixHashes, text: partial.text }, read: 'partial' };
}
