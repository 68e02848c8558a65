/**
 * `compactor compact`: writes a sidecar beside each session that needs one. Sessions are only
 * read; sidecars are written atomically.
 */
import type { CommandModule } from 'yargs';
import { planCompaction, previousFor, runCompaction } from '../compaction/compact.js';
import { ExitCode } from '../errors.js';
import { formatTokens } from '../report/format.js';
import { createProgress, shouldShowProgress } from '../report/progress.js';
import { saveSidecar } from '../sidecar/store.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import { runBatch } from './batch.js';
import { expandInputs } from './inputs.js';
import { loadSession } from './load.js';
import type { CommonArgs, PolicyArgs, SummaryBudgetArgs } from './options.js';
import { policyFromArgs, strategyOptionsFromArgs, withInputs, withPolicy, withSummaryBudget } from './options.js';
import { createOutput, reportFailure } from './output.js';

export type CompactStatus = 'compacted' | 'skipped' | 'up-to-date' | 'failed';

interface CompactArgs extends CommonArgs, PolicyArgs, SummaryBudgetArgs {
  strategy: StrategyName;
  'dry-run': boolean;
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
    withSummaryBudget(withPolicy(withInputs(yargs)))
      .option('strategy', { describe: 'how to summarize', choices: STRATEGY_NAMES, default: 'truncate' as StrategyName })
      .option('dry-run', { describe: 'decide and report, write nothing', type: 'boolean', default: false }) as never,
  handler: async (args) => {
    const policy = policyFromArgs(args);
    const strategy = createStrategy(args.strategy, strategyOptionsFromArgs(args));
    const paths = await expandInputs(args.inputs);
    const output = createOutput(args.json);
    const progress = createProgress(paths.length, shouldShowProgress(args.json));
    const counts: Record<CompactStatus, number> = { compacted: 0, skipped: 0, 'up-to-date': 0, failed: 0 };

    const compactOne = async (path: string): Promise<CompactResult> => {
      const loaded = await loadSession(path, { format: args.format, withSidecar: true });
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
      const state = await runCompaction(subject, plan, strategy);
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
        },
        line: `compacted  ${path}: ${formatTokens(state.tokens_before)} -> ${formatTokens(state.tokens_after)} tokens, sidecar ${written}`,
      };
    };

    const outcomes = await runBatch(paths, compactOne, ({ path, ...outcome }) => {
      progress.tick(path);
      if (!outcome.ok) {
        counts.failed++;
        return reportFailure(output, path, outcome.error);
      }
      counts[outcome.value.status]++;
      output.record(outcome.value.record, () => outcome.value.line);
    });
    progress.stop();
    if (!output.json) {
      const verb = args['dry-run'] ? 'would be compacted' : 'compacted';
      process.stdout.write(
        `\n${counts.compacted} ${verb}, ${counts.skipped} skipped, ${counts['up-to-date']} up-to-date, ${counts.failed} failed\n`,
      );
    }
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
  },
};

