/**
 * A compaction's outcome (job.ts) as the command line prints it: the one text line and the
 * JSON record per session, the refusal reasons, and the tally after a batch. The record's fields
 * and their order are compact's documented JSON (docs/json.md); nothing reads them back.
 */
import type { Refusal } from '../compaction/compact.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { MIN_GAIN_PERCENT, triggerCeiling } from '../compaction/policy.js';
import { formatTokens, printable } from '../report/format.js';
import type { CompactOutcome, CompactStatus, ForkOutcome, Measured } from './job.js';

/**
 * Why a compaction was not written, for compact's and estimate's records: it would not pay, or
 * no valid cut brings the context under the trigger. `after` is null when no cut was tried.
 */
export function refusalReason(kind: Refusal, before: number, after: number | null, policy: CompactionPolicy): string {
  const sizes = after === null ? `${formatTokens(before)} tokens` : `${formatTokens(before)} -> ${formatTokens(after)} tokens`;
  if (kind === 'no-gain') return `${sizes}: the compaction would not pay, taking less than ${MIN_GAIN_PERCENT}% of the context off (--allow-no-gain writes it)`;
  return `${sizes}: no valid cut brings the context under the trigger (${formatTokens(triggerCeiling(policy) ?? 0)} tokens)`;
}

/** The fields every read session's record opens with. */
function measuredRecord(outcome: Measured): Record<string, unknown> {
  return {
    session: outcome.session,
    strategy: outcome.strategy,
    dry_run: outcome.dryRun,
    tokens_before: outcome.tokensBefore,
    context_window: outcome.contextWindow,
    context_window_source: outcome.contextWindowSource,
  };
}

/** The session's JSON record (--json); a failed session's is the frame's error record, not this. */
export function compactRecord(outcome: Exclude<CompactOutcome, { status: 'failed' }>): Record<string, unknown> {
  switch (outcome.status) {
    case 'locked':
      return { session: outcome.session, status: 'locked', lock: outcome.lock, locked_by_pid: outcome.holder?.pid ?? null };
    case 'skipped':
    case 'up-to-date':
      return { ...measuredRecord(outcome), status: outcome.status, reason: outcome.reason };
    case 'no-gain':
    case 'would-thrash':
      return {
        ...measuredRecord(outcome),
        status: outcome.status,
        reason: outcome.reason,
        ...(outcome.tried
          ? {
              tokens_after: outcome.tried.tokensAfter,
              first_kept_message_id: outcome.tried.firstKeptMessageId,
              summarizer_input_tokens: outcome.tried.usage?.input_tokens ?? null,
              summarizer_output_tokens: outcome.tried.usage?.output_tokens ?? null,
            }
          : {}),
      };
    case 'would-compact':
      return {
        ...measuredRecord(outcome),
        status: 'would-compact',
        tokens_after: outcome.tokensAfter,
        first_kept_message_id: outcome.firstKeptMessageId,
        messages_summarized: outcome.messagesSummarized,
      };
    case 'compacted': {
      const { state } = outcome;
      return {
        ...measuredRecord(outcome),
        status: 'compacted',
        sidecar: outcome.sidecar,
        tokens_after: state.tokens_after,
        first_kept_message_id: state.first_kept_message_id,
        messages_summarized: state.messages_summarized,
        summary_tokens: state.summary_tokens,
        fallback: state.fallback,
        summarizer_input_tokens: state.usage?.input_tokens ?? null,
        summarizer_output_tokens: state.usage?.output_tokens ?? null,
        redacted: outcome.redacted,
      };
    }
  }
}

