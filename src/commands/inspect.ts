/**
 * `compactor inspect`: the token-growth audit, turn by turn (seed 004's trace).
 */
import type { CommandModule } from 'yargs';
import type { TurnUsage } from '../audit/turns.js';
import { groupTurns, totalUsage, turnUsage } from '../audit/turns.js';
import { ExitCode } from '../errors.js';
import { formatTokens } from '../report/format.js';
import { renderTable } from '../report/table.js';
import type { Diagnostic } from '../session/model.js';
import { providerCalls } from '../tokens/provider-calls.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import { sessionTask } from '../workers/task.js';
import { selectInputs } from './inputs.js';
import { loadSession } from './load.js';
import type { CommonArgs } from './options.js';
import { jobsFromArgs, withInputs } from './options.js';
import { createOutput, reportFailure } from './output.js';
import type { ReadTaskOptions } from './sessions.js';
import { runSessions } from './sessions.js';
import { parseShard } from './shard.js';

function humanReport(path: string, format: string, messages: number, turns: readonly TurnUsage[]): string {
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
  return `${path} (${format}, ${formatTokens(messages)} messages, ${turns.length} turns)\n${table}${note}\n`;
}

type InspectOptions = ReadTaskOptions;

interface InspectResult {
  readonly format: string;
  readonly model: string | null;
  readonly messages: number;
  readonly turns: readonly TurnUsage[];
  readonly warnings: readonly Diagnostic[];
}

/** One session's audit (runs in a worker thread for big batches). Needs no message text. */
export const inspectSessionTask = sessionTask(import.meta.url, 'inspectSessionTask', async (path: string, options: InspectOptions): Promise<InspectResult> => {
  const count = await loadTextCounter(options.tokenizer);
  const loaded = await loadSession(path, { format: options.format, withSidecar: false, count, messages: 'lean' });
  const calls = providerCalls(loaded.session.messages, loaded.tokens);
  return {
    format: loaded.session.format,
    model: loaded.session.model ?? null,
    messages: loaded.session.messages.length,
    turns: groupTurns(loaded.session.messages, calls).map(turnUsage),
    warnings: loaded.warnings,
  };
});

export const inspectCommand: CommandModule<object, CommonArgs> = {
  command: 'inspect <inputs..>',
  describe: 'Audit token growth per turn',
  builder: (yargs) => withInputs(yargs) as never,
  handler: async (args) => {
    const paths = await selectInputs(args.inputs, parseShard(args.shard));
    const output = createOutput(args.json);
    const options: InspectOptions = { format: args.format, tokenizer: args.tokenizer };
    const outcomes = await runSessions(
      paths,
      inspectSessionTask,
      options,
      ({ path, ...outcome }) => {
        if (!outcome.ok) return reportFailure(output, path, outcome.error);
        const { turns, warnings } = outcome.value;
        warnings.forEach((warning) => output.warn(warning));
        const totals = totalUsage(turns);
        const record = {
          session: path,
          format: outcome.value.format,
          model: outcome.value.model,
          messages: outcome.value.messages,
          turns: turns.map((turn) => ({
            turn: turn.turn,
            baseline_input_tokens: turn.baselineInputTokens,
            requests: turn.requests,
            input_tokens: turn.inputTokens,
            output_tokens: turn.outputTokens,
            estimated: turn.estimated,
          })),
          totals: { requests: totals.requests, input_tokens: totals.inputTokens, output_tokens: totals.outputTokens },
        };
        output.record(record, () => humanReport(path, outcome.value.format, outcome.value.messages, turns));
      },
      jobsFromArgs(args),
    );
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
  },
};
