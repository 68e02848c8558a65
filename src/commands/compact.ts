/**
 * `compactor compact`: writes a sidecar beside each session that needs one. Sessions are only
 * read; sidecars are written atomically. With an offline strategy (truncate, extract, prune), big
 * runs go to worker threads in batches of sessions (sessions.ts): the worker takes each session's
 * sidecar lock, compacts it and stages its sidecar, then commits the batch's sidecars together
 * (store.ts) and releases the locks; this thread guards those locks so an exit releases them.
 * The summarizer, with its live client, runs here, one session at a time under its lock.
 */
import type { CommandModule } from 'yargs';
import type { GuardedCompaction } from '../compaction/compact.js';
import { runGuardedCompaction, subjectView } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { describeError } from '../errors.js';
import { SummarizerError } from '../llm/client.js';
import { formatTokens } from '../report/format.js';
import { shouldRedact } from '../compaction/redact.js';
import { isStdin } from '../formats/input-source.js';
import type { LockAttempt, SidecarLock } from '../sidecar/lock.js';
import { createLockStager, guardLocksOnExit, lockSidecar } from '../sidecar/lock.js';
import type { StagedSidecar } from '../sidecar/store.js';
import { commitSidecars, createTempSweeper, saveSidecar, stageSidecarInBackground } from '../sidecar/store.js';
import type { Diagnostic, Session } from '../session/model.js';
import { assertViewRules } from '../session/view-rules.js';
import type { StrategyName, StrategyOptions } from '../strategies/index.js';
import { createStrategy } from '../strategies/index.js';
import { truncateFallback } from '../strategies/fallback.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { TextCounter } from '../tokens/estimate.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import type { Settled } from '../workers/task.js';
import { sessionTask } from '../workers/task.js';
import { runBatch } from '../pipeline/batch.js';
import { readForCompaction } from '../pipeline/compact-read.js';
import { interruption, stopAtOnceOnSignal } from '../pipeline/interrupt.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { jobsFromArgs, refusalReason, runSettings, strategyOptionsFromArgs, withAllowNoGain, withInputs, withPolicy, settingFlag } from './options.js';
import type { PolicyValues } from '../config/policy.js';
import { policyFor } from '../config/policy.js';
import type { SettingArgs } from '../config/settings.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import type { ContextWindow } from '../pricing/window.js';
import { sessionWindow } from '../pricing/window.js';
import type { LogEvent, LogFields, LogFormat } from '../pipeline/log.js';
import { configureLog, LOG_FORMATS, logEvent, logMessage, writeEvent } from '../pipeline/log.js';
import { locatedError } from '../pipeline/output.js';
import type { ReadTaskOptions } from '../pipeline/sessions.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { runSessionBatches } from '../pipeline/sessions.js';
import type { SummarizerArgs } from './summarizer.js';
import { summarizeOptions, withSummarizer } from './summarizer.js';
import { resolveSummarizer } from '../config/summarizer.js';

/**
 * `locked`: another compactor process holds the session's sidecar lock; this run left it alone.
 * `no-gain`: the compaction would not shrink the context; `would-thrash`: it would leave the
 * context over the trigger. Neither writes a sidecar, and neither is a failure.
 */
export type CompactStatus = 'compacted' | 'skipped' | 'up-to-date' | 'no-gain' | 'would-thrash' | 'locked' | 'failed';

export type CompactArgs = CommonArgs &
  PolicyArgs &
  SummarizerArgs &
  SettingArgs<'allow_no_gain' | 'strategy', 'compact'> & {
    'log-format': LogFormat;
    'dry-run': boolean;
    redact?: boolean;
  };

export interface CompactResult {
  readonly status: Exclude<CompactStatus, 'failed'>;
  readonly record: Record<string, unknown>;
  readonly line: string;
  /** Warnings a worker collected, printed with the result (in this thread they go out at once). */
  readonly warnings?: readonly Diagnostic[];
  /** Log events a worker collected, likewise. */
  readonly events?: readonly LogEvent[];
}

/**
 * What one session's compaction is asked to do: plain data, built once from the flags and the
 * settings and used as it is on this thread and as a worker's payload (it crosses by structured clone).
 */
export interface CompactRequest extends ReadTaskOptions {
  /** The policy settings by the table's names; the window is each session's own (pricing/window.ts) unless --context-limit. */
  readonly policy: PolicyValues;
  readonly dryRun: boolean;
  readonly redact: boolean;
  readonly strategy: StrategyName;
  readonly strategyOptions: StrategyOptions;
}

