/**
 * The strategy registry: names users pass to `--strategy` and how each is built.
 */
import { UsageError } from '../errors.js';
import { createExtractStrategy } from './extract.js';
import { pruneStrategy } from './prune.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { SummarizeOptions } from './summarize.js';
import { createSummarizeStrategy } from './summarize.js';
import { truncateStrategy } from './truncate.js';

import type { StrategyName } from './names.js';

export { STRATEGY_NAMES, type StrategyName } from './names.js';

export interface StrategyOptions {
  /** Size budget of an offline summary (`--max-summary-tokens`); each strategy has its own default. */
  readonly maxSummaryTokens?: number;
  /** The configured summarizer; `summarize` needs it (README "Summarizer"). */
  readonly summarizer?: SummarizeOptions;
}

export function createStrategy(name: StrategyName, options: StrategyOptions = {}): CompactionStrategy {
  switch (name) {
    case 'truncate':
      return truncateStrategy;
    case 'summarize':
      if (!options.summarizer) throw new UsageError('--strategy summarize needs a summarizer: give --model (and --base-url for a server other than OpenAI), or set them in the config file');
      return createSummarizeStrategy(options.summarizer);
    case 'extract':
      return createExtractStrategy(options.maxSummaryTokens);
    case 'prune':
      return pruneStrategy;
  }
}
