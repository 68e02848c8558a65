/**
 * The summarizer flags `compact` and `replay` share, and turning the resolved settings (flags,
 * COMPACTOR_* variables and the config file: options.ts runSettings) into a strategy. The
 * summarizer's precedence lives in config/summarizer.ts; the client in llm/client.ts.
 */
import type { Argv } from 'yargs';
import type { CompactingCommand, GroupKey, SettingArgs } from '../config/settings.js';
import { settingsOf } from '../config/settings.js';
import type { SettingsSources } from '../config/sources.js';
import { createChatClient } from '../llm/client.js';
import type { SummarizerSettings } from '../config/summarizer.js';
import { readApiKey, resolveSummarizer } from '../config/summarizer.js';
import { chunkBudgetTokens, MIN_CHUNK_TOKENS } from '../llm/fold.js';
import { UsageError } from '../errors.js';
import type { SummarizeOptions } from '../strategies/summarize.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy } from '../strategies/index.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import { logSummarizer } from '../pipeline/log.js';
import { strategyOptionsFromArgs, withSettings } from './options.js';
import { simulatedClient } from '../llm/simulated.js';
import { DEFAULT_SUMMARIZER_CONTEXT } from '../llm/models.js';
import { SUMMARIZER_DEFAULTS } from '../config/summarizer.js';

/**
 * The summarizer's flags as parsed, from the settings table: `compact` and `fork` name the model
 * `--model`; `replay`, where `--model` names the session's model for prices and window (see
 * pricing.ts), `--summarizer-model`.
 */
export type SummarizerArgs<C extends CompactingCommand = 'compact'> = SettingArgs<GroupKey<'summarizer'>, C> & { verbose: boolean };

/**
 * The summarizer's flags, from the settings table (config/settings.ts). No yargs defaults: an
 * unset flag must fall through to the environment and the config file (`--config` is a policy
 * flag: options.ts withPolicy).
 */
export function withSummarizer<T>(yargs: Argv<T>, command: CompactingCommand) {
  return withSettings(yargs, settingsOf('summarizer'), command).option('verbose', {
    describe: "log summarizer requests (no headers, no key), and compact's compaction events",
    type: 'boolean',
    default: false,
  });
}

/** How summarizeOptions builds the client. */
export interface ClientSetup {
  readonly verbose: boolean;
  /** A dry run calls nothing, so it reads no key and needs none. */
  readonly dryRun?: boolean;
}

/** What the summarize strategy needs, with a live client; the key is read here and kept only in the client. */
export function summarizeOptions(settings: SummarizerSettings, setup: ClientSetup, env: NodeJS.ProcessEnv = process.env): SummarizeOptions {
  if (chunkBudgetTokens(settings, 'history') < MIN_CHUNK_TOKENS) {
    throw new UsageError(
      `--summarizer-context ${settings.summarizerContext} is too small for --max-summary-tokens ${settings.maxSummaryTokens}: ` +
        'the window must hold the prompt, the running summary, the reply and a chunk of transcript',
    );
  }
  const client = createChatClient(settings, {
    apiKey: setup.dryRun ? null : readApiKey(settings, env),
    verbose: setup.verbose,
    log: logSummarizer,
  });
  return {
    client,
    maxSummaryTokens: settings.maxSummaryTokens,
    summarizerContext: settings.summarizerContext,
    instructions: settings.instructions,
  };
}

export interface ReplayStrategy {
  readonly strategy: CompactionStrategy;
  readonly concurrency: number;
  /** N with `--summary-tokens N`, else null. */
  readonly simulatedSummaryTokens: number | null;
}

/**
 * replay's strategy: truncate unless asked; `--strategy summarize` calls the real summarizer;
 * `--summary-tokens N` runs summarize over a client that answers N-token summaries without a call.
 */
export async function replayStrategy(
  args: SummarizerArgs<'replay'>,
  run: { readonly sources: SettingsSources; readonly strategy: StrategyName | undefined },
  summaryTokens: number | undefined,
): Promise<ReplayStrategy> {
  const strategyOptions = strategyOptionsFromArgs(args); // validates --max-summary-tokens for every strategy
  const resolved = await resolveSummarizer(run.sources);
  const concurrency = resolved.configured ? resolved.settings.concurrency : resolved.concurrency;
  if (summaryTokens === undefined) {
    const name = run.strategy ?? 'truncate';
    const summarizer = name === 'summarize' && resolved.configured ? { summarizer: summarizeOptions(resolved.settings, { verbose: args.verbose }) } : {};
    // --max-summary-tokens is the summarizer's reply budget, or an offline strategy's size budget.
    return { strategy: createStrategy(name, { ...strategyOptions, ...summarizer }), concurrency, simulatedSummaryTokens: null };
  }
  if (!Number.isInteger(summaryTokens) || summaryTokens < 1) throw new UsageError(`--summary-tokens must be a whole number >= 1, got ${summaryTokens}`);
  if (run.strategy === 'truncate') throw new UsageError('--summary-tokens simulates the summarize strategy; drop --strategy truncate');
  const settings = resolved.configured ? resolved.settings : null;
  const maxSummaryTokens = Math.max(summaryTokens, settings?.maxSummaryTokens ?? SUMMARIZER_DEFAULTS.maxSummaryTokens);
  const strategy = createStrategy('summarize', {
    summarizer: {
      client: simulatedClient(summaryTokens),
      maxSummaryTokens,
      summarizerContext: settings?.summarizerContext ?? DEFAULT_SUMMARIZER_CONTEXT,
      instructions: settings?.instructions ?? null,
    },
  });
  return { strategy, concurrency, simulatedSummaryTokens: summaryTokens };
}
