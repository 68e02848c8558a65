/**
 * `compactor compact`: writes a sidecar beside each session that needs one. Sessions are only
 * read; sidecars are written atomically.
 */
import type { CommandModule } from 'yargs';
import { planCompaction, previousFor, runCompaction } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { describeError, ExitCode } from '../errors.js';
import { SummarizerError } from '../llm/client.js';
import { formatTokens } from '../report/format.js';
import { createProgress, shouldShowProgress } from '../report/progress.js';
import { shouldRedact } from '../compaction/redact.js';
import { lockSidecar } from '../sidecar/lock.js';
import { createTempSweeper, saveSidecar } from '../sidecar/store.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import { truncateFallback } from '../strategies/fallback.js';
import type { CompactionStrategy } from '../strategies/strategy.js';
import { runBatch } from './batch.js';
import { expandInputs } from './inputs.js';
import { interruption } from './interrupt.js';
import { loadSession } from './load.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { policyFromArgs, strategyOptionsFromArgs, withInputs, withPolicy } from './options.js';
import { createOutput, locatedError, reportFailure } from './output.js';
import type { SummarizerArgs } from './summarizer.js';
import { summarizeOptions, summarizerFromArgs, withSummarizer } from './summarizer.js';

/** `locked`: another compactor process holds the session's sidecar lock; this run left it alone. */
export type CompactStatus = 'compacted' | 'skipped' | 'up-to-date' | 'locked' | 'failed';

interface CompactArgs extends CommonArgs, PolicyArgs, SummarizerArgs {
  strategy?: StrategyName;
  'dry-run': boolean;
  redact?: boolean;
}

interface CompactResult {
  readonly status: Exclude<CompactStatus, 'failed'>;
  readonly record: Record<string, unknown>;
  readonly line: string;
}

