/**
 * Prices and context window for a session: `--price-model` (or the model the session names, and the
 * models its billed calls name) looked up in the offline catalog, with `--price-*` flags
 * overriding single rates. Flags are validated once; the lookup runs per session, since
 * sessions may use different models. The window rule is src/pricing/window.ts.
 */
import type { Argv } from 'yargs';
import type { CostSplit } from '../cost/billing.js';
import type { BilledCall, Ledgers } from '../ledgers/ledgers.js';
import { billedCost, billedModels, eachBilledCall, LedgersSum } from '../ledgers/ledgers.js';
import { DEFAULT_CONTEXT_LIMIT } from '../compaction/policy.js';
import { UsageError } from '../errors.js';
import { settingFlag, withRenamedFlag } from './options.js';
import type { CatalogModel, Rate, Rates } from '../pricing/catalog.js';
import { flatRate, lookupModel, oneHourWriteRate } from '../pricing/catalog.js';
import type { ContextWindow } from '../pricing/window.js';
import { sessionWindow } from '../pricing/window.js';
import type { AnyMessage, Session } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';

export interface PricingArgs {
  'price-model'?: string;
  'price-input'?: number;
  'price-output'?: number;
  'price-cache-read'?: number;
  'price-cache-write'?: number;
  'price-cache-write-1h'?: number;
}

const PRICE_FLAGS = [
  ['price-input', 'input'],
  ['price-output', 'output'],
  ['price-cache-read', 'cacheRead'],
  ['price-cache-write', 'cacheWrite'],
  ['price-cache-write-1h', 'cacheWrite1h'],
] as const;

export type PriceOverrides = Partial<Record<keyof Rates, number>>;

