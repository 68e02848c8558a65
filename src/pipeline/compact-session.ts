/**
 * Compacting one session, top to bottom: take its sidecar's lock, read it (lean, then again in
 * part: read/), plan and run the compaction (compaction/compact.ts, with the strategy), check the
 * view the new sidecar defines against the provider's rules, and save it (sidecar/store.ts).
 * Each step hands its result down to the next; nothing here returns to the command, which only
 * builds the request and the hooks (commands/compact.ts) and prints the result.
 *
 * The first read is lean (slim messages, with estimates taken while reading), which is all
 * planning needs. A session that needs no compaction (under the threshold, its sidecar up to
 * date, no cut) is done there: a re-run over an archive never holds its text. Otherwise the file
 * is read again, keeping full messages only where the compaction reads text
 * (compaction/text-reads.ts) and slim ones elsewhere. A file that cannot be read twice (stdin, a
 * named pipe) is read once, in full, and so is a small plain file (SMALL_SESSION_BYTES), whose
 * full messages cost less than a second read.
 */
import type { CompactionPlan, CompactionSubject, GuardedCompaction, Refusal, RunnableSubject } from '../compaction/compact.js';
import { planCompaction, previousFor, runGuardedCompaction, subjectView } from '../compaction/compact.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import type { CompactionState } from '../compaction/state.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import { readsTextOf, textReads } from '../compaction/text-reads.js';
import { describeError } from '../errors.js';
import { inputShape, isStdin, withHeldInput } from '../formats/input-source.js';
import { SummarizerError } from '../llm/client.js';
import type { ContextWindow } from '../pricing/window.js';
import type { LoadedSession, SessionSource } from '../read/index.js';
import { loadSession, readAgainInPart, sessionInput } from '../read/index.js';
import { formatTokens, printable } from '../report/format.js';
import type { AnyMessage, Diagnostic, Session } from '../session/model.js';
import { allFull } from '../session/model.js';
import { assertViewRules } from '../session/view-rules.js';
import type { LockAttempt } from '../sidecar/lock.js';
import { lockSidecar } from '../sidecar/lock.js';
import { truncateFallback } from '../strategies/fallback.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { LogEvent, LogFields } from './log.js';

/**
 * `locked`: another compactor process holds the session's sidecar lock; this run left it alone.
 * `no-gain`: the compaction would not shrink the context; `would-thrash`: it would leave the
 * context over the trigger. Neither writes a sidecar, and neither is a failure.
 */
export type CompactStatus = 'compacted' | 'skipped' | 'up-to-date' | 'no-gain' | 'would-thrash' | 'locked' | 'failed';

export interface CompactResult {
  readonly status: Exclude<CompactStatus, 'failed'>;
  readonly record: Record<string, unknown>;
  readonly line: string;
  /** Warnings a worker collected, printed with the result (in this thread they go out at once). */
  readonly warnings?: readonly Diagnostic[];
  /** Log events a worker collected, likewise. */
  readonly events?: readonly LogEvent[];
}

/** What one session's compaction is asked to do, as plain data. */
export interface CompactSessionRequest {
  readonly format: string;
  /** `--strict`: any warning fails the session. */
  readonly strict: boolean;
  readonly dryRun: boolean;
  readonly redact: boolean;
  /** The relevance filter on the summarized span (`--no-relevance` switches it off). */
  readonly relevance: boolean;
}

/** What the command supplies that is not plain data: the strategy, the policy's source, where results go. */
export interface CompactHooks {
  readonly strategy: CompactionStrategy;
  readonly count: TextCounter | undefined;
  readonly onError: string;
  readonly signal: AbortSignal;
  readonly warn: (warning: Diagnostic) => void;
  /** The compaction events (log.ts): written at once in this thread, collected in a worker. */
  readonly log: (event: string, fields: LogFields) => void;
  /** Sessions whose summarizer failed but which --on-error skip/truncate kept out of the failures. */
  readonly summarizerFailures: { path: string; error: string }[];
  /** The policy for a session once read, at the window it ran with (pricing/window.ts) unless the settings name one. */
  readonly policyFor: (session: Session<AnyMessage>) => Promise<{ readonly policy: CompactionPolicy; readonly window: ContextWindow }>;
  /** Why a compaction is not written, in one line (before → after tokens, and what would write it). */
  readonly refusal: (kind: Refusal, before: number, after: number | null, policy: CompactionPolicy) => string;
  /** Writes (or stages) the sidecar; returns its path. */
  readonly save: (path: string, state: CompactionState) => Promise<string>;
}

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

/** The policy for a session once it is read. */
export type PolicyFor = (session: Session<AnyMessage>) => Promise<{ readonly policy: CompactionPolicy; readonly window: ContextWindow }>;

