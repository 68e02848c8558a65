/**
 * Cost lines for human output: the four-way split and the rates it was priced at.
 */
import type { CostSplit } from './billing.js';
import type { Rate, Rates } from '../pricing/catalog.js';
import { formatUsd } from '../report/format.js';

export function formatCostSplit(cost: CostSplit): string {
  return `input ${formatUsd(cost.input)}, cache write ${formatUsd(cost.cacheWrite)}, cache read ${formatUsd(cost.cacheRead)}, output ${formatUsd(cost.output)}, total ${formatUsd(cost.total)}`;
}

/** `input 15.00, output 75.00, cache read 1.50, cache write 18.75` ($ per million, base tier). */
export function formatRates(rates: Rates): string {
  const price = (rate: Rate) => rate.base.toFixed(2);
  return `input ${price(rates.input)}, output ${price(rates.output)}, cache read ${price(rates.cacheRead)}, cache write ${price(rates.cacheWrite)}`;
}

/** The smallest prompt size above which some rate is higher, or null when prices are flat. */
export function firstTier(rates: Rates): number | null {
  const starts = [rates.input, rates.output, rates.cacheRead, rates.cacheWrite].flatMap((rate) => rate.tiers.map((tier) => tier.start));
  return starts.length > 0 ? Math.min(...starts) : null;
}
