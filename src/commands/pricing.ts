/**
 * Prices and context window for a session: `--model` (or the model the session names) looked
 * up in the offline catalog, with `--price-*` flags overriding single rates. Flags are
 * validated once; the lookup runs per session, since sessions may use different models.
 */
import type { Argv } from 'yargs';
import { DEFAULT_CONTEXT_LIMIT } from '../compaction/policy.js';
import { UsageError } from '../errors.js';
import type { CatalogModel, Rate, Rates } from '../pricing/catalog.js';
import { flatRate, lookupModel } from '../pricing/catalog.js';
import type { Session } from '../session/model.js';

export interface PricingArgs {
  model?: string;
  'price-input'?: number;
  'price-output'?: number;
  'price-cache-read'?: number;
  'price-cache-write'?: number;
}

const PRICE_FLAGS = [
  ['price-input', 'input'],
  ['price-output', 'output'],
  ['price-cache-read', 'cacheRead'],
  ['price-cache-write', 'cacheWrite'],
] as const;

export type PriceOverrides = Partial<Record<keyof Rates, number>>;

export function withPricing<T>(yargs: Argv<T>) {
  return yargs
    .option('model', { describe: "model for prices and window (default: the session's own)", type: 'string' })
    .option('price-input', { describe: '$ per million uncached input tokens', type: 'number' })
    .option('price-output', { describe: '$ per million output tokens', type: 'number' })
    .option('price-cache-read', { describe: '$ per million cache-read tokens', type: 'number' })
    .option('price-cache-write', { describe: '$ per million cache-write tokens', type: 'number' });
}

export function priceOverrides(args: PricingArgs): PriceOverrides {
  const overrides: PriceOverrides = {};
  for (const [flag, key] of PRICE_FLAGS) {
    const value = args[flag];
    if (value === undefined) continue;
    if (!(Number.isFinite(value) && value >= 0)) throw new UsageError(`--${flag} must be a number >= 0, got ${String(value)}`);
    overrides[key] = value;
  }
  return overrides;
}

export interface Pricing {
  /** The model name used: --model, else the session's; null when neither. */
  readonly model: string | null;
  readonly catalog: CatalogModel | null;
  /** null when nothing is known: no catalog match and no --price-* flag. */
  readonly rates: Rates | null;
  readonly source: 'catalog' | 'flags' | 'catalog+flags' | null;
  /** The catalog's window, else the 128,000 fallback (seed 000). */
  readonly contextWindow: number;
}

/** The first timestamp in the session: prices are looked up as of when it ran. */
function sessionDate(session: Session): Date | undefined {
  const stamp = session.messages.find((message) => message.timestamp)?.timestamp;
  return stamp ? new Date(stamp) : undefined;
}

export async function resolvePricing(session: Session, model: string | undefined, overrides: PriceOverrides): Promise<Pricing> {
  const name = model ?? session.model ?? null;
  const catalog = name ? await lookupModel(name, sessionDate(session)) : null;
  const flagged = Object.keys(overrides).length > 0;
  const pick = (key: keyof Rates, fallback: Rate): Rate => (overrides[key] !== undefined ? flatRate(overrides[key]) : (catalog?.rates[key] ?? fallback));
  let rates: Rates | null = null;
  if (catalog || flagged) {
    const input = pick('input', flatRate(0));
    // With no catalog entry, cached tokens cost what plain input does (no discount we know of).
    rates = { input, output: pick('output', flatRate(0)), cacheRead: pick('cacheRead', input), cacheWrite: pick('cacheWrite', input) };
  }
  return {
    model: name,
    catalog,
    rates,
    source: catalog && flagged ? 'catalog+flags' : catalog ? 'catalog' : flagged ? 'flags' : null,
    contextWindow: catalog?.contextWindow ?? DEFAULT_CONTEXT_LIMIT,
  };
}

/** A warning worth printing for this pricing, or null. */
export function pricingWarning(pricing: Pricing): string | null {
  if (pricing.model && !pricing.catalog) {
    return `model ${JSON.stringify(pricing.model)} is not in the price catalog: window ${DEFAULT_CONTEXT_LIMIT.toLocaleString('en-US')}${pricing.rates ? '' : ', no cost (pass --price-input/--price-output)'}`;
  }
  return null;
}

/** The pricing as `--json` reports it: what was matched and the base rates in $ per million. */
export function pricingJson(pricing: Pricing) {
  const rates = pricing.rates;
  return {
    model: pricing.model,
    catalog_model: pricing.catalog?.id ?? null,
    provider: pricing.catalog?.provider ?? null,
    source: pricing.source,
    context_window: pricing.contextWindow,
    usd_per_million: rates
      ? { input: rates.input.base, output: rates.output.base, cache_read: rates.cacheRead.base, cache_write: rates.cacheWrite.base }
      : null,
  };
}
