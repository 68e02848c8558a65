/**
 * The summarizer flags `compact` and `replay` share, and turning them (with COMPACTOR_*
 * variables and the config file) into a strategy. The precedence itself lives in
 * llm/settings.ts; the client in llm/client.ts.
 */
import type { Argv } from 'yargs';
import { defaultConfigPath, loadConfigFile, ON_ERROR_CHOICES, settingsFromEnv } from '../llm/config.js';
import { createChatClient } from '../llm/client.js';
import type { ResolvedSummarizer, SummarizerSettings } from '../llm/settings.js';
import { readApiKey, resolveSummarizer, validateFlags } from '../llm/settings.js';
import { chunkBudgetTokens, MIN_CHUNK_TOKENS } from '../llm/fold.js';
import { UsageError } from '../errors.js';
import type { SummarizeOptions } from '../strategies/summarize.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy } from '../strategies/index.js';
import type { CompactionStrategy } from '../strategies/strategy.js';
import { logSummarizer } from './log.js';
import { strategyOptionsFromArgs } from './options.js';
import { simulatedClient } from '../llm/simulated.js';
import { DEFAULT_SUMMARIZER_CONTEXT } from '../llm/models.js';
import { SUMMARIZER_DEFAULTS } from '../llm/settings.js';

export interface SummarizerArgs {
  config?: string;
  'base-url'?: string;
  model?: string;
  'summarizer-model'?: string;
  'api-key-env'?: string;
  'max-summary-tokens'?: number;
  instructions?: string;
  timeout?: number;
  'summarizer-context'?: number;
  concurrency?: number;
  'on-error'?: string;
  'max-retries'?: number;
  verbose: boolean;
}

/**
 * Which flag names the summarizer's model. `compact` uses `--model`; `replay`, where `--model`
 * names the session's model for prices and window (see pricing.ts), uses `--summarizer-model`.
 */
export type SummarizerModelFlag = 'model' | 'summarizer-model';

/** No yargs defaults here: an unset flag must fall through to the environment and the config file. */
export function withSummarizer<T>(yargs: Argv<T>, modelFlag: SummarizerModelFlag = 'model') {
  return yargs
    .option('config', { describe: 'config file [default: $XDG_CONFIG_HOME/session-compactor/config.json]', type: 'string' })
    .option('base-url', { describe: 'OpenAI-compatible endpoint, e.g. http://localhost:11434/v1', type: 'string' })
    .option(modelFlag, { describe: 'summarizer model', type: 'string' })
    .option('api-key-env', { describe: 'variable holding the API key [default: OPENAI_API_KEY]', type: 'string' })
    .option('max-summary-tokens', { describe: 'reply budget per summarizer call [default: 8192]', type: 'number' })
    .option('instructions', { describe: 'focus for the summary: TEXT or @FILE', type: 'string' })
    .option('timeout', { describe: 'seconds per summarizer request [default: 300]', type: 'number' })
    .option('summarizer-context', { describe: "summarizer's window [default: model's or 128000]", type: 'number' })
    .option('concurrency', { describe: 'sessions at once [default: 4]', type: 'number' })
    .option('on-error', { describe: 'when the summarizer fails [default: fail]', choices: ON_ERROR_CHOICES as unknown as string[] })
    .option('max-retries', { describe: 'retries on 429/5xx/connection errors [default: 2]', type: 'number' })
    .option('verbose', { describe: 'log summarizer requests (no headers, no key), and compact\'s compaction events', type: 'boolean', default: false });
}

/** Flags > COMPACTOR_* variables > config file > defaults. */
export async function summarizerFromArgs(
  args: SummarizerArgs,
  env: NodeJS.ProcessEnv = process.env,
  modelFlag: SummarizerModelFlag = 'model',
): Promise<ResolvedSummarizer> {
  const flags = validateFlags({
    base_url: args['base-url'],
    model: args[modelFlag],
    api_key_env: args['api-key-env'],
    max_summary_tokens: args['max-summary-tokens'],
    instructions: args.instructions,
    timeout: args.timeout,
    summarizer_context: args['summarizer-context'],
    concurrency: args.concurrency,
    on_error: args['on-error'],
    max_retries: args['max-retries'],
  });
  const configPath = args.config ?? defaultConfigPath(env);
  const file = await loadConfigFile(configPath, args.config !== undefined);
  return resolveSummarizer({ flags, env: settingsFromEnv(env), file, configPath });
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
export async function replayStrategy(args: SummarizerArgs & { strategy?: StrategyName }, summaryTokens: number | undefined): Promise<ReplayStrategy> {
  const strategyOptions = strategyOptionsFromArgs(args); // validates --max-summary-tokens for every strategy
  const resolved = await summarizerFromArgs(args, process.env, 'summarizer-model');
  const concurrency = resolved.configured ? resolved.settings.concurrency : resolved.concurrency;
  if (summaryTokens === undefined) {
    const name = args.strategy ?? 'truncate';
    const summarizer = name === 'summarize' && resolved.configured ? { summarizer: summarizeOptions(resolved.settings, { verbose: args.verbose }) } : {};
    // --max-summary-tokens is the summarizer's reply budget, or an offline strategy's size budget.
    return { strategy: createStrategy(name, { ...strategyOptions, ...summarizer }), concurrency, simulatedSummaryTokens: null };
  }
  if (!Number.isInteger(summaryTokens) || summaryTokens < 1) throw new UsageError(`--summary-tokens must be a whole number >= 1, got ${summaryTokens}`);
  if (args.strategy === 'truncate') throw new UsageError('--summary-tokens simulates the summarize strategy; drop --strategy truncate');
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
