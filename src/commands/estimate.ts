/**
 * `compactor estimate`: token counts, the current context, and the cut compaction would take.
 */
import type { CommandModule } from 'yargs';
import type { CompactionPlan } from '../compaction/compact.js';
import { planCompaction } from '../compaction/compact.js';
import { ExitCode } from '../errors.js';
import { fitPath, formatTokens } from '../report/format.js';
import { renderTable } from '../report/table.js';
import { sum } from '../tokens/estimate.js';
import { runBatch } from './batch.js';
import { expandInputs } from './inputs.js';
import { loadSession } from './load.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { policyFromArgs, withInputs, withPolicy } from './options.js';
import { createOutput, reportFailure } from './output.js';

function cutJson(plan: CompactionPlan, messageIds: readonly string[]) {
  const cut = plan.cut;
  if (cut.kind === 'none') return null;
  return {
    index: cut.index,
    first_kept_message_id: messageIds[cut.index],
    split_turn: cut.splitTurnStart !== null,
    forced: cut.forced,
    tokens_to_summarize: cut.tokensToSummarize,
    tokens_kept: cut.tokensKept,
  };
}

export const estimateCommand: CommandModule<object, CommonArgs & PolicyArgs> = {
  command: 'estimate <inputs..>',
  describe: 'Estimate tokens and the cut compaction would take',
  builder: (yargs) => withPolicy(withInputs(yargs)) as never,
  handler: async (args) => {
    const policy = policyFromArgs(args);
    const paths = await expandInputs(args.inputs);
    const output = createOutput(args.json);
    const rows: string[][] = [];
    const outcomes = await runBatch(
      paths,
      async (path) => {
        const loaded = await loadSession(path, { format: args.format, withSidecar: true, strict: args.strict });
        return { loaded, plan: planCompaction(loaded.subject, policy) };
      },
      ({ path, ...outcome }) => {
        if (!outcome.ok) return reportFailure(output, path, outcome.error);
        const { loaded, plan } = outcome.value;
        loaded.warnings.forEach((warning) => output.warn(warning));
        const ids = loaded.session.messages.map((message) => message.id);
        const record = {
          session: path,
          format: loaded.session.format,
          messages: ids.length,
          estimated_tokens: sum(loaded.tokens),
          context_tokens: plan.contextTokens,
          would_compact: plan.kind === 'compact',
          compacted_before: loaded.subject.previous !== null,
          cut: cutJson(plan, ids),
          ...(plan.kind === 'skip' ? { reason: plan.reason } : {}),
        };
        output.record(record);
        const cut = record.cut;
        rows.push([
          fitPath(path, 27),
          formatTokens(record.messages),
          formatTokens(record.estimated_tokens),
          formatTokens(record.context_tokens),
          record.would_compact ? 'yes' : 'no',
          cut ? `${cut.index}${cut.split_turn ? ' (split)' : ''}` : '-',
        ]);
      },
    );
    if (!output.json && rows.length > 0) {
      const table = renderTable(
        [
          { header: 'session', align: 'left' },
          { header: 'messages' },
          { header: 'tokens' },
          { header: 'context' },
          { header: 'compact' },
          { header: 'cut at' },
        ],
        rows,
      );
      process.stdout.write(`${table}\n`);
    }
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
  },
};
