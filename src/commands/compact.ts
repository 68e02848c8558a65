/**
 * `compactor compact`: writes a sidecar beside each session that needs one. Sessions are only
 * read; sidecars are written atomically.
 */
import type { CommandModule } from 'yargs';
import { planCompaction, runCompaction } from '../compaction/compact.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { ExitCode } from '../errors.js';
import { formatTokens } from '../report/format.js';
import { createProgress, shouldShowProgress } from '../report/progress.js';
import { saveSidecar } from '../sidecar/store.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import type { Diagnostic } from '../session/model.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import { sessionTask } from '../workers/task.js';
import { selectInputs } from './inputs.js';
import { loadSession } from './load.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { jobsFromArgs, policyFromArgs, withInputs, withPolicy } from './options.js';
import { createOutput, reportFailure } from './output.js';
import type { ReadTaskOptions } from './sessions.js';
import { runSessions } from './sessions.js';
import { parseShard } from './shard.js';

export type CompactStatus = 'compacted' | 'skipped' | 'up-to-date' | 'failed';

interface CompactArgs extends CommonArgs, PolicyArgs {
  strategy: StrategyName;
  'dry-run': boolean;
}

interface CompactResult {
  readonly status: Exclude<CompactStatus, 'failed'>;
  readonly record: Record<string, unknown>;
  readonly line: string;
  readonly warnings: readonly Diagnostic[];
}

interface CompactOptions extends ReadTaskOptions {
  readonly policy: CompactionPolicy;
  readonly strategy: StrategyName;
  readonly dryRun: boolean;
}

/** Plans, summarizes and writes one session's sidecar (runs in a worker thread for big batches). */
export const compactSessionTask = sessionTask(import.meta.url, 'compactSessionTask', async (path: string, options: CompactOptions): Promise<CompactResult> => {
  const strategy = createStrategy(options.strategy);
  const count = await loadTextCounter(options.tokenizer);
  // A strategy that reads no text gets slim messages; the hash a sidecar stores is taken while
  // reading (a dry run writes none).
  const messages = !strategy.metadataOnly ? 'full' : options.dryRun ? 'lean' : 'lean-hashed';
  const loaded = await loadSession(path, { format: options.format, withSidecar: true, count, messages });
  const { warnings } = loaded;
  const plan = planCompaction(loaded.subject, options.policy);
  const base = { session: path, strategy: strategy.name, dry_run: options.dryRun, tokens_before: plan.contextTokens };
  if (plan.kind === 'skip') {
    return {
      status: plan.status,
      record: { ...base, status: plan.status, reason: plan.reason },
      line: `${plan.status.padEnd(10)} ${path} (${plan.reason})`,
      warnings,
    };
  }
  const firstKept = loaded.session.messages[plan.cut.index]!.id;
  if (options.dryRun) {
    return {
      status: 'compacted',
      record: { ...base, status: 'compacted', first_kept_message_id: firstKept, messages_summarized: plan.cut.index - plan.start },
      line: `would compact ${path}: ${plan.cut.index - plan.start} messages, keep from ${firstKept}`,
      warnings,
    };
  }
  const state = await runCompaction(loaded.subject, plan, strategy, { count });
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
    warnings,
  };
});

export const compactCommand: CommandModule<object, CompactArgs> = {
  command: 'compact <inputs..>',
  describe: 'Write a compaction sidecar beside each session',
  builder: (yargs) =>
    withPolicy(withInputs(yargs))
      .option('strategy', { describe: 'how to summarize', choices: STRATEGY_NAMES, default: 'truncate' as StrategyName })
      .option('dry-run', { describe: 'decide and report, write nothing', type: 'boolean', default: false }) as never,
  handler: async (args) => {
    const policy = policyFromArgs(args);
    const strategy = createStrategy(args.strategy);
    const paths = await selectInputs(args.inputs, parseShard(args.shard));
    const output = createOutput(args.json);
    const progress = createProgress(paths.length, shouldShowProgress(args.json));
    const counts: Record<CompactStatus, number> = { compacted: 0, skipped: 0, 'up-to-date': 0, failed: 0 };

    const options: CompactOptions = { format: args.format, policy, strategy: args.strategy, tokenizer: args.tokenizer, dryRun: args['dry-run'] };
    const outcomes = await runSessions(
      paths,
      compactSessionTask,
      options,
      ({ path, ...outcome }) => {
        progress.tick(path);
        if (!outcome.ok) {
          counts.failed++;
          return reportFailure(output, path, outcome.error);
        }
        outcome.value.warnings.forEach((warning) => output.warn(warning));
        counts[outcome.value.status]++;
        output.record(outcome.value.record, () => outcome.value.line);
      },
      jobsFromArgs(args),
    );
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