/** What cannot cross threads: the strategy and counter built from the request, and where results go. */
interface CompactHooks {
  readonly strategy: CompactionStrategy;
  readonly count: TextCounter | undefined;
  readonly onError: string;
  readonly signal: AbortSignal;
  readonly warn: (warning: Diagnostic) => void;
  /** The compaction events (log.ts): written at once in this thread, collected in a worker. */
  readonly log: (event: string, fields: LogFields) => void;
  /** Sessions whose summarizer failed but which --on-error skip/truncate kept out of the failures. */
  readonly summarizerFailures: { path: string; error: string }[];
  /** Writes (or stages) the sidecar; returns its path. */
  readonly save: (path: string, state: CompactionState) => Promise<string>;
}

/**
 * Reads, plans, compacts and writes one session's sidecar (the caller holds its lock). The read
 * is lean, and then, only when there is something to compact, partial: full messages where the
 * compaction reads text, slim ones elsewhere (compact-read.ts). A dry run only plans: it stops
 * after the lean read, so its memory follows the number of messages, not the size of the file.
 * The view the new sidecar defines is checked against the provider's rules before it is written.
 * A compaction that runs is logged: `compaction_start` as the strategy starts, `compaction_end`
 * once the sidecar is written (or the session skipped or failed), with the session's duration.
 */