/** The pricing flags of `inspect` and `replay`: `--price-model` (old spelling `--model`, with a warning) and `--price-*`. */
export function withPricing<T>(yargs: Argv<T>, command: 'inspect' | 'replay') {
  return withRenamedFlag(yargs.option(...settingFlag('price_model', command)), 'price_model', command)
    .option('price-input', { describe: '$ per million uncached input tokens', type: 'number' })
    .option('price-output', { describe: '$ per million output tokens', type: 'number' })
    .option('price-cache-read', { describe: '$ per million cache-read tokens', type: 'number' })
    .option('price-cache-write', { describe: '$ per million cache-write tokens (five-minute writes)', type: 'number' })
    .option('price-cache-write-1h', { describe: '$ per million one-hour cache-write tokens (default: the catalog\'s, else 2 x input)', type: 'number' });
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

/** What one model is priced at. */
export interface ModelPricing {
  /** The model name: --model, else the one the session or the call names; null when none. */
  readonly model: string | null;
  readonly catalog: CatalogModel | null;
  /** null when nothing is known: no catalog match and no --price-* flag. */
  readonly rates: Rates | null;
  readonly source: 'catalog' | 'flags' | 'catalog+flags' | null;
}

export interface Pricing extends ModelPricing {
  /** Every model a billed call names, each priced (the session's own among them); all --model's with it. */
  readonly models: readonly ModelPricing[];
  /** The window the session ran with (src/pricing/window.ts), --context-limit included. */
  readonly window: ContextWindow;
}

/** The first timestamp in the session: prices are looked up as of when it ran. */
function sessionDate(session: Session<AnyMessage>): Date | undefined {
  const stamp = session.messages.find((message) => message.timestamp)?.timestamp;
  return stamp ? new Date(stamp) : undefined;
}

async function priceModel(name: string | null, at: Date | undefined, overrides: PriceOverrides): Promise<ModelPricing> {
  const catalog = name ? await lookupModel(name, at) : null;
  const flagged = Object.keys(overrides).length > 0;
  const pick = (key: keyof Rates, fallback: Rate): Rate => (overrides[key] !== undefined ? flatRate(overrides[key]) : (catalog?.rates[key] ?? fallback));
  let rates: Rates | null = null;
  if (catalog || flagged) {
    const input = pick('input', flatRate(0));
    // With no catalog entry, cached tokens cost what plain input does (no discount we know of).
    rates = {
      input,
      output: pick('output', flatRate(0)),
      cacheRead: pick('cacheRead', input),
      cacheWrite: pick('cacheWrite', input),
      cacheWrite1h: pick('cacheWrite1h', oneHourWriteRate(input)),
    };
  }
  return { model: name, catalog, rates, source: catalog && flagged ? 'catalog+flags' : catalog ? 'catalog' : flagged ? 'flags' : null };
}

/**
 * Prices for the session's model (`--model`, else its own) and for every other model its billed
 * calls name (`callModels`; --model replaces them all), and its window. `contextLimit`: the flag.
 */
export async function resolvePricing(
  session: Session<AnyMessage>,
  model: string | undefined,
  overrides: PriceOverrides,
  contextLimit?: number,
  callModels: Iterable<string | null> = [],
): Promise<Pricing> {
  const at = sessionDate(session);
  const main = await priceModel(model ?? session.model ?? null, at, overrides);
  const models = [main];
  if (model === undefined) {
    for (const name of new Set(callModels)) if (name !== main.model) models.push(await priceModel(name, at, overrides));
  }
  const window = await sessionWindow(session, { flag: contextLimit, model, catalog: main.catalog });
  return { ...main, models, window };
}

/** The rates a call naming `model` is billed at (--model has already replaced every name). */
export function ratesFor(pricing: Pricing): (model: string | null) => Rates | null {
  const byName = new Map(pricing.models.map((entry) => [entry.model, entry.rates]));
  return (name) => (byName.has(name) ? byName.get(name)! : pricing.rates);
}

/** A session's billed calls priced: its pricing (window included) and both ledgers. */
export interface PricedSession {
  readonly pricing: Pricing;
  readonly ledgers: Ledgers;
}

/**
 * `model`: --model; `contextLimit`: --context-limit. `visit` is handed each billed call with its
 * cost (null when its model has no price): the context's calls in `calls` order, then the
 * off-context ones (ledgers.ts billedCalls). Each is built as it is handed over and dropped
 * after, so a long session's billed forms and costs (about 300 bytes a call) are never held
 * together.
 */
export async function priceSession(
  session: Session<AnyMessage>,
  calls: readonly ProviderCall[],
  options: { readonly model: string | undefined; readonly overrides: PriceOverrides; readonly contextLimit: number | undefined },
  visit?: (call: BilledCall, cost: CostSplit | null) => void,
): Promise<PricedSession> {
  const models = billedModels(session, calls, options.model);
  const pricing = await resolvePricing(session, options.model, options.overrides, options.contextLimit, models);
  const rates = ratesFor(pricing);
  const ledgers = new LedgersSum();
  eachBilledCall(session, calls, options.model, (call) => {
    const cost = billedCost(call, rates);
    ledgers.add(call, cost);
    visit?.(call, cost);
  });
  return { pricing, ledgers: ledgers.ledgers() };
}

/** Warnings worth printing for this pricing: models the catalog does not know, and the fallback window. */
export function pricingWarnings(pricing: Pricing): string[] {
  const warnings: string[] = [];
  for (const entry of pricing.models) {
    if (!entry.model || entry.catalog) continue;
    const window = entry === pricing.models[0] && pricing.window.source === 'fallback' ? `: window ${DEFAULT_CONTEXT_LIMIT.toLocaleString('en-US')}` : '';
    const cost = entry.rates ? '' : `${window ? ',' : ':'} no cost (pass --price-input/--price-output)`;
    warnings.push(`model ${JSON.stringify(entry.model)} is not in the price catalog${window}${cost}`);
  }
  return warnings;
}

function ratesJson(rates: Rates | null) {
  return rates
    ? {
        input: rates.input.base,
        output: rates.output.base,
        cache_read: rates.cacheRead.base,
        cache_write: rates.cacheWrite.base,
        cache_write_1h: rates.cacheWrite1h.base,
      }
    : null;
}

/** The pricing as `--json` reports it: what was matched, the base rates in $ per million, the window. */
export function pricingJson(pricing: Pricing) {
  return {
    model: pricing.model,
    catalog_model: pricing.catalog?.id ?? null,
    provider: pricing.catalog?.provider ?? null,
    source: pricing.source,
    context_window: pricing.window.tokens,
    context_window_source: pricing.window.source,
    usd_per_million: ratesJson(pricing.rates),
    models: pricing.models.map((entry) => ({
      model: entry.model,
      catalog_model: entry.catalog?.id ?? null,
      provider: entry.catalog?.provider ?? null,
      source: entry.source,
      usd_per_million: ratesJson(entry.rates),
    })),
  };
}
