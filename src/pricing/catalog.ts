/**
 * Model prices and context windows from the offline catalog bundled in @pydantic/genai-prices.
 * Only the bundled data is read (the package's optional remote update is never enabled), so a
 * lookup needs no network. Cost arithmetic is left to src/cost/billing.ts.
 */
import type { ModelPrice } from '@pydantic/genai-prices';

/** The catalog is 800 kB of data: loaded on the first lookup, so commands without prices skip it. */
let catalog: Promise<typeof import('@pydantic/genai-prices')> | null = null;

/** A price in $ per million tokens that may step up once a request's prompt passes `start` tokens. */
export interface Rate {
  readonly base: number;
  readonly tiers: readonly { readonly start: number; readonly price: number }[];
}

/** The prices a provider call is billed at, in $ per million tokens. */
export interface Rates {
  readonly input: Rate;
  readonly output: Rate;
  readonly cacheRead: Rate;
  /** A cache write with the default five-minute lifetime. */
  readonly cacheWrite: Rate;
  /** A cache write with a one-hour lifetime (Anthropic's extended cache). */
  readonly cacheWrite1h: Rate;
}

export interface CatalogModel {
  /** The catalog's own id for the model the name matched (e.g. `claude-opus-4-1`). */
  readonly id: string;
  readonly provider: string;
  readonly contextWindow: number | null;
  readonly rates: Rates;
}

export function flatRate(price: number): Rate {
  return { base: price, tiers: [] };
}

/**
 * Anthropic bills a one-hour cache write at twice the input price (a five-minute one at 1.25
 * times): the price of one-hour writes wherever nothing more precise is known.
 */
export function oneHourWriteRate(input: Rate): Rate {
  return { base: input.base * 2, tiers: input.tiers.map((tier) => ({ start: tier.start, price: tier.price * 2 })) };
}

function rateOf(value: ModelPrice[string]): Rate | null {
  if (value === undefined) return null;
  if (typeof value === 'number') return flatRate(value);
  return { base: value.base, tiers: value.tiers.map((tier) => ({ start: tier.start, price: tier.price })) };
}

/**
 * Lookups whose answer is the same at any date, by name: a name the catalog does not match, or a
 * model with one price list for all time. A batch looks its few models up once a session (the
 * prices in force when it ran), and each lookup prices a call to find them (about 60 µs).
 */
const timelessLookups = new Map<string, CatalogModel | null>();

/**
 * Looks a model name up as sessions record it (`claude-opus-4-1-20250805`, `gpt-5-codex`, or
 * `provider/model`), and a name the catalog does not know with `-preview` after it: a model the
 * provider serves only as a preview is listed under that id, while an agent may record it without
 * (Gemini CLI's `gemini-3-pro`, billed as `gemini-3-pro-preview`). `at` picks the prices in force
 * then (the catalog dates its price changes).
 * A provider that lists no cache prices bills cached tokens as plain input: OpenAI has no
 * cache-write surcharge, and a model without caching reads nothing cheaper. A model with no
 * one-hour write price gets oneHourWriteRate.
 */
export async function lookupModel(name: string, at?: Date): Promise<CatalogModel | null> {
  const timeless = timelessLookups.get(name);
  if (timeless !== undefined) return timeless;
  catalog ??= import('@pydantic/genai-prices');
  const { calcPrice } = await catalog;
  const slash = name.indexOf('/');
  const attempts: { modelId: string; providerId?: string }[] = [{ modelId: name }];
  if (slash > 0) attempts.push({ modelId: name.slice(slash + 1), providerId: name.slice(0, slash) }, { modelId: name.slice(slash + 1) });
  const bare = name.slice(slash + 1);
  if (!bare.endsWith('-preview')) attempts.push({ modelId: `${bare}-preview` });
  for (const attempt of attempts) {
    const options = {
      ...(attempt.providerId ? { providerId: attempt.providerId } : {}),
      ...(at && !Number.isNaN(at.getTime()) ? { timestamp: at } : {}),
    };
    const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, attempt.modelId, options);
    if (!found) continue;
    const price = found.model_price;
    const input = rateOf(price['input_mtok']) ?? flatRate(0);
    const model: CatalogModel = {
      id: found.model.id,
      provider: found.provider.id,
      contextWindow: found.model.context_window ?? null,
      rates: {
        input,
        output: rateOf(price['output_mtok']) ?? flatRate(0),
        cacheRead: rateOf(price['cache_read_mtok']) ?? input,
        cacheWrite: rateOf(price['cache_write_mtok']) ?? input,
        cacheWrite1h: rateOf(price['cache_write_1h_mtok']) ?? oneHourWriteRate(input),
      },
    };
    // Prices listed without a date or time they apply from are the same at any date.
    if (!Array.isArray(found.model.prices)) timelessLookups.set(name, model);
    return model;
  }
  // The catalog matches a name whatever the date.
  timelessLookups.set(name, null);
  return null;
}
