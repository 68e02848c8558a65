/**
 * Compacting one session, top to bottom, as one use case: a plain CompactJob in, a CompactOutcome
 * out. Take the sidecar's lock; read the session lean and plan it; read it again in part where the
 * compaction reads text; run the compaction (compaction/compact.ts, with the strategy); check the
 * view the new sidecar defines against the provider's rules; and write the sidecar, by the one
 * path this thread and a worker's batch (batch.ts) both take. Each step hands a plain record down
 * to the next; nothing calls back into a command, which only builds the job and prints the
 * outcome (render.ts).
 *
 * The reads. The first is lean (slim messages, with estimates taken while reading), which is all
 * planning needs. A session that needs no compaction (under the threshold, its sidecar up to
 * date, no cut) is done there: a re-run over an archive never holds its text. Otherwise the file
 * is read again, keeping full messages only where the compaction reads text
 * (compaction/text-reads.ts) and slim ones elsewhere. A file that cannot be read twice (stdin, a
 * named pipe) is read once, in full, and so is a small plain file (SMALL_SESSION_BYTES), whose
 * full messages cost less than a second read.
 *
 * The write. The sidecars the sessions' decisions hold are staged and committed together (a
 * worker's batch: their names made and their fsyncs waited for at once, sidecar/store.ts), and
 * each decision becomes its outcome, `compacted` with the sidecar's path or `failed` with why it
 * could not be written. A sidecar that fails fails alone.
 *
 * A compaction that runs is logged as events of the outcome: `compaction_start` as the strategy
 * starts, `compaction_end` once the sidecar is written (or the session skipped or failed), with
 * the session's duration.
 */
import type { CompactionPlan, CompactionSubject, GuardedCompaction, RunnableSubject } from '../compaction/compact.js';
import { planCompaction, previousFor, runGuardedCompaction, subjectView } from '../compaction/compact.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { CompactionState } from '../compaction/state.js';
import { textReads } from '../compaction/text-reads.js';
import { triggerCeiling } from '../compaction/policy.js';
import { sessionPolicy } from '../config/policy.js';
import { describeError, stopsBatch } from '../errors.js';
import { holdInput, inputShape, isStdin } from '../formats/json/input-source.js';
import { SummarizerError } from '../llm/client.js';
import type { LogEvent, LogFields } from '../pipeline/log.js';
import type { ContextWindow } from '../pricing/window.js';
import type { LoadedSession, SessionSource } from '../read/index.js';
import { loadSession, readAgainInPart, sessionInput } from '../read/index.js';
import type { AnyMessage, Diagnostic, Session } from '../session/model.js';
import { allFull } from '../session/model.js';
import { assertViewRules } from '../session/view-rules.js';
import type { LockAttempt } from '../sidecar/lock.js';
import { lockSidecar } from '../sidecar/lock.js';
import { heldSubject, loadPrevious, sidecarReading } from '../sidecar/previous.js';
import { commitSidecars, sidecarPath, stageSidecars } from '../sidecar/store.js';
import { truncateFallback } from '../strategies/fallback.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { CompactJob, CompactOutcome, CompactTools, Measured, OutcomeOf, PolicyChoice } from './job.js';

/** The outcome of a session another compactor holds. */
export function lockedOutcome(path: string, attempt: Extract<LockAttempt, { kind: 'locked' }>): OutcomeOf<'locked'> {
  return { status: 'locked', session: path, lock: attempt.path, holder: attempt.holder, warnings: [], events: [] };
}

/** A session that failed: its error in one line, and whether the whole run stops with it. */
export function failedOutcome(path: string, error: unknown, signal: AbortSignal, carried: { warnings: readonly Diagnostic[]; events: readonly LogEvent[] } = { warnings: [], events: [] }): OutcomeOf<'failed'> {
  return { status: 'failed', session: path, error: describeError(error), stopsRun: signal.aborted || stopsBatch(error), ...carried };
}

/**
 * One writer per sidecar: the session decided and its sidecar written while holding its lock
 * (none for a dry run or stdin, which write nothing). `sweep` clears what killed runs left beside
 * the session.
 */
