/**
 * The names users pass to `--strategy`, apart from the strategies themselves: the settings table
 * (config/settings.ts) reads them without loading any strategy (the summarizer's pulls in its client).
 */
export const STRATEGY_NAMES = ['truncate', 'summarize', 'extract', 'prune'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];
