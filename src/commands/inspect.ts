/**
 * `compactor inspect`: the token-growth audit, turn by turn (seed 004's trace).
 */
import type { CommandModule } from 'yargs';
import type { RecordedCompactionEffect } from '../audit/recorded.js';
import { recordedCompactionEffects } from '../audit/recorded.js';
import type { TurnUsage } from '../audit/turns.js';
import { groupTurns, totalUsage, turnUsage } from '../audit/turns.js';
import { ExitCode } from '../errors.js';
import { formatTokens } from '../report/format.js';
import { describeRecordedCompaction, recordedCompactionJson } from '../report/recorded-compactions.js';
import { renderTable } from '../report/table.js';
import { providerCalls } from '../tokens/provider-calls.js';
import { runBatch } from './batch.js';
import { expandInputs } from './inputs.js';
import { loadSession } from './load.js';
import type { CommonArgs } from './options.js';
import { withInputs } from './options.js';
import { createOutput, reportFailure } from './output.js';

function humanReport(
  path: string,
  format: string,
  messages: number,
  turns: readonly TurnUsage[],
  recorded: readonly RecordedCompactionEffect[],
): string {
  const totals = totalUsage(turns);
  const rows = turns.map((turn) => [
    String(turn.turn),
    formatTokens(turn.requests),
    formatTokens(turn.baselineInputTokens) + (turn.estimated ? '*' : ''),
    formatTokens(turn.inputTokens),
    formatTokens(turn.outputTokens),
  ]);
  rows.push(['total', formatTokens(totals.requests), '', formatTokens(totals.inputTokens), formatTokens(totals.outputTokens)]);
  const table = renderTable(
    [{ header: 'turn' }, { header: 'requests' }, { header: 'baseline' }, { header: 'input tokens' }, { header: 'output tokens' }],
    rows,
  );
  const note = turns.some((turn) => turn.estimated) ? '\n* estimated (the file reports no usage for some calls)' : '';
  const agent = recorded.map((effect) => `\n${describeRecordedCompaction(effect)}`).join('');
  return `${path} (${format}, ${formatTokens(messages)} messages, ${turns.length} turns)\n${table}${note}${agent}\n`;
}

export const inspectCommand: CommandModule<object, CommonArgs> = {
  command: 'inspect <inputs..>',
  describe: 'Audit token growth per turn',
  builder: (yargs) => withInputs(yargs) as never,
  handler: async (args) => {
    const paths = await expandInputs(args.inputs);
    const output = createOutput(args.json);
    const outcomes = await runBatch(
      paths,
      async (path) => {
        const loaded = await loadSession(path, { format: args.format, withSidecar: false });
        const { messages, recordedCompactions } = loaded.session;
        const calls = providerCalls(messages, loaded.tokens, recordedCompactions);
        return {
          loaded,
          turns: groupTurns(messages, calls).map(turnUsage),
          recorded: recordedCompactionEffects(messages, loaded.tokens, recordedCompactions, calls),
        };
      },
      ({ path, ...outcome }) => {
        if (!outcome.ok) return reportFailure(output, path, outcome.error);
        const { loaded, turns, recorded } = outcome.value;
        loaded.warnings.forEach((warning) => output.warn(warning));
        const totals = totalUsage(turns);
        const record = {
          session: path,
          format: loaded.session.format,
          model: loaded.session.model ?? null,
          messages: loaded.session.messages.length,
          turns: turns.map((turn) => ({
            turn: turn.turn,
            baseline_input_tokens: turn.baselineInputTokens,
            requests: turn.requests,
            input_tokens: turn.inputTokens,
            output_tokens: turn.outputTokens,
            estimated: turn.estimated,
          })),
          totals: { requests: totals.requests, input_tokens: totals.inputTokens, output_tokens: totals.outputTokens },
          recorded_compactions: recorded.map(recordedCompactionJson),
        };
        output.record(record, () => humanReport(path, loaded.session.format, loaded.session.messages.length, turns, recorded));
      },
    );
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
  },
};