export async function compactSession(source: SessionSource, job: CompactJob, tools: CompactTools, sweep: (path: string) => void): Promise<CompactOutcome> {
  const { path } = sessionInput(source);
  if (job.dryRun || isStdin(path)) return (await writeSidecars([await decideCompaction(source, job, tools)]))[0]!;
  let attempt: LockAttempt;
  try {
    attempt = lockSidecar(path);
  } catch (error) {
    return failedOutcome(path, error, tools.signal);
  }
  if (attempt.kind === 'locked') return lockedOutcome(path, attempt);
  try {
    sweep(path);
    const { tookOver } = attempt.lock;
    return (await writeSidecars([await decideCompaction(source, job, tools, tookOver ? [tookOver] : [])]))[0]!;
  } finally {
    attempt.lock.release();
  }
}

/**
 * Reads, plans and compacts one session (the caller holds its lock), up to the sidecar to write.
 * The read is lean, and then, only when there is something to compact, partial: full messages
 * where the compaction reads text, slim ones elsewhere. A dry run only plans: it stops after the
 * lean read, so its memory follows the number of messages, not the size of the file. The view
 * the new sidecar defines is checked against the provider's rules before it is handed on to be
 * written.
 */
export async function decideCompaction(source: SessionSource, given: CompactJob, tools: CompactTools, carried: readonly Diagnostic[] = []): Promise<Decided> {
  const { path } = sessionInput(source);
  // Stdin has no place beside it for a sidecar: it is planned as a dry run (the command says so).
  const job = isStdin(path) ? { ...given, dryRun: true } : given;
  const started = performance.now();
  const { strategy, signal } = tools;
  // Warnings from before the read (a stale lock taken over) open the session's own.
  const warnings: Diagnostic[] = [...carried];
  const events: LogEvent[] = [];
  const log = (event: string, fields: LogFields) => events.push({ time: new Date().toISOString(), event, fields });
  const done = (outcome: CompactOutcome): Decided => ({ kind: 'done', outcome });
  let ended: ((fields: LogFields) => void) | null = null;
  try {
    const options = { format: job.format, strict: job.strict, dryRun: job.dryRun, ...(tools.count ? { count: tools.count } : {}) };
    const read = await readForCompaction(source, options, strategy, job.policy);
    const { subject, discarded, plan, policy, window } = read;
    warnings.push(...read.warnings);
    if (discarded) warnings.push({ file: path, message: discarded });
    const measured: Measured & { warnings: Diagnostic[]; events: LogEvent[] } = {
      session: path,
      strategy: strategy.name,
      dryRun: job.dryRun,
      tokensBefore: plan.contextTokens,
      contextWindow: policy.contextLimit,
      contextWindowSource: window.source,
      warnings,
      events,
    };
    if (plan.kind === 'skip') {
      if (plan.status === 'would-thrash') {
        return done({ ...measured, status: 'would-thrash', triggerCeiling: triggerCeiling(policy), tried: null });
      }
      if (plan.status === 'up-to-date') return done({ ...measured, status: 'up-to-date', reason: plan.reason });
      return done({ ...measured, status: 'skipped', reason: plan.reason, absorbed: null });
    }
    const firstKept = subject.messages[plan.cut.index]!.id;
    // A lean read only plans: a dry run's (a session it would compact is read again otherwise).
    if (job.dryRun || read.read === 'lean') {
      const tokensAfter = Math.max(0, plan.contextTokens - plan.cut.tokensToSummarize);
      return done({ ...measured, status: 'would-compact', firstKeptMessageId: firstKept, messagesSummarized: plan.cut.index - plan.start, tokensAfter });
    }
    const runnable = read.subject;
    const span = { session: path, messages_to_summarize: plan.cut.index - plan.start, cut_index: plan.cut.index, tokens_before: plan.contextTokens };
    log('compaction_start', { ...span, strategy: strategy.name, total_messages: subject.messages.length, has_previous: subject.previous !== null });
    ended = (fields: LogFields) => log('compaction_end', { ...span, ...fields, duration_ms: Math.round(performance.now() - started) });
    const run = { signal, redact: job.redact, relevance: job.relevance, ...(tools.count ? { count: tools.count } : {}) };
    let outcome: GuardedCompaction;
    let absorbed: string | null = null;
    try {
      outcome = await runGuardedCompaction(runnable, plan, strategy, policy, run);
    } catch (error) {
      // An interrupted session is abandoned, never replaced by a fallback summary; a rejected key
      // stops the batch (pipeline/batch.ts) rather than giving every session a fallback.
      if (signal.aborted || !(error instanceof SummarizerError) || error.stopsBatch || job.onError === 'fail') throw error;
      absorbed = describeError(error);
      if (job.onError === 'skip') {
        const reason = `summarizer failed: ${absorbed}`;
        ended({ status: 'skipped', reason });
        return done({ ...measured, status: 'skipped', reason, absorbed });
      }
      outcome = await runGuardedCompaction(runnable, plan, truncateFallback(absorbed), policy, run);
    }
    if (outcome.kind !== 'compacted') {
      ended({ status: outcome.kind, tokens_after: outcome.tokensAfter });
      const tried = { tokensAfter: outcome.tokensAfter, firstKeptMessageId: outcome.state.first_kept_message_id, usage: outcome.state.usage };
      return done({ ...measured, status: outcome.kind, triggerCeiling: triggerCeiling(policy), tried });
    }
    const { state } = outcome;
    // The view this sidecar defines must be one the provider accepts; if not, nothing is written.
    const view = subjectView(runnable, state);
    assertViewRules(view, 'the compacted view');
    // The read has just checked the sidecar's path under the lock (a symlink or a non-file is
    // refused there), so the write does not ask again.
    return {
      kind: 'write',
      sidecar: sidecarPath(path),
      started,
      compacted: { ...measured, status: 'compacted', sidecar: sidecarPath(path), state, redacted: job.redact, absorbed },
      end: {
        status: 'compacted',
        strategy: state.strategy,
        fallback: state.fallback,
        first_kept_message_id: state.first_kept_message_id,
        tokens_after: state.tokens_after,
        // In UTF-8 bytes, both summaries of a split turn together.
        summary_len: Buffer.byteLength(state.summary) + Buffer.byteLength(state.turn_prefix_summary ?? ''),
        summary_tokens: state.summary_tokens,
      },
      span,
    };
  } catch (error) {
    ended?.({ status: 'failed', error: describeError(error) });
    return done(failedOutcome(path, error, signal, { warnings, events }));
  }
}

