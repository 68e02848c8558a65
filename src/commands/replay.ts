/**
 * `compactor replay`: what-if. The same session under a compaction policy, turn by turn, with
 * input tokens (and cost, given prices) before and after.
 */
import type { CommandModule } from 'yargs';
import type { ReplayResult } from '../audit/replay.js';
import { replaySession } from '../audit/replay.js';
import { ExitCode, UsageError } from '../errors.js';
import { formatPercent, formatTokens, formatUsd } from '../report/format.js';
import { renderTable } from '../report/table.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import { runBatch } from './batch.js';
import { expandInputs } from './inputs.js';
import { loadSession } from './load.js';
import type { CommonArgs, PolicyArgs, SummaryBudgetArgs } from './options.js';
import { policyFromArgs, policyJson, strategyOptionsFromArgs, withInputs, withPolicy, withSummaryBudget } from './options.js';
import { createOutput, reportFailure } from './output.js';

interface ReplayArgs extends CommonArgs, PolicyArgs, SummaryBudgetArgs {
  strategy: StrategyName;
  'price-input'?: number;
  'price-output'?: number;
}

interface Prices {
  readonly input: number;
  readonly output: number;
}

function pricesFromArgs(args: ReplayArgs): Prices | null {
  const input = args['price-input'];
  const output = args['price-output'];
  if (input === undefined && output === undefined) return null;
  for (const [name, value] of [['price-input', input], ['price-output', output]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new UsageError(`--${name} must be a number >= 0`);
  }
  return { input: input ?? 0, output: output ?? 0 };
}

/** Dollars: tokens × $ per million. The summarizer's own calls are charged to "after". */
function costJson(result: ReplayResult, prices: Prices) {
  const { totals } = result;
  const perToken = (tokens: number, price: number) => (tokens * price) / 1_000_000;
  const output = perToken(totals.outputTokens, prices.output);
  const before = perToken(totals.inputTokensBefore, prices.input) + output;
  const after =
    perToken(totals.inputTokensAfter + totals.summarizerInputTokens, prices.input) +
    output +
    perToken(totals.summarizerOutputTokens, prices.output);
  return { before_usd: before, after_usd: after, saved_usd: before - after };
}

function replayJson(path: string, result: ReplayResult) {
  return {
    session: path,
    turns: result.turns.map((turn) => ({
      turn: turn.turn,
      requests: turn.requests,
      baseline_before: turn.baselineBefore,
      baseline_after: turn.baselineAfter,
      input_tokens_before: turn.inputTokensBefore,
      input_tokens_after: turn.inputTokensAfter,
      compacted: turn.compactions.length > 0,
      compactions: turn.compactions.map((event) => ({
        trigger: event.trigger,
        first_kept_message_id: event.firstKeptMessageId,
        tokens_before: event.tokensBefore,
        tokens_after: event.tokensAfter,
        summary_tokens: event.summaryTokens,
      })),
    })),
    totals: {
      requests: result.totals.requests,
      input_tokens_before: result.totals.inputTokensBefore,
      input_tokens_after: result.totals.inputTokensAfter,
      output_tokens: result.totals.outputTokens,
      reduction: result.totals.reduction,
      compactions: result.totals.compactions,
      summarizer_input_tokens: result.totals.summarizerInputTokens,
      summarizer_output_tokens: result.totals.summarizerOutputTokens,
    },
  };
}

function humanReport(path: string, result: ReplayResult, cost: ReturnType<typeof costJson> | null): string {
  const rows = result.turns.map((turn) => [
    String(turn.turn),
    formatTokens(turn.requests),
    formatTokens(turn.baselineBefore),
    formatTokens(turn.baselineAfter),
    formatTokens(turn.inputTokensBefore),
    formatTokens(turn.inputTokensAfter),
    turn.compactions.map((event) => (event.trigger === 'overflow' ? 'overflow' : 'yes')).join(',') || '',
  ]);
  const table = renderTable(
    [
      { header: 'turn' },
      { header: 'calls' },
      { header: 'base before' },
      { header: 'base after' },
      { header: 'input before' },
      { header: 'input after' },
      { header: 'compacted', align: 'left' },
    ],
    rows,
  );
  const { totals } = result;
  const lines = [
    path,
    table,
    `input tokens ${formatTokens(totals.inputTokensBefore)} -> ${formatTokens(totals.inputTokensAfter)} ` +
      `(-${formatPercent(totals.reduction)}), ${totals.compactions} compaction${totals.compactions === 1 ? '' : 's'}`,
  ];
  if (cost) lines.push(`cost ${formatUsd(cost.before_usd)} -> ${formatUsd(cost.after_usd)} (saved ${formatUsd(cost.saved_usd)})`);
  return `${lines.join('\n')}\n`;
}

export const replayCommand: CommandModule<object, ReplayArgs> = {
  command: 'replay <inputs..>',
  describe: 'Replay sessions under a compaction policy: tokens and cost before/after',
  builder: (yargs) =>
    withSummaryBudget(withPolicy(withInputs(yargs)))
      .option('strategy', { describe: 'summary used for the simulated compactions', choices: STRATEGY_NAMES, default: 'truncate' as StrategyName })
      .option('price-input', { describe: '$ per million input tokens', type: 'number' })
      .option('price-output', { describe: '$ per million output tokens', type: 'number' }) as never,
  handler: async (args) => {
    const policy = policyFromArgs(args);
    const prices = pricesFromArgs(args);
    const strategy = createStrategy(args.strategy, strategyOptionsFromArgs(args));
    const paths = await expandInputs(args.inputs);
    const output = createOutput(args.json);
    const outcomes = await runBatch(
      paths,
      async (path) => {
        const loaded = await loadSession(path, { format: args.format, withSidecar: false });
        return replaySession({
          sessionName: loaded.subject.sessionName,
          messages: loaded.session.messages,
          tokens: loaded.tokens,
          policy,
          strategy,
        });
      },
      ({ path, ...outcome }) => {
        if (!outcome.ok) return reportFailure(output, path, outcome.error);
        const cost = prices ? costJson(outcome.value, prices) : null;
        const record = { ...replayJson(path, outcome.value), policy: policyJson(policy), strategy: strategy.name, cost };
        output.record(record, () => humanReport(path, outcome.value, cost));
      },
    );
    await output.close();
    process.exitCode = outcomes.some((outcome) => !outcome.ok) ? ExitCode.failed : ExitCode.ok;
  },
};
