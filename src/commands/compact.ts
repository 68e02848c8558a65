/**
 * `compactor compact`: writes a sidecar beside each session that needs one. This module parses
 * the flags into a job (prepareCompaction: every setting read and checked up front, before any
 * session is read; the strategy built once, with the summarizer's live client when one is
 * configured; `fork` takes the same), runs the compaction room (src/compact/) over the sessions
 * and prints each outcome and the tally (compact/render.ts). Sessions are only read;
 * sidecars are written atomically. With an offline strategy (truncate, extract, prune), big runs
 * go to worker threads in batches of sessions (compact/batch.ts), whose sidecar locks this thread
 * guards so an exit releases them; this thread runs batches of small sessions too, beside one
 * worker fewer (pipeline/sessions.ts batchHere). The summarizer, with its live client, runs here, one session
 * at a time under its lock.
 */
import { availableParallelism } from 'node:os';
import type { CommandModule } from 'yargs';
import { compactBatchTask } from '../compact/batch.js';
import { isOffline } from '../compact/job.js';
import { compactLine, compactRecord, tallyOf, tallyText } from '../compact/render.js';
import { compactSession } from '../compact/session.js';
import { isStdin } from '../formats/json/input-source.js';
import { guardLocksOnExit } from '../sidecar/lock.js';
import { stagingGroupSize, threadsWithinOpenFiles } from '../sidecar/open-files.js';
import { TASKS_PER_WORKER } from '../workers/pool.js';
import type { Outcome } from '../pipeline/batch.js';
import { runBatch } from '../pipeline/batch.js';
import { configureLog, LOG_FORMATS, logMessage, writeEvent } from '../pipeline/log.js';
import type { LogFormat } from '../pipeline/log.js';
import type { CommandOutput } from '../pipeline/output.js';
import { locatedError } from '../pipeline/output.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { earlyStart, runSessionBatches } from '../pipeline/sessions.js';
import type { Jobs } from '../pipeline/sessions.js';
import type { SessionInput } from '../read/index.js';
import type { CompactJob, CompactOutcome, CompactTools } from '../compact/job.js';
import { shouldRedact } from '../compaction/redact.js';
import type { PolicyArgs, CommonArgs } from './options.js';
import { jobsFromArgs, runSettings, strategyOptionsFromArgs, withAllowNoGain, withInputs, withPolicy, withSettings } from './options.js';
import type { SettingArgs } from '../config/settings.js';
import { resolveSummarizer } from '../config/summarizer.js';
import { interruption, stopAtOnceOnSignal } from '../pipeline/interrupt.js';
import { createTempSweeper } from '../sidecar/store.js';
import { createStrategy } from '../strategies/index.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import type { SummarizerArgs } from './summarizer.js';
import { summarizeOptions, withSummarizer } from './summarizer.js';

export type CompactArgs = CommonArgs &
  PolicyArgs &
  SummarizerArgs &
  SettingArgs<'allow_no_gain' | 'strategy' | 'relevance', 'compact'> & {
    'log-format': LogFormat;
    'dry-run': boolean;
    redact?: boolean;
  };

/** A compaction as the flags set it up. */
export interface PreparedCompaction {
  readonly job: CompactJob;
  /** This thread's: the strategy built, the counter loaded, the run's signal. */
  readonly tools: CompactTools;
  readonly concurrency: number;
  /** Clears what killed runs left beside a session, each directory listed once a run. */
  readonly sweep: (path: string) => void;
}