/** The session's text line. */
export function compactLine(outcome: Exclude<CompactOutcome, { status: 'failed' }>): string {
  switch (outcome.status) {
    case 'locked': {
      const by = outcome.holder ? `pid ${outcome.holder.pid} on ${outcome.holder.host}` : 'an unreadable lock';
      return `${'locked'.padEnd(10)} ${printable(outcome.session)} (another compactor is writing its sidecar: ${by})`;
    }
    case 'skipped':
    case 'up-to-date':
    case 'no-gain':
    case 'would-thrash':
      return `${outcome.status.padEnd(10)} ${printable(outcome.session)} (${outcome.reason})`;
    case 'would-compact':
      return (
        `would compact ${printable(outcome.session)}: ${outcome.messagesSummarized} message${outcome.messagesSummarized === 1 ? '' : 's'}, ` +
        `${formatTokens(outcome.tokensBefore)} -> ${formatTokens(outcome.tokensAfter)} tokens + the summary, keep from ${outcome.firstKeptMessageId}`
      );
    case 'compacted':
      return `compacted  ${printable(outcome.session)}: ${formatTokens(outcome.state.tokens_before)} -> ${formatTokens(outcome.state.tokens_after)} tokens, sidecar ${printable(outcome.sidecar)}`;
  }
}

/** How a batch's outcomes count, by status (a dry run's would-compact counts as compacted: the tally says "would be compacted"). */
export type Tally = Record<Exclude<CompactStatus, 'would-compact'>, number> & { readonly summarizerInput: number; readonly summarizerOutput: number };

export function tallyOf(outcomes: readonly CompactOutcome[]): Tally {
  const tally = { compacted: 0, skipped: 0, 'up-to-date': 0, 'no-gain': 0, 'would-thrash': 0, locked: 0, failed: 0, summarizerInput: 0, summarizerOutput: 0 };
  for (const outcome of outcomes) {
    tally[outcome.status === 'would-compact' ? 'compacted' : outcome.status]++;
    const usage = outcome.status === 'compacted' ? outcome.state.usage : outcome.status === 'no-gain' || outcome.status === 'would-thrash' ? outcome.tried?.usage : null;
    tally.summarizerInput += usage?.input_tokens ?? 0;
    tally.summarizerOutput += usage?.output_tokens ?? 0;
  }
  return tally;
}

/**
 * The tally's text after a batch: each status's count, the sessions a stopped run did not get to,
 * and the summarizer's tokens if it ran. `planned`: a dry run (or stdin alone), which writes
 * nothing; a real run's tally says what it did, also when it stopped before any session was done.
 */
export function tallyText(tally: Tally, planned: boolean, notRun = 0): string {
  const verb = planned ? 'would be compacted' : 'compacted';
  let text =
    `\n${tally.compacted} ${verb}, ${tally.skipped} skipped, ${tally['up-to-date']} up-to-date, ` +
    (['no-gain', 'would-thrash', 'locked'] as const).map((status) => (tally[status] ? `${tally[status]} ${status}, ` : '')).join('') +
    `${tally.failed} failed${notRun > 0 ? `, ${notRun} not run` : ''}\n`;
  if (tally.summarizerInput + tally.summarizerOutput > 0) {
    text += `summarizer tokens: ${formatTokens(tally.summarizerInput)} input, ${formatTokens(tally.summarizerOutput)} output\n`;
  }
  return text;
}

/** A fork's JSON record: what the fork wrote, or the compaction's record when nothing was forked. */
export function forkRecord(outcome: Exclude<ForkOutcome, { status: 'failed' }>): Record<string, unknown> {
  if (outcome.status === 'not-forked') return compactRecord(outcome.compaction);
  return { ...outcome.fork };
}

/** A fork's text lines: the fork and the command that resumes it, or why there is none. */
export function forkLine(outcome: Exclude<ForkOutcome, { status: 'failed' }>): string {
  if (outcome.status === 'not-forked') {
    const { compaction } = outcome;
    const reason = 'reason' in compaction ? compaction.reason : compactLine(compaction);
    return `not forked ${printable(compaction.session)}: ${compaction.status}, nothing to fork (${reason})`;
  }
  const { fork } = outcome;
  const tokens = `${formatTokens(fork.tokens_before)} -> ${formatTokens(fork.tokens_after)} tokens`;
  if (fork.status === 'no-gain') return `not forked ${printable(fork.session)}: no-gain, ${fork.reason} (${tokens})`;
  return (
    `forked     ${printable(outcome.compaction.session)} -> ${printable(fork.fork)} (${tokens})\n` +
    `           ${fork.resume ? `resume: ${fork.resume}` : 'no agent resumes this format: send its messages with your harness'}`
  );
}
