/**
 * `compactor compact`: writes a sidecar beside each session that needs one. Sessions are only
 * read; sidecars are written atomically.
 */
import type { CommandModule } from 'yargs';
import { planCompaction, runCompaction } from '../compaction/compact.js';
import { ExitCode } from '../errors.js';
import { formatTokens } from '../report/format.js';
import { createProgress, shouldShowProgress } from '../report/progress.js';
import { shouldRedact } from '../compaction/redact.js';
import { lockSidecar } from '../sidecar/lock.js';
import { createTempSweeper, saveSidecar } from '../sidecar/store.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import { runBatch } from './batch.js';
import { expandInputs } from './inputs.js';
import { interruption } from './interrupt.js';
import { loadSession } from './load.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { policyFromArgs, withInputs, withPolicy } from './options.js';
import { createOutput, reportFailure } from './output.js';

/** `locked`: another compactor process holds the session's sidecar lock; this run left it alone. */
export type CompactStatus = 'compacted' | 'skipped' | 'up-to-date' | 'locked' | 'failed';

interface CompactArgs extends CommonArgs, PolicyArgs {
  strategy: StrategyName;
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
    withPolicy(withInputs(yargs))
      .option('strategy', { describe: 'how to summarize', choices: STRATEGY_NAMES, default: 'truncate' as StrategyName })
      .option('dry-run', { describe: 'decide and report, write nothing', type: 'boolean', default: false })
      .option('redact', { describe: 'mask secrets in what is summarized and stored (default: on for remote endpoints)', type: 'boolean' }) as never,
  handler: async (args) => {
    const policy = policyFromArgs(args);
    const strategy = createStrategy(args.strategy);
    const paths = await expandInputs(args.inputs);
    const output = createOutput(args.json);
    const progress = createProgress(paths.length, shouldShowProgress(args.json));
    const counts: Record<CompactStatus, number> = { compacted: 0, skipped: 0, 'up-to-date': 0, locked: 0, failed: 0 };
    // Truncate sends nothing anywhere: no endpoint, so redaction is off unless asked for.
    const redact = shouldRedact(args.redact, null);
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
      const plan = planCompaction(loaded.subject, policy);
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
      const state = await runCompaction(loaded.subject, plan, strategy, { signal: interruption.signal, redact });
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
      output.record(outcome.value.record, () => outcome.value.line);
    });
    progress.stop();
    if (!output.json) {
      const verb = args['dry-run'] ? 'would be compacted' : 'compacted';
      process.stdout.write(
        `\n${counts.compacted} ${verb}, ${counts.skipped} skipped, ${counts['up-to-date']} up-to-date, ` +
          `${counts.locked ? `${counts.locked} locked, ` : ''}${counts.failed} failed\n`,
      );
    }
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
  },
};

