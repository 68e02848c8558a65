/**
 * The strategy registry: names users pass to `--strategy` and how each is built.
 */
import { UsageError } from '../errors.js';
import { createExtractStrategy } from './extract.js';
import { pruneStrategy } from './prune.js';
import type { CompactionStrategy } from './strategy.js';
import { truncateStrategy } from './truncate.js';

export const STRATEGY_NAMES = ['truncate', 'summarize', 'extract', 'prune'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export interface StrategyOptions {
  /** Size budget of a summary (`--max-summary-tokens`); each strategy has its own default. */
  readonly maxSummaryTokens?: number;
}

export function createStrategy(name: StrategyName, options: StrategyOptions = {}): CompactionStrategy {
  switch (name) {
    case 'truncate':
      return truncateStrategy;
    case 'summarize':
      throw new UsageError('--strategy summarize needs an LLM endpoint, which this version does not support yet; use --strategy truncate');
    case 'extract':
      return createExtractStrategy(options.maxSummaryTokens);
    case 'prune':
      return pruneStrategy;
  }
}