export async function prepareCompaction(args: CompactArgs, command: 'compact' | 'fork' = 'compact'): Promise<PreparedCompaction> {
  const strategyOptions = strategyOptionsFromArgs(args); // validates --max-summary-tokens for every strategy
  // Every setting is read and checked up front, before any session is read.
  const settings = await runSettings(args, command);
  const summarizer = await resolveSummarizer(settings.sources);
  const strategyName = settings.strategy ?? (summarizer.configured ? 'summarize' : 'truncate');
  if (!settings.strategy && !summarizer.configured) {
    logMessage('info', 'no summarizer configured (--model / --base-url, COMPACTOR_MODEL or the config file); using --strategy truncate');
  }
  const setup = { verbose: args.verbose, dryRun: args['dry-run'] };
  // A dry run writes nothing: a signal stops it at once.
  if (setup.dryRun) stopAtOnceOnSignal();
  // One --max-summary-tokens: the summarizer's reply budget, or extract's size budget.
  const strategy = createStrategy(strategyName, {
    ...strategyOptions,
    ...(summarizer.configured && strategyName === 'summarize' ? { summarizer: summarizeOptions(summarizer.settings, setup) } : {}),
  });
  const { concurrency, onError } = summarizer.configured ? summarizer.settings : summarizer;
  // Redaction defaults on when the transcript goes to a remote endpoint; truncate sends nothing.
  const endpoint = strategyName === 'summarize' && summarizer.configured ? summarizer.settings.baseUrl : null;
  const { tokenizer } = settings;
  const count = tokenizer === 'heuristic' ? undefined : await loadTextCounter(tokenizer);
  const job: CompactJob = {
    format: args.format,
    tokenizer,
    strict: args.strict,
    policy: { kind: 'settings', values: settings.policy },
    dryRun: args['dry-run'],
    redact: shouldRedact(args.redact, endpoint),
    relevance: settings.relevance,
    strategy: strategyName,
    strategyOptions,
    onError,
  };
  return { job, tools: { strategy, count, signal: interruption.signal }, concurrency, sweep: createTempSweeper() };
}

/**
 * A failed outcome as the frame reports a failure (its warnings and events first, as a
 * session's own lines); any other outcome as it is.
 */
function settled(outcome: Outcome<CompactOutcome>, output: CommandOutput): Outcome<CompactOutcome> {
  if (!outcome.ok || outcome.value.status !== 'failed') return outcome;
  printCarried(outcome.value, output);
  return { path: outcome.path, ok: false, error: outcome.value.error };
}

function printCarried(outcome: CompactOutcome, output: CommandOutput): void {
  outcome.warnings.forEach((warning) => output.warn(warning));
  outcome.events.forEach(writeEvent);
}

/** The same, for the outcomes the run hands back (already printed). */
function asFailure(outcome: Outcome<CompactOutcome>): Outcome<CompactOutcome> {
  return outcome.ok && outcome.value.status === 'failed' ? { path: outcome.path, ok: false, error: outcome.value.error } : outcome;
}

/**
 * A session whose failure stops the run (a rejected key, an interruption) is thrown, after its
 * own lines, for the batch to stop (pipeline/batch.ts).
 */
function stopOn(outcome: CompactOutcome, output: CommandOutput): CompactOutcome {
  if (outcome.status !== 'failed' || !outcome.stopsRun) return outcome;
  printCarried(outcome, output);
  throw Object.assign(new Error(outcome.error), { stopsBatch: true });
}

/** The staging group of each batch when as many batches as the pool can hold stage at once (one per task a worker holds). */
function stagingGroupFor(jobs: Jobs): number {
  return stagingGroupSize(Math.min(jobs === 'auto' ? availableParallelism() : jobs, threadsWithinOpenFiles()) * TASKS_PER_WORKER);
}

