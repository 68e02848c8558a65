/**
 * `compactor compact`: writes a sidecar beside each session that needs one. Sessions are only
 * read; sidecars are written atomically. With an offline strategy (truncate, extract, prune), big
 * runs go to worker threads in batches of sessions (sessions.ts): the worker takes each session's
 * sidecar lock, compacts it and stages its sidecar, then commits the batch's sidecars together
 * (store.ts) and releases the locks; this thread guards those locks so an exit releases them.
 * The summarizer, with its live client, runs here, one session at a time under its lock.
 * What one session's compaction does, from the lock to the write, is pipeline/compact-session.ts;
 * this module builds its request and hooks from the flags and prints the results.
 */
import type { CommandModule } from 'yargs';
import { describeError } from '../errors.js';
import { formatTokens } from '../report/format.js';
import { shouldRedact } from '../compaction/redact.js';
import { isStdin } from '../formats/input-source.js';
import type { LockStager, SidecarLock } from '../sidecar/lock.js';
import { createLockStager, guardLocksOnExit } from '../sidecar/lock.js';
import { commitSidecars, createTempSweeper, saveSidecar, sidecarPath, stageSidecars } from '../sidecar/store.js';
import type { AnyMessage, Diagnostic, Session } from '../session/model.js';
import type { StrategyName, StrategyOptions } from '../strategies/index.js';
import { createStrategy } from '../strategies/index.js';
import type { CompactionState } from '../compaction/state.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import type { Settled } from '../workers/task.js';
import { sessionTask } from '../workers/task.js';
import { runBatch } from '../pipeline/batch.js';
import type { CompactHooks, CompactResult, CompactStatus } from '../pipeline/compact-session.js';
import { compactLocked, compactSession, lockedResult } from '../pipeline/compact-session.js';
import { interruption, stopAtOnceOnSignal } from '../pipeline/interrupt.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { jobsFromArgs, refusalReason, runSettings, strategyOptionsFromArgs, withAllowNoGain, withInputs, withPolicy, settingFlag } from './options.js';
import type { PolicyValues } from '../config/policy.js';
import { policyFor } from '../config/policy.js';
import type { SettingArgs } from '../config/settings.js';
import { sessionWindow } from '../pricing/window.js';
import type { LogEvent, LogFormat } from '../pipeline/log.js';
import { configureLog, LOG_FORMATS, logEvent, logMessage, writeEvent } from '../pipeline/log.js';
import { locatedError } from '../pipeline/output.js';
import type { ReadTaskOptions } from '../pipeline/sessions.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { earlyStart, runSessionBatches } from '../pipeline/sessions.js';
import type { SessionInput, SessionSource } from '../read/index.js';
import type { SummarizerArgs } from './summarizer.js';
import { summarizeOptions, withSummarizer } from './summarizer.js';
import { resolveSummarizer } from '../config/summarizer.js';

export type { CompactResult, CompactStatus } from '../pipeline/compact-session.js';

export type CompactArgs = CommonArgs &
  PolicyArgs &
  SummarizerArgs &
  SettingArgs<'allow_no_gain' | 'strategy', 'compact'> & {
    'log-format': LogFormat;
    'dry-run': boolean;
    redact?: boolean;
  };

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

/**
 * The hooks one session's compaction (pipeline/compact-session.ts) takes from the request: the
 * policy at each session's own window (pricing/window.ts) unless --context-limit, and the
 * refusal lines; the rest (strategy, where results go) from the caller.
 */
function compactHooks(
  request: CompactRequest,
  rest: Omit<CompactHooks, 'policyFor' | 'refusal'>,
): CompactHooks {
  return {
    ...rest,
    policyFor: async (session: Session<AnyMessage>) => {
      const window = await sessionWindow(session, { flag: request.policy.context_limit ?? undefined });
      return { policy: policyFor(request.policy, window.tokens), window };
    },
    refusal: refusalReason,
  };
}

/** Offline strategies: no client, so they can run in a worker. */
type OfflineStrategyName = Exclude<StrategyName, 'summarize'>;

function isOffline(name: StrategyName): name is OfflineStrategyName {
  return name !== 'summarize';
}

/** A worker compacts only with an offline strategy (a summarizer's client cannot cross threads). */
type CompactTaskRequest = CompactRequest & { readonly strategy: OfflineStrategyName };

/** Temp files of killed runs, in a worker thread (which lives for one run): each directory listed once. */
const sweepInWorker = createTempSweeper();

