/**
 * The strategy registry: names users pass to `--strategy` and how each is built.
 */
import { UsageError } from '../errors.js';
import type { Strategy } from './strategy.js';
import { truncateStrategy } from './truncate.js';

export const STRATEGY_NAMES = ['truncate', 'summarize'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export function createStrategy(name: StrategyName): Strategy {
  switch (name) {
    case 'truncate':
      return truncateStrategy;
    case 'summarize':
      throw new UsageError('--strategy summarize needs an LLM endpoint, which this version does not support yet; use --strategy truncate');
  }
}
