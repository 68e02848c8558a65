/**
 * Compacting one session, top to bottom, as one use case: a plain CompactJob in, a CompactOutcome
 * out. Take the sidecar's lock, read the session lean and plan it, read it again in part where the
 * compaction reads text (read.ts), run the compaction (compaction/compact.ts, with the strategy),
 * check the view the new sidecar defines against the provider's rules, and write the sidecar
 * (write.ts: the one path by which this thread and a worker's batch write). Each step hands its
 * result down to the next; nothing calls back into a command, which only builds the job and
 * prints the outcome (render.ts).
 *
 * A compaction that runs is logged as events of the outcome: `compaction_start` as the strategy
 * starts, `compaction_end` once the sidecar is written (or the session skipped or failed), with
 * the session's duration.
 */
import type { GuardedCompaction } from '../compaction/compact.js';
import { runGuardedCompaction, subjectView } from '../compaction/compact.js';
import { describeError, stopsBatch } from '../errors.js';
import { isStdin } from '../formats/json/input-source.js';
import { SummarizerError } from '../llm/client.js';
import type { LogEvent, LogFields } from '../pipeline/log.js';
import type { SessionSource } from '../read/index.js';
import { sessionInput } from '../read/index.js';
import type { Diagnostic } from '../session/model.js';
import { assertViewRules } from '../session/view-rules.js';
import type { LockAttempt } from '../sidecar/lock.js';
import { lockSidecar } from '../sidecar/lock.js';
import { sidecarPath } from '../sidecar/store.js';
import { truncateFallback } from '../strategies/fallback.js';
import type { CompactJob, CompactTools } from './job.js';
import type { CompactOutcome, Measured, OutcomeOf } from './outcome.js';
import { readForCompaction } from './read.js';
import { refusalReason } from './render.js';
import type { Decided } from './write.js';
import { writeSidecars } from './write.js';

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
        return done({ ...measured, status: 'would-thrash', reason: refusalReason('would-thrash', plan.contextTokens, null, policy), tried: null });
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
      const reason = refusalReason(outcome.kind, outcome.tokensBefore, outcome.tokensAfter, policy);
      const tried = { tokensAfter: outcome.tokensAfter, firstKeptMessageId: outcome.state.first_kept_message_id, usage: outcome.state.usage };
      return done({ ...measured, status: outcome.kind, reason, tried });
    }
    const { state } = outcome;
    // The view this sidecar defines must be one the provider accepts; if not, nothing is written.
    assertViewRules(subjectView(runnable, state), 'the compacted view');
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