// The reads.

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

/** A read planned: its sidecar (`state`, loaded before the read) held against it, and the plan. */
async function planned<M extends AnyMessage>(path: string, loaded: LoadedSession<M>, state: CompactionState | null, strategy: CompactionStrategy, options: CompactReadOptions, choice: PolicyChoice) {
  // The policy needs only the session; the sidecar is held against it after.
  const { policy, window } = await sessionPolicy(choice, loaded.session);
  const held = heldSubject(path, loaded, state, { strict: options.strict });
  const { subject, discarded } = previousFor(held.subject, strategy);
  const plan = planCompaction(subject, policy);
  return { warnings: held.warnings, subject, discarded, plan, policy, window };
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
export async function readForCompaction(source: SessionSource, options: CompactReadOptions, strategy: CompactionStrategy, policy: PolicyChoice): Promise<CompactRead> {
  const { path, sniffed } = sessionInput(source);
  const shape = inputShape(path);
  const { plain } = shape;
  // A format its first value settled goes to the read as sniffed (formats/index.ts readSessionFile says why).
  const format = options.format === 'auto' && sniffed?.seen === 'head' && plain && plain.size === sniffed.size && plain.mtimeMs === sniffed.mtimeMs ? sniffed.format : options.format;
  // Both reads of a compressed file take its bytes from memory (input-source.ts).
  const release = await holdInput(path, plain !== null);
  try {
    return await readHeld(source, { ...options, format }, shape, strategy, policy);
  } finally {
    release();
  }
}

async function readHeld(source: SessionSource, options: CompactReadOptions, shape: ReturnType<typeof inputShape>, strategy: CompactionStrategy, policy: PolicyChoice): Promise<CompactRead> {
  const { path } = sessionInput(source);
  // The sidecar is loaded once, for every read of the session below.
  const state = await loadPrevious(path);
  const common = { sidecar: sidecarReading(state), ...(options.count ? { count: options.count } : {}) };
  // After the lean read, `format` is the one it found: the file is not detected again.
  const inFull = async (format = options.format): Promise<CompactRead> => ({
    ...(await planned(path, await loadSession(source, { ...common, format }), state, strategy, options, policy)),
    read: 'full',
  });
  // A pipe (stdin, a FIFO) is read once, in full: its bytes are held, not its messages, and a
  // partial second read would keep both. So is a small plain file: its full messages cost little
  // memory, and one read and parse beat two (the second read was a third of the work per small
  // session).
  if (options.inFull) return inFull();
  if (!options.dryRun && (shape.onlyOnce || (shape.plain !== null && shape.plain.size < (options.smallFileBytes ?? SMALL_SESSION_BYTES)))) return inFull();
  const loaded = await loadSession(source, { ...common, format: options.format, messages: 'lean' });
  const lean = await planned(path, loaded, state, strategy, options, policy);
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
  // The compaction room says which messages it reads the text of; the read takes that as data.
  const partial = await readAgainInPart(source, loaded, textReads(subject, plan, strategy), plan.cut.index);
  if (!partial) return inFull(format);
  return { ...lean, subject: { ...subject, messages: partial.messages, prefixHashes: partial.prefixHashes, text: partial.text }, read: 'partial' };
}

// The write.

/** A session decided: its outcome, or a sidecar to write and the outcome it becomes once written. */
export type Decided =
  | { readonly kind: 'done'; readonly outcome: CompactOutcome }
  | {
      readonly kind: 'write';
      /** Where the sidecar goes: its path, checked by the read under the session's lock. */
      readonly sidecar: string;
      /** When the session's compaction started (performance.now()), for the end event's duration. */
      readonly started: number;
      readonly compacted: OutcomeOf<'compacted'>;
      /** The session's span and the end event's fields once written. */
      readonly span: LogFields;
      readonly end: LogFields;
    };

/**
 * Writes the sidecars of the decisions that hold one, together, `group` at a time (each staged
 * file stays open until its group commits: ulimit -n bounds them, sidecar/open-files.ts); every
 * decision's outcome, in order.
 */
export async function writeSidecars(decided: readonly Decided[], group = Number.MAX_SAFE_INTEGER): Promise<CompactOutcome[]> {
  const writes = decided.flatMap((entry) => (entry.kind === 'write' ? [{ path: entry.sidecar, state: entry.compacted.state }] : []));
  const committed: Awaited<ReturnType<typeof commitSidecars>> = [];
  for (let from = 0; from < writes.length; from += Math.max(1, group)) {
    committed.push(...(await commitSidecars(await stageSidecars(writes.slice(from, from + Math.max(1, group))))));
  }
  let next = 0;
  return decided.map((entry): CompactOutcome => {
    if (entry.kind === 'done') return entry.outcome;
    const written = committed[next++]!;
    const end = (fields: LogFields) => ({
      time: new Date().toISOString(),
      event: 'compaction_end',
      fields: { ...entry.span, ...fields, duration_ms: Math.round(performance.now() - entry.started) },
    });
    const { compacted } = entry;
    if (typeof written !== 'string') {
      const error = describeError(written);
      return { status: 'failed', session: compacted.session, error, stopsRun: false, warnings: compacted.warnings, events: [...compacted.events, end({ status: 'failed', error })] };
    }
    return { ...compacted, sidecar: written, events: [...compacted.events, end({ ...entry.end, sidecar: written })] };
  });
}
