/**
 * The strategy registry: names users pass to `--strategy` and how each is built.
 */
import { UsageError } from '../errors.js';
import type { Strategy } from './strategy.js';
import type { SummarizeOptions } from './summarize.js';
import { createSummarizeStrategy } from './summarize.js';
import { truncateStrategy } from './truncate.js';

export const STRATEGY_NAMES = ['truncate', 'summarize'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** `summarize` needs a configured summarizer (README "Summarizer configuration"). */
export function createStrategy(name: StrategyName, summarizer?: SummarizeOptions): Strategy {
  switch (name) {
    case 'truncate':
      return truncateStrategy;
    case 'summarize':
      if (!summarizer) throw new UsageError('--strategy summarize needs a summarizer: give --model (and --base-url for a server other than OpenAI), or set them in the config file');
      return createSummarizeStrategy(summarizer);
  }
}
