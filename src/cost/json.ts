/**
 * Costs in `--json` output: the four-way split in dollars and its total. Pure.
 */
import type { CostSplit } from './billing.js';

/** The `cost` object of `--json` output. */
export function costJson(cost: CostSplit) {
  return {
    input_usd: cost.input,
    cache_write_usd: cost.cacheWrite,
    cache_read_usd: cost.cacheRead,
    output_usd: cost.output,
    total_usd: cost.total,
  };
}
