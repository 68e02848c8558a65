/**
 * `--on-error truncate`: when the summarizer fails, a truncate summary is written instead and
 * marked `fallback: true`. An earlier LLM summary is kept in front of it, so one failed call
 * does not throw away what previous compactions learned.
 */
import type { Strategy } from '../compaction/strategy.js';
import { previousForUpdate, withFileOps } from './summarize.js';
import { truncateStrategy } from './truncate.js';

/** truncate's own one-line counts (`[Compacted N messages: …]`); a fallback recomputes them. */
const TRUNCATE_COUNT_LINE = /^\[Compacted \d+ messages:[^\n]*\]\n*/gm;

export function truncateFallback(reason: string): Strategy {
  return {
    name: truncateStrategy.name,
    async summarize(input) {
      const output = await truncateStrategy.summarize(input);
      const earlier = input.previous && (input.previous.strategy !== truncateStrategy.name || input.previous.fallback) ? previousForUpdate(input) : null;
      const kept = earlier?.replace(TRUNCATE_COUNT_LINE, '').trim();
      return {
        ...output,
        summary: kept ? withFileOps(`${kept}\n\n${output.summary.split('\n')[0]}`, input) : output.summary,
        fallback: true,
        details: { ...output.details, fallback_reason: reason },
      };
    },
  };
}