async function planned<M extends AnyMessage>(loaded: LoadedSession<M>, strategy: CompactionStrategy, policyFor: PolicyFor) {
  const { subject, discarded } = previousFor(loaded.subject, strategy);
  const { policy, window } = await policyFor(loaded.session);
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
export function readForCompaction(source: SessionSource, options: CompactReadOptions, strategy: CompactionStrategy, policyFor: PolicyFor): Promise<CompactRead> {
  const { path, sniffed } = sessionInput(source);
  const shape = inputShape(path);
  const { plain } = shape;
  const format = options.format === 'auto' && sniffed && plain && plain.size === sniffed.size && plain.mtimeMs === sniffed.mtimeMs ? sniffed.format : options.format;
  // Both reads of a compressed file take its bytes from memory (input-source.ts).
  return withHeldInput(path, () => readHeld(source, { ...options, format }, shape, strategy, policyFor), plain !== null);
}

async function readHeld(source: SessionSource, options: CompactReadOptions, shape: ReturnType<typeof inputShape>, strategy: CompactionStrategy, policyFor: PolicyFor): Promise<CompactRead> {
  const common = { withSidecar: true, strict: options.strict, ...(options.count ? { count: options.count } : {}) };
  // After the lean read, `format` is the one it found: the file is not detected again.
  const inFull = async (format = options.format): Promise<CompactRead> => ({
    ...(await planned(await loadSession(source, { ...common, format }), strategy, policyFor)),
    read: 'full',
  });
  // A pipe (stdin, a FIFO) is read once, in full: its bytes are held, not its messages, and a
  // partial second read would keep both. So is a small plain file: its full messages cost little
  // memory, and one read and parse beat two (the second read was a third of the work per small
  // session).
  if (options.inFull) return inFull();
  if (!options.dryRun && (shape.onlyOnce || (shape.plain !== null && shape.plain.size < (options.smallFileBytes ?? SMALL_SESSION_BYTES)))) return inFull();
  const loaded = await loadSession(source, { ...common, format: options.format, messages: 'lean' });
  const lean = await planned(loaded, strategy, policyFor);
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
  const partial = await readAgainInPart(source, loaded, (index) => readsTextOf(reads, index), plan.cut.index);
  if (!partial) return inFull(format);
  return { ...lean, subject: { ...subject, messages: partial.messages, prefixHashes: partial.prefixHashes }, read: 'partial' };
}

/** The record of a session another compactor holds. */
export function lockedResult(path: string, attempt: Extract<LockAttempt, { kind: 'locked' }>): CompactResult {
  const by = attempt.holder ? `pid ${attempt.holder.pid} on ${attempt.holder.host}` : 'an unreadable lock';
  return {
    status: 'locked',
    record: { session: path, status: 'locked', lock: attempt.path, locked_by_pid: attempt.holder?.pid ?? null },
    line: `${'locked'.padEnd(10)} ${printable(path)} (another compactor is writing its sidecar: ${by})`,
  };
}

/**
 * One writer per sidecar: compactSession holding the session's lock (none for a dry run or
 * stdin, which write nothing). `sweep` clears what killed runs left beside the session.
 */
export async function compactLocked(
  source: SessionSource,
  request: CompactSessionRequest,
  hooks: CompactHooks,
  sweep: (path: string) => void,
): Promise<CompactResult> {
  const { path } = sessionInput(source);
  if (request.dryRun || isStdin(path)) return compactSession(source, request, hooks);
  const attempt = lockSidecar(path);
  if (attempt.kind === 'locked') return lockedResult(path, attempt);
  try {
    if (attempt.lock.tookOver) hooks.warn(attempt.lock.tookOver);
    sweep(path);
    return await compactSession(source, request, hooks);
  } finally {
    attempt.lock.release();
  }
}

/**
 * Reads, plans, compacts and writes one session's sidecar (the caller holds its lock). The read
 * is lean, and then, only when there is something to compact, partial: full messages where the
 * compaction reads text, slim ones elsewhere. A dry run only plans: it stops after the lean read,
 * so its memory follows the number of messages, not the size of the file. The view the new
 * sidecar defines is checked against the provider's rules before it is written. A compaction
 * that runs is logged: `compaction_start` as the strategy starts, `compaction_end` once the
 * sidecar is written (or the session skipped or failed), with the session's duration.
 */
export async function compactSession(source: SessionSource, given: CompactSessionRequest, hooks: CompactHooks): Promise<CompactResult> {
  const { path } = sessionInput(source);
  // Stdin has no place beside it for a sidecar: it is planned as a dry run (the handler says so).
  const request = isStdin(path) ? { ...given, dryRun: true } : given;
  const started = performance.now();
  const { strategy } = hooks;
  const options = { format: request.format, strict: request.strict, dryRun: request.dryRun, ...(hooks.count ? { count: hooks.count } : {}) };
  const read = await readForCompaction(source, options, strategy, hooks.policyFor);
  const { warnings, subject, discarded, plan, policy, window } = read;
  warnings.forEach((warning) => hooks.warn(warning));
  if (discarded) hooks.warn({ file: path, message: discarded });
  const base = {
    session: path,
    strategy: strategy.name,
    dry_run: request.dryRun,
    tokens_before: plan.contextTokens,
    context_window: policy.contextLimit,
    context_window_source: window.source,
  };
  if (plan.kind === 'skip') {
    const reason = plan.status === 'would-thrash' ? hooks.refusal('would-thrash', plan.contextTokens, null, policy) : plan.reason;
    return {
      status: plan.status,
      record: { ...base, status: plan.status, reason },
      line: `${plan.status.padEnd(10)} ${printable(path)} (${reason})`,
    };
  }
  const firstKept = subject.messages[plan.cut.index]!.id;
  // A lean read only plans: a dry run's (a session it would compact is read again otherwise).
  if (request.dryRun || read.read === 'lean') {
    return {
      status: 'compacted',
      record: { ...base, status: 'compacted', first_kept_message_id: firstKept, messages_summarized: plan.cut.index - plan.start },
      line: `would compact ${path}: ${plan.cut.index - plan.start} messages, keep from ${firstKept}`,
    };
  }
  const runnable = read.subject;
  const span = { session: path, messages_to_summarize: plan.cut.index - plan.start, cut_index: plan.cut.index, tokens_before: plan.contextTokens };
  hooks.log('compaction_start', { ...span, strategy: strategy.name, total_messages: subject.messages.length, has_previous: subject.previous !== null });
  const ended = (fields: LogFields) => hooks.log('compaction_end', { ...span, ...fields, duration_ms: Math.round(performance.now() - started) });
  const run = { signal: hooks.signal, redact: request.redact, relevance: request.relevance, ...(hooks.count ? { count: hooks.count } : {}) };
  let outcome: GuardedCompaction;
  let state: CompactionState;
  let written: string;
  try {
    try {
      outcome = await runGuardedCompaction(runnable, plan, strategy, policy, run);
    } catch (error) {
      // An interrupted session is abandoned, never replaced by a fallback summary; a rejected key
      // stops the batch (runBatch) rather than giving every session a fallback.
      if (hooks.signal.aborted || !(error instanceof SummarizerError) || error.stopsBatch || hooks.onError === 'fail') throw error;
      hooks.summarizerFailures.push({ path, error: describeError(error) });
      if (hooks.onError === 'skip') {
        const reason = `summarizer failed: ${describeError(error)}`;
        ended({ status: 'skipped', reason });
        return { status: 'skipped', record: { ...base, status: 'skipped', reason }, line: `skipped    ${printable(path)} (${reason})` };
      }
      outcome = await runGuardedCompaction(runnable, plan, truncateFallback(describeError(error)), policy, run);
    }
    if (outcome.kind !== 'compacted') {
      ended({ status: outcome.kind, tokens_after: outcome.tokensAfter });
      return refusedResult(path, base, outcome, hooks.refusal(outcome.kind, outcome.tokensBefore, outcome.tokensAfter, policy));
    }
    state = outcome.state;
    // The view this sidecar defines must be one the provider accepts; if not, nothing is written.
    assertViewRules(subjectView(runnable, state), 'the compacted view');
    written = await hooks.save(path, state);
  } catch (error) {
    ended({ status: 'failed', error: describeError(error) });
    throw error;
  }
  ended({
    status: 'compacted',
    strategy: state.strategy,
    fallback: state.fallback,
    first_kept_message_id: state.first_kept_message_id,
    tokens_after: state.tokens_after,
    // In UTF-8 bytes, both summaries of a split turn together.
    summary_len: Buffer.byteLength(state.summary) + Buffer.byteLength(state.turn_prefix_summary ?? ''),
    summary_tokens: state.summary_tokens,
    sidecar: written,
  });
  return {
    status: 'compacted',
    record: {
      ...base,
      status: 'compacted',
      sidecar: written,
      tokens_after: state.tokens_after,
      first_kept_message_id: state.first_kept_message_id,
      messages_summarized: state.messages_summarized,
      summary_tokens: state.summary_tokens,
      fallback: state.fallback,
      summarizer_input_tokens: state.usage?.input_tokens ?? null,
      summarizer_output_tokens: state.usage?.output_tokens ?? null,
      redacted: request.redact,
    },
    line: `compacted  ${path}: ${formatTokens(state.tokens_before)} -> ${formatTokens(state.tokens_after)} tokens, sidecar ${written}`,
  };
}

/** The record of a compaction that ran but is not written: it would not pay, or would leave the context over the trigger. */
function refusedResult(path: string, base: Record<string, unknown>, outcome: Exclude<GuardedCompaction, { kind: 'compacted' }>, reason: string): CompactResult {
  return {
    status: outcome.kind,
    record: {
      ...base,
      status: outcome.kind,
      reason,
      tokens_after: outcome.tokensAfter,
      first_kept_message_id: outcome.state.first_kept_message_id,
      // A refused summary was still paid for.
      summarizer_input_tokens: outcome.state.usage?.input_tokens ?? null,
      summarizer_output_tokens: outcome.state.usage?.output_tokens ?? null,
    },
    line: `${outcome.kind.padEnd(10)} ${printable(path)} (${reason})`,
  };
}