/**
 * compactSession over a batch of sessions in a worker thread, in steps that each touch the file
 * system's names together: every session's lock is taken, then each session is compacted (its
 * sidecar's path checked, its state kept), then the batch's sidecars are staged, committed
 * together (their fsyncs at once) and the locks released. A name made or removed can wait for
 * the journal to commit other files; made together, they wait for it about once. A session that
 * fails, or whose staging or commit fails, fails alone. Interruption is the main thread's: it
 * stops handing out batches, and the ones in flight finish.
 */
export const compactBatchTask = sessionTask(
  'compact',
  async (inputs: readonly SessionInput[], request: CompactTaskRequest): Promise<Settled<CompactResult>[]> => {
    const strategy = createStrategy(request.strategy, request.strategyOptions);
    const count = await loadTextCounter(request.tokenizer);
    const results: Settled<CompactResult>[] = new Array(inputs.length);
    const locks = createLockStager();
    const locked = inputs.map((input, index) => (request.dryRun ? null : takeLock(locks, input.path, index, results)));
    locks.close();
    const toWrite: { index: number; path: string; state: CompactionState }[] = [];
    const signal = new AbortController().signal;
    for (const [index, input] of inputs.entries()) {
      if (results[index]) continue;
      const lock = locked[index] ?? null;
      const warnings: Diagnostic[] = [];
      const events: LogEvent[] = [];
      let written = false;
      try {
        const result = await compactSession(input, request, compactHooks(request, {
          strategy,
          count,
          onError: 'fail',
          signal,
          warn: (warning) => warnings.push(warning),
          log: (event, fields) => events.push({ time: new Date().toISOString(), event, fields }),
          summarizerFailures: [],
          // Staged with the rest of the batch once all are compacted. The session's read has
          // just checked the sidecar path under this lock (a symlink or a non-file is refused
          // there), so it is not asked again.
          save: async (session, state) => {
            const path = sidecarPath(session);
            toWrite.push({ index, path, state });
            written = true;
            return path;
          },
        }));
        if (!written) lock?.release();
        results[index] = { ok: true, value: { ...result, warnings, events } };
      } catch (error) {
        lock?.release();
        results[index] = { ok: false, error: describeError(error) };
      }
    }
    const committed = await commitSidecars(await stageSidecars(toWrite));
    toWrite.forEach((entry, position) => {
      locked[entry.index]?.release();
      const outcome = committed[position]!;
      if (typeof outcome !== 'string') results[entry.index] = { ok: false, error: describeError(outcome) };
    });
    return results;
  },
);

/**
 * Takes a session's sidecar lock for the batch task and clears what killed runs left beside it;
 * a session another compactor holds, or one whose lock fails, gets its result now (null).
 */
function takeLock(locks: LockStager, path: string, index: number, results: Settled<CompactResult>[]): SidecarLock | null {
  try {
    const attempt = locks.take(path);
    if (attempt.kind === 'locked') {
      results[index] = { ok: true, value: lockedResult(path, attempt) };
      return null;
    }
    sweepInWorker(path);
    return attempt.lock;
  } catch (error) {
    results[index] = { ok: false, error: describeError(error) };
    return null;
  }
}

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
  compactInThisThread(source: SessionSource, warn: (warning: Diagnostic) => void): Promise<CompactResult>;
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
  return {
    strategyName,
    strategy,
    request,
    concurrency,
    onError,
    summarizerFailures,
    // One writer per sidecar: the session is read, planned and written while holding its lock.
    compactInThisThread: (source, warn) =>
      compactLocked(source, request, compactHooks(request, { strategy, count, onError, signal: interruption.signal, warn, log: logEvent, summarizerFailures, save: saveSidecar }), sweepTemps),
  };
}

export const compactCommand: CommandModule<object, CompactArgs> = {
  command: 'compact [inputs..]',
  describe: 'Write a compaction sidecar beside each session',
  builder: (yargs) =>
    withSummarizer(withAllowNoGain(withPolicy(withInputs(yargs, 'compact'))), 'compact')
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
    // Workers start up, and import the task, while the files a walk found are sniffed (only a
    // strategy that needs no client moves to them).
    const early = earlyStart(() => jobsFromArgs(args), compactBatchTask.name);
    await runSessionCommand<CompactResult>(args, { progress: true, writesBeside: !args['dry-run'], ...(isOffline(strategyName) ? { walked: early.walked } : {}) }, (output) => {
      const inThisThread = (input: SessionInput) => compactInThisThread(input, (warning) => output.warn(warning));
      return {
        // Only a strategy that needs no client can move to workers (README "Performance").
        run: (paths, emit) =>
          isOffline(strategyName)
            ? runSessionBatches(paths, compactBatchTask, { ...request, strategy: strategyName }, emit, jobsFromArgs(args), {
                local: inThisThread,
                concurrency,
                early: early.pool(),
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
