/**
 * Cost lines for human output: the four-way split and the rates it was priced at.
 */
import type { CostSplit } from '../audit/cost.js';
import type { Rate, Rates } from '../pricing/catalog.js';
import { formatUsd } from './format.js';

export function formatCostSplit(cost: CostSplit): string {
  return `input ${formatUsd(cost.input)}, cache write ${formatUsd(cost.cacheWrite)}, cache read ${formatUsd(cost.cacheRead)}, output ${formatUsd(cost.output)}, total ${formatUsd(cost.total)}`;
}

function formatRate(rate: Rate): string {
  const tiers = rate.tiers.map((tier) => ` (${formatUsd(tier.price)} above ${Math.round(tier.start / 1000)}k)`).join('');
  return `${formatUsd(rate.base)}${tiers}`;
}

/** `$15.00 in, $75.00 out, $1.50 cache read, $18.75 cache write per million` */
export function formatRates(rates: Rates): string {
  return `${formatRate(rates.input)} in, ${formatRate(rates.output)} out, ${formatRate(rates.cacheRead)} cache read, ${formatRate(rates.cacheWrite)} cache write per million`;
}