export const compactCommand: CommandModule<object, CompactArgs> = {
  command: 'compact <inputs..>',
  describe: 'Write a compaction sidecar beside each session',
  builder: (yargs) =>
    withSummarizer(withPolicy(withInputs(yargs)))
      .option('strategy', { describe: 'summarize (default if configured), truncate, extract or prune', choices: STRATEGY_NAMES })
      .option('dry-run', { describe: 'decide and report, write nothing', type: 'boolean', default: false })
      .option('redact', { describe: 'mask secrets in what is summarized and stored (default: on for remote endpoints)', type: 'boolean' }) as never,
  handler: async (args) => {
    const policy = policyFromArgs(args);
    const strategyOptions = strategyOptionsFromArgs(args); // validates --max-summary-tokens for every strategy
    const summarizer = await summarizerFromArgs(args);
    const strategyName = args.strategy ?? (summarizer.configured ? 'summarize' : 'truncate');
    if (!args.strategy && !summarizer.configured) {
      process.stderr.write('compactor: no summarizer configured (--model / --base-url, COMPACTOR_MODEL or the config file); using --strategy truncate\n');
    }
    // One --max-summary-tokens: the summarizer's reply budget, or extract's size budget.
    const strategy = createStrategy(strategyName, {
      ...strategyOptions,
      ...(summarizer.configured && strategyName === 'summarize' ? { summarizer: summarizeOptions(summarizer.settings, args.verbose) } : {}),
    });
    const { concurrency, onError } = summarizer.configured ? summarizer.settings : summarizer;
    /** Sessions whose summarizer failed but which --on-error skip/truncate kept out of the failures. */
    const summarizerFailures: { path: string; error: string }[] = [];
    const usageTotals = { input: 0, output: 0 };
    const paths = await expandInputs(args.inputs);
    const output = createOutput(args.json);
    const progress = createProgress(paths.length, shouldShowProgress(args.json));
    const counts: Record<CompactStatus, number> = { compacted: 0, skipped: 0, 'up-to-date': 0, locked: 0, failed: 0 };
    // Redaction defaults on when the transcript goes to a remote endpoint; truncate sends nothing.
    const endpoint = strategyName === 'summarize' && summarizer.configured ? summarizer.settings.baseUrl : null;
    const redact = shouldRedact(args.redact, endpoint);
    const sweepTemps = createTempSweeper();

    /** One writer per sidecar: the session is read, planned and written while holding its lock. */
    const compactLocked = async (path: string): Promise<CompactResult> => {
      if (args['dry-run']) return compactOne(path);
      const attempt = await lockSidecar(path);
      if (attempt.kind === 'locked') {
        const by = attempt.holder ? `pid ${attempt.holder.pid} on ${attempt.holder.host}` : 'an unreadable lock';
        return {
          status: 'locked',
          record: { session: path, status: 'locked', lock: attempt.path, locked_by_pid: attempt.holder?.pid ?? null },
          line: `${'locked'.padEnd(10)} ${path} (another compactor is writing its sidecar: ${by})`,
        };
      }
      try {
        await sweepTemps(path);
        return await compactOne(path);
      } finally {
        await attempt.lock.release();
      }
    };

    const compactOne = async (path: string): Promise<CompactResult> => {
      const loaded = await loadSession(path, { format: args.format, withSidecar: true, strict: args.strict });
      loaded.warnings.forEach((warning) => output.warn(warning));
      const { subject, discarded } = previousFor(loaded.subject, strategy);
      if (discarded) output.warn({ file: path, message: discarded });
      const plan = planCompaction(subject, policy);
      const base = { session: path, strategy: strategy.name, dry_run: args['dry-run'], tokens_before: plan.contextTokens };
      if (plan.kind === 'skip') {
        return {
          status: plan.status,
          record: { ...base, status: plan.status, reason: plan.reason },
          line: `${plan.status.padEnd(10)} ${path} (${plan.reason})`,
        };
      }
      const firstKept = loaded.session.messages[plan.cut.index]!.id;
      if (args['dry-run']) {
        return {
          status: 'compacted',
          record: { ...base, status: 'compacted', first_kept_message_id: firstKept, messages_summarized: plan.cut.index - plan.start },
          line: `would compact ${path}: ${plan.cut.index - plan.start} messages, keep from ${firstKept}`,
        };
      }
      const run = { signal: interruption.signal, redact };
      let state: CompactionState;
      try {
        state = await runCompaction(subject, plan, strategy, run);
      } catch (error) {
        // An interrupted session is abandoned, never replaced by a fallback summary.
        if (interruption.requested || !(error instanceof SummarizerError) || onError === 'fail') throw error;
        summarizerFailures.push({ path, error: describeError(error) });
        if (onError === 'skip') {
          const reason = `summarizer failed: ${describeError(error)}`;
          return { status: 'skipped', record: { ...base, status: 'skipped', reason }, line: `skipped    ${path} (${reason})` };
        }
        state = await runCompaction(subject, plan, truncateFallback(describeError(error)), run);
      }
      const written = await saveSidecar(path, state);
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
          redacted: redact,
        },
        line: `compacted  ${path}: ${formatTokens(state.tokens_before)} -> ${formatTokens(state.tokens_after)} tokens, sidecar ${written}`,
      };
    };

    const outcomes = await runBatch(paths, compactLocked, ({ path, ...outcome }) => {
      progress.tick(path);
      if (!outcome.ok) {
        counts.failed++;
        return reportFailure(output, path, outcome.error);
      }
      counts[outcome.value.status]++;
      usageTotals.input += Number(outcome.value.record['summarizer_input_tokens'] ?? 0);
      usageTotals.output += Number(outcome.value.record['summarizer_output_tokens'] ?? 0);
      output.record(outcome.value.record, () => outcome.value.line);
    }, concurrency);
    progress.stop();
    if (!output.json) {
      const verb = args['dry-run'] ? 'would be compacted' : 'compacted';
      process.stdout.write(
        `\n${counts.compacted} ${verb}, ${counts.skipped} skipped, ${counts['up-to-date']} up-to-date, ` +
          `${counts.locked ? `${counts.locked} locked, ` : ''}${counts.failed} failed\n`,
      );
      if (usageTotals.input + usageTotals.output > 0) {
        process.stdout.write(`summarizer tokens: ${formatTokens(usageTotals.input)} input, ${formatTokens(usageTotals.output)} output\n`);
      }
    }
    reportFailureSummary(outcomes, summarizerFailures, onError, strategy);
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
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
  const lines: string[] = [];
  if (failed.length > 0) {
    lines.push(`error: ${failed.length} of ${outcomes.length} session${outcomes.length === 1 ? '' : 's'} failed:`);
    for (const outcome of failed) lines.push(`error: ${locatedError(outcome.path, outcome.error ?? '')}`);
  }
  if (absorbed.length > 0) {
    const what = onError === 'skip' ? 'left without a new sidecar' : 'given a truncate sidecar (fallback)';
    lines.push(`warning: the ${strategy.name} strategy failed for ${absorbed.length} session${absorbed.length === 1 ? '' : 's'}, ${what} (--on-error ${onError}):`);
    for (const failure of absorbed) lines.push(`warning: ${locatedError(failure.path, failure.error)}`);
  }
  if (lines.length > 0) process.stderr.write(`compactor: ${lines.join('\ncompactor: ')}\n`);
}
