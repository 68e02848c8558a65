/**
 * `compact`'s and `fork`'s flags turned into a compaction job (compact/job.ts): every setting read
 * and checked up front, before any session is read; the strategy built once (with the summarizer's
 * live client when one is configured), with the token counter and the run's signal.
 */
import type { CompactJob, CompactTools } from '../compact/job.js';
import { shouldRedact } from '../compaction/redact.js';
import type { PolicyArgs, CommonArgs } from './options.js';
import { runSettings, strategyOptionsFromArgs } from './options.js';
import type { SettingArgs } from '../config/settings.js';
import { resolveSummarizer } from '../config/summarizer.js';
import { interruption, stopAtOnceOnSignal } from '../pipeline/interrupt.js';
import type { LogFormat } from '../pipeline/log.js';
import { logMessage } from '../pipeline/log.js';
import { createTempSweeper } from '../sidecar/store.js';
import { createStrategy } from '../strategies/index.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import type { SummarizerArgs } from './summarizer.js';
import { summarizeOptions } from './summarizer.js';

export type CompactArgs = CommonArgs &
  PolicyArgs &
  SummarizerArgs &
  SettingArgs<'allow_no_gain' | 'strategy' | 'relevance', 'compact'> & {
    'log-format': LogFormat;
    'dry-run': boolean;
    redact?: boolean;
  };

/** A compaction as the flags set it up. */
export interface PreparedCompaction {
  readonly job: CompactJob;
  /** This thread's: the strategy built, the counter loaded, the run's signal. */
  readonly tools: CompactTools;
  readonly concurrency: number;
  /** Clears what killed runs left beside a session, each directory listed once a run. */
  readonly sweep: (path: string) => void;
}

export async function prepareCompaction(args: CompactArgs, command: 'compact' | 'fork' = 'compact'): Promise<PreparedCompaction> {
  const strategyOptions = strategyOptionsFromArgs(args); // validates --max-summary-tokens for every strategy
  // Every setting is read and checked up front, before any session is read.
  const settings = await runSettings(args, command);
  const summarizer = await resolveSummarizer(settings.sources);
  const strategyName = settings.strategy ?? (summarizer.configured ? 'summarize' : 'truncate');
  if (!settings.strategy && !summarizer.configured) {
    logMessage('info', 'no summarizer configured (--model / --base-url, COMPACTOR_MODEL or the config file); using --strategy truncate');
  }
  const setup = { verbose: args.verbose, dryRun: args['dry-run'] };
  // A dry run writes nothing: a signal stops it at once.
  if (setup.dryRun) stopAtOnceOnSignal();
  // One --max-summary-tokens: the summarizer's reply budget, or extract's size budget.
  const strategy = createStrategy(strategyName, {
    ...strategyOptions,
    ...(summarizer.configured && strategyName === 'summarize' ? { summarizer: summarizeOptions(summarizer.settings, setup) } : {}),
  });
  const { concurrency, onError } = summarizer.configured ? summarizer.settings : summarizer;
  // Redaction defaults on when the transcript goes to a remote endpoint; truncate sends nothing.
  const endpoint = strategyName === 'summarize' && summarizer.configured ? summarizer.settings.baseUrl : null;
  const { tokenizer } = settings;
  const count = tokenizer === 'heuristic' ? undefined : await loadTextCounter(tokenizer);
  const job: CompactJob = {
    format: args.format,
    tokenizer,
    strict: args.strict,
    policy: { kind: 'settings', values: settings.policy },
    dryRun: args['dry-run'],
    redact: shouldRedact(args.redact, endpoint),
    relevance: settings.relevance,
    strategy: strategyName,
    strategyOptions,
    onError,
  };
  return { job, tools: { strategy, count, signal: interruption.signal }, concurrency, sweep: createTempSweeper() };
}