async function compactOne(path: string, given: CompactRequest, hooks: CompactHooks): Promise<CompactResult> {
  // Stdin has no place beside it for a sidecar: it is planned as a dry run (the handler says so).
  const request = isStdin(path) ? { ...given, dryRun: true } : given;
  const started = performance.now();
  const { strategy } = hooks;
  const options = { format: request.format, strict: request.strict, dryRun: request.dryRun, ...(hooks.count ? { count: hooks.count } : {}) };
  // The window is known once the session is read; the record says where it came from.
  const resolved: { window?: ContextWindow } = {};
  const sessionPolicy = async (session: Session) => {
    resolved.window = await sessionWindow(session, { flag: request.policy.context_limit ?? undefined });
    return policyFor(request.policy, resolved.window.tokens);
  };
  const { warnings, subject, discarded, plan, policy } = await readForCompaction(path, options, strategy, sessionPolicy);
  warnings.forEach((warning) => hooks.warn(warning));
  if (discarded) hooks.warn({ file: path, message: discarded });
  const base = {
    session: path,
    strategy: strategy.name,
    dry_run: request.dryRun,
    tokens_before: plan.contextTokens,
    context_window: policy.contextLimit,
    context_window_source: resolved.window?.source ?? null,
  };
  if (plan.kind === 'skip') {
    const reason = plan.status === 'would-thrash' ? refusalReason('would-thrash', plan.contextTokens, null, policy) : plan.reason;
    return {
      status: plan.status,
      record: { ...base, status: plan.status, reason },
      line: `${plan.status.padEnd(10)} ${path} (${reason})`,
    };
  }
  const firstKept = subject.messages[plan.cut.index]!.id;
  if (request.dryRun) {
    return {
      status: 'compacted',
      record: { ...base, status: 'compacted', first_kept_message_id: firstKept, messages_summarized: plan.cut.index - plan.start },
      line: `would compact ${path}: ${plan.cut.index - plan.start} messages, keep from ${firstKept}`,
    };
  }
  const span = { session: path, messages_to_summarize: plan.cut.index - plan.start, cut_index: plan.cut.index, tokens_before: plan.contextTokens };
  hooks.log('compaction_start', { ...span, strategy: strategy.name, total_messages: subject.messages.length, has_previous: subject.previous !== null });
  const ended = (fields: LogFields) => hooks.log('compaction_end', { ...span, ...fields, duration_ms: Math.round(performance.now() - started) });
  const run = { signal: hooks.signal, redact: request.redact, ...(hooks.count ? { count: hooks.count } : {}) };
  let outcome: GuardedCompaction;
  let state: CompactionState;
  let written: string;
  try {
    try {
      outcome = await runGuardedCompaction(subject, plan, strategy, policy, run);
    } catch (error) {
      // An interrupted session is abandoned, never replaced by a fallback summary; a rejected key
      // stops the batch (runBatch) rather than giving every session a fallback.
      if (hooks.signal.aborted || !(error instanceof SummarizerError) || error.stopsBatch || hooks.onError === 'fail') throw error;
      hooks.summarizerFailures.push({ path, error: describeError(error) });
      if (hooks.onError === 'skip') {
        const reason = `summarizer failed: ${describeError(error)}`;
        ended({ status: 'skipped', reason });
        return { status: 'skipped', record: { ...base, status: 'skipped', reason }, line: `skipped    ${path} (${reason})` };
      }
      outcome = await runGuardedCompaction(subject, plan, truncateFallback(describeError(error)), policy, run);
    }
    if (outcome.kind !== 'compacted') {
      ended({ status: outcome.kind, tokens_after: outcome.tokensAfter });
      return refusedResult(path, base, outcome, policy);
    }
    state = outcome.state;
    // The view this sidecar defines must be one the provider accepts; if not, nothing is written.
    assertViewRules(subjectView(subject, state), 'the compacted view');
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
function refusedResult(
  path: string,
  base: Record<string, unknown>,
  outcome: Exclude<GuardedCompaction, { kind: 'compacted' }>,
  policy: CompactionPolicy,
): CompactResult {
  const reason = refusalReason(outcome.kind, outcome.tokensBefore, outcome.tokensAfter, policy);
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
    line: `${outcome.kind.padEnd(10)} ${path} (${reason})`,
  };
}

/** Offline strategies: no client, so they can run in a worker. */
type OfflineStrategyName = Exclude<StrategyName, 'summarize'>;

function isOffline(name: StrategyName): name is OfflineStrategyName {
  return name !== 'summarize';
}

/** A worker compacts only with an offline strategy (a summarizer's client cannot cross threads). */
type CompactTaskRequest = CompactRequest & { readonly strategy: OfflineStrategyName };

/** The record of a session another compactor holds. */
function lockedResult(path: string, attempt: Extract<LockAttempt, { kind: 'locked' }>): CompactResult {
  const by = attempt.holder ? `pid ${attempt.holder.pid} on ${attempt.holder.host}` : 'an unreadable lock';
  return {
    status: 'locked',
    record: { session: path, status: 'locked', lock: attempt.path, locked_by_pid: attempt.holder?.pid ?? null },
    line: `${'locked'.padEnd(10)} ${path} (another compactor is writing its sidecar: ${by})`,
  };
}

/** Temp files of killed runs, in a worker thread (which lives for one run): each directory listed once. */
const sweepInWorker = createTempSweeper();

/**
 * compactOne over a batch of sessions in a worker thread: each session is locked, compacted and
 * its sidecar staged; then the batch's sidecars are committed together (their fsyncs at once)
 * and the locks released. A session that fails, or whose commit fails, fails alone.
 * Interruption is the main thread's: it stops handing out batches, and the ones in flight finish.
 */
export const compactBatchTask = sessionTask(
  'compact',
  async (paths: readonly string[], request: CompactTaskRequest): Promise<Settled<CompactResult>[]> => {
    const strategy = createStrategy(request.strategy, request.strategyOptions);
    const count = await loadTextCounter(request.tokenizer);
    const results: Settled<CompactResult>[] = [];
    const toCommit: { index: number; staged: Promise<StagedSidecar>; lock: SidecarLock | null }[] = [];
    const locks = createLockStager();
    for (const path of paths) {
      let lock: SidecarLock | null = null;
      let staged: Promise<StagedSidecar> | null = null;
      const warnings: Diagnostic[] = [];
      const events: LogEvent[] = [];
      try {
        if (!request.dryRun) {
          const attempt = locks.take(path);
          if (attempt.kind === 'locked') {
            results.push({ ok: true, value: lockedResult(path, attempt) });
            continue;
          }
          lock = attempt.lock;
          sweepInWorker(path);
        }
        const result = await compactOne(path, request, {
          strategy,
          count,
          onError: 'fail',
          signal: new AbortController().signal,
          warn: (warning) => warnings.push(warning),
          log: (event, fields) => events.push({ time: new Date().toISOString(), event, fields }),
          summarizerFailures: [],
          // Staged in the background: this thread compacts the next session while the temp file is made.
          save: async (session, state) => {
            const staging = stageSidecarInBackground(session, state);
            staged = staging.staged;
            return staging.path;
          },
        });
        if (staged) toCommit.push({ index: results.length, staged, lock });
        else lock?.release();
        results.push({ ok: true, value: { ...result, warnings, events } });
      } catch (error) {
        lock?.release();
        results.push({ ok: false, error: describeError(error) });
      }
    }
    locks.close();
    const committed = await commitSidecars(toCommit.map((entry) => entry.staged));
    toCommit.forEach((entry, index) => {
      entry.lock?.release();
      const outcome = committed[index]!;
      if (typeof outcome !== 'string') results[entry.index] = { ok: false, error: describeError(outcome) };
    });
    return results;
  },
);

/** Compaction as `compact`'s flags set it up: shared with `fork`, which compacts each session first. */
export interface PreparedCompaction {
  readonly strategyName: StrategyName;
  readonly strategy: CompactionStrategy;
  /** What crosses to a worker (an offline strategy is named, not built). */
  readonly request: CompactRequest;
  readonly concurrency: number;
  readonly onError: string;
  /** Sessions whose summarizer failed but which --on-error skip/truncate kept out of the failures. */
  readonly summarizerFailures: { path: string; error: string }[];
  /** Compacts one session in this thread, holding its sidecar lock (none for a dry run or stdin). */
  compactInThisThread(path: string, warn: (warning: Diagnostic) => void): Promise<CompactResult>;
}

export async function prepareCompaction(args: CompactArgs, command: 'compact' | 'fork' = 'compact'): Promise<PreparedCompaction> {
  const strategyOptions = strategyOptionsFromArgs(args); // validates --max-summary-tokens for every strategy
  // Every setting is read and checked up front, before any session is read.
  const settings = await runSettings(args, command);
  const policy = settings.policy;
  const summarizer = await resolveSummarizer(settings.sources);
  const strategyName = settings.strategy ?? (summarizer.configured ? 'summarize' : 'truncate');
  if (!settings.strategy && !summarizer.configured) {
    logMessage('info', 'no summarizer configured (--model / --base-url, COMPACTOR_MODEL or the config file); using --strategy truncate');
  }
  // One --max-summary-tokens: the summarizer's reply budget, or extract's size budget.
  const setup = { verbose: args.verbose, dryRun: args['dry-run'] };
  // A dry run writes nothing: a signal stops it at once.
  if (setup.dryRun) stopAtOnceOnSignal();
  const strategy = createStrategy(strategyName, {
    ...strategyOptions,
    ...(summarizer.configured && strategyName === 'summarize' ? { summarizer: summarizeOptions(summarizer.settings, setup) } : {}),
  });
  const { concurrency, onError } = summarizer.configured ? summarizer.settings : summarizer;
  /** Sessions whose summarizer failed but which --on-error skip/truncate kept out of the failures. */
  const summarizerFailures: { path: string; error: string }[] = [];
  // Redaction defaults on when the transcript goes to a remote endpoint; truncate sends nothing.
  const endpoint = strategyName === 'summarize' && summarizer.configured ? summarizer.settings.baseUrl : null;
  const redact = shouldRedact(args.redact, endpoint);
  const sweepTemps = createTempSweeper();
  const { tokenizer } = settings;
  const count = tokenizer === 'heuristic' ? undefined : await loadTextCounter(tokenizer);
  const request: CompactRequest = { format: args.format, tokenizer, strict: args.strict, policy, dryRun: args['dry-run'], redact, strategy: strategyName, strategyOptions };
  /** One writer per sidecar: the session is read, planned and written while holding its lock. */
  const compactLocked = async (path: string, work: () => Promise<CompactResult>): Promise<CompactResult> => {
    if (args['dry-run'] || isStdin(path)) return work();
    const attempt = lockSidecar(path);
    if (attempt.kind === 'locked') return lockedResult(path, attempt);
    try {
      sweepTemps(path);
      return await work();
    } finally {
      attempt.lock.release();
    }
  };
  return {
    strategyName,
    strategy,
    request,
    concurrency,
    onError,
    summarizerFailures,
    compactInThisThread: (path, warn) => {
      const hooks: CompactHooks = { strategy, count, onError, signal: interruption.signal, warn, log: logEvent, summarizerFailures, save: saveSidecar };
      return compactLocked(path, () => compactOne(path, request, hooks));
    },
  };
}

export const compactCommand: CommandModule<object, CompactArgs> = {
  command: 'compact [inputs..]',
  describe: 'Write a compaction sidecar beside each session',
  builder: (yargs) =>
    withSummarizer(withAllowNoGain(withPolicy(withInputs(yargs))), 'compact')
      .option(...settingFlag('strategy', 'compact'))
      .option('dry-run', { describe: 'decide and report, write nothing', type: 'boolean', default: false })
      .option('redact', { describe: 'mask secrets in what is summarized and stored (default: on for remote endpoints)', type: 'boolean' })
      .option('log-format', {
        describe: 'stderr: text (compactor: lines; compaction events with --verbose) or json (one JSON event a line, compaction events always)',
        choices: LOG_FORMATS,
        default: 'text' as LogFormat,
      }) as never,
  handler: async (args) => {
    configureLog(args['log-format'], args.verbose);
    const { strategyName, strategy, request, compactInThisThread, concurrency, onError, summarizerFailures } = await prepareCompaction(args);
    if (!args['dry-run'] && args.inputs.some(isStdin)) {
      logMessage('info', '-: a session read from stdin gets no sidecar (there is no file to put one beside); it is planned as with --dry-run');
    }
    await runSessionCommand<CompactResult>(args, { progress: true }, (output) => {
      const inThisThread = (path: string) => compactInThisThread(path, (warning) => output.warn(warning));
      return {
        // Only a strategy that needs no client can move to workers (README "Performance").
        run: (paths, emit) =>
          isOffline(strategyName)
            ? runSessionBatches(paths, compactBatchTask, { ...request, strategy: strategyName }, emit, jobsFromArgs(args), {
                local: inThisThread,
                concurrency,
                ...(args['dry-run'] ? {} : { guard: guardLocksOnExit }),
              })
            : runBatch(paths, inThisThread, emit, concurrency),
        print: (_path, result) => {
          result.events?.forEach(writeEvent);
          output.record(result.record, () => result.line);
        },
        finish: (outcomes) => {
          if (!output.json) {
            const counts: Record<CompactStatus, number> = { compacted: 0, skipped: 0, 'up-to-date': 0, 'no-gain': 0, 'would-thrash': 0, locked: 0, failed: 0 };
            const usageTotals = { input: 0, output: 0 };
            for (const outcome of outcomes) {
              counts[outcome.ok ? outcome.value.status : 'failed']++;
              if (!outcome.ok) continue;
              usageTotals.input += Number(outcome.value.record['summarizer_input_tokens'] ?? 0);
              usageTotals.output += Number(outcome.value.record['summarizer_output_tokens'] ?? 0);
            }
            const verb = args['dry-run'] || outcomes.every((outcome) => isStdin(outcome.path)) ? 'would be compacted' : 'compacted';
            process.stdout.write(
              `\n${counts.compacted} ${verb}, ${counts.skipped} skipped, ${counts['up-to-date']} up-to-date, ` +
                (['no-gain', 'would-thrash', 'locked'] as const).map((status) => (counts[status] ? `${counts[status]} ${status}, ` : '')).join('') +
                `${counts.failed} failed\n`,
            );
            if (usageTotals.input + usageTotals.output > 0) {
              process.stdout.write(`summarizer tokens: ${formatTokens(usageTotals.input)} input, ${formatTokens(usageTotals.output)} output\n`);
            }
          }
          reportFailureSummary(outcomes, summarizerFailures, onError, strategy);
        },
      };
    });
  },
};


/**
 * The end-of-batch list on stderr, so a long batch's failures are not lost in scrollback: failed
 * sessions as errors, summarizer failures --on-error absorbed as warnings. Every line has the
 * same `compactor: error|warning: …` shape as any other diagnostic, for grep and CI logs.
 */
function reportFailureSummary(
  outcomes: readonly { path: string; ok: boolean; error?: string }[],
  absorbed: readonly { path: string; error: string }[],
  onError: string,
  strategy: CompactionStrategy,
): void {
  const failed = outcomes.filter((outcome) => !outcome.ok);
  if (failed.length > 0) {
    logMessage('error', `${failed.length} of ${outcomes.length} session${outcomes.length === 1 ? '' : 's'} failed:`);
    for (const outcome of failed) logMessage('error', locatedError(outcome.path, outcome.error ?? ''), { session: outcome.path });
  }
  if (absorbed.length > 0) {
    const what = onError === 'skip' ? 'left without a new sidecar' : 'given a truncate sidecar (fallback)';
    logMessage('warning', `the ${strategy.name} strategy failed for ${absorbed.length} session${absorbed.length === 1 ? '' : 's'}, ${what} (--on-error ${onError}):`);
    for (const failure of absorbed) logMessage('warning', locatedError(failure.path, failure.error), { session: failure.path });
  }
}