export const compactCommand: CommandModule<object, CompactArgs> = {
  command: 'compact [inputs..]',
  describe: 'Write a compaction sidecar beside each session',
  builder: (yargs) =>
    withSettings(withSummarizer(withAllowNoGain(withPolicy(withInputs(yargs, 'compact'))), 'compact'), ['strategy', 'relevance'], 'compact')
      .option('dry-run', { describe: 'decide and report, write nothing', type: 'boolean', default: false })
      .option('redact', { describe: 'mask secrets in what is summarized and stored (default: on for remote endpoints)', type: 'boolean' })
      .option('log-format', {
        describe: 'stderr: text (compactor: lines; compaction events with --verbose) or json (one JSON event a line, compaction events always)',
        choices: LOG_FORMATS,
        default: 'text' as LogFormat,
      }),
  handler: async (args) => {
    configureLog(args['log-format'], args.verbose);
    const { job, tools, concurrency, sweep } = await prepareCompaction(args);
    if (!args['dry-run'] && args.inputs.some(isStdin)) {
      logMessage('info', '-: a session read from stdin gets no sidecar (there is no file to put one beside); it is planned as with --dry-run');
    }
    const strategy = job.strategy;
    // Workers start up, and import the task, while the files a walk found are sniffed (only a
    // strategy that needs no client moves to them).
    // This thread takes batches of small sessions too (one worker fewer to start).
    const early = earlyStart(() => jobsFromArgs(args), compactBatchTask.name, true);
    // Sessions selected; those without an outcome were not run (the run was stopped or interrupted).
    let sessions = 0;
    await runSessionCommand<CompactOutcome>(args, { progress: true, writesBeside: !args['dry-run'], ...(isOffline(strategy) ? { walked: early.walked } : {}) }, (output) => {
      const inThisThread = async (input: SessionInput) => stopOn(await compactSession(input, job, tools, sweep), output);
      return {
        run: async (paths, emit) => {
          sessions = paths.length;
          const emitSettled = (outcome: Outcome<CompactOutcome>) => emit(settled(outcome, output));
          // Only a strategy that needs no client can move to workers (README "Performance").
          if (!isOffline(strategy)) return (await runBatch(paths, inThisThread, emitSettled, concurrency)).map(asFailure);
          // A worker's batch and one this thread takes beside them: one job, staged in the same groups.
          const jobs = jobsFromArgs(args);
          const batchJob = { ...job, strategy, stagingGroup: stagingGroupFor(jobs) };
          const outcomes = await runSessionBatches(paths, compactBatchTask, batchJob, emitSettled, jobs, {
            local: inThisThread,
            concurrency,
            early: early.pool(),
            batchHere: (inputs) => compactBatchTask.run(inputs, batchJob),
            ...(args['dry-run'] ? {} : { guard: guardLocksOnExit }),
          });
          return outcomes.map(asFailure);
        },
        print: (_path, outcome) => {
          outcome.events.forEach(writeEvent);
          if (outcome.status !== 'failed') output.record(compactRecord(outcome), () => compactLine(outcome));
        },
        finish: (outcomes) => {
          if (!output.json) {
            const all = outcomes.map((outcome): CompactOutcome => (outcome.ok ? outcome.value : { status: 'failed', session: outcome.path, error: outcome.error, stopsRun: false, warnings: [], events: [] }));
            // Only what this run was asked decides the verb: a run stopped before any session was done is still a real run.
            const planned = args['dry-run'] || (args.inputs.length > 0 && args.inputs.every(isStdin));
            process.stdout.write(tallyText(tallyOf(all), planned, sessions - outcomes.length));
          }
          reportFailureSummary(outcomes, job.onError, tools.strategy.name);
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
function reportFailureSummary(outcomes: readonly Outcome<CompactOutcome>[], onError: string, strategy: string): void {
  const failed = outcomes.filter((outcome) => !outcome.ok);
  if (failed.length > 0) {
    logMessage('error', `${failed.length} of ${outcomes.length} session${outcomes.length === 1 ? '' : 's'} failed:`);
    for (const outcome of failed) logMessage('error', locatedError(outcome.path, outcome.error), { session: outcome.path });
  }
  const absorbed = outcomes.flatMap((outcome) => (outcome.ok && absorbedBy(outcome.value) ? [{ path: outcome.path, error: absorbedBy(outcome.value)! }] : []));
  if (absorbed.length > 0) {
    const what = onError === 'skip' ? 'left without a new sidecar' : 'given a truncate sidecar (fallback)';
    logMessage('warning', `the ${strategy} strategy failed for ${absorbed.length} session${absorbed.length === 1 ? '' : 's'}, ${what} (--on-error ${onError}):`);
    for (const failure of absorbed) logMessage('warning', locatedError(failure.path, failure.error), { session: failure.path });
  }
}

/** The summarizer's error --on-error skip or truncate kept out of the failures, if any. */
function absorbedBy(outcome: CompactOutcome): string | null {
  return outcome.status === 'skipped' || outcome.status === 'compacted' ? outcome.absorbed : null;
}
