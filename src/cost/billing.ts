/**
 * Dollars from tokens. Pure: a call's tokens, split the way providers bill them (uncached input,
 * cache write, cache read, output), times the rates in force for that call's prompt size.
 * Where the rates come from is left to src/pricing and the commands.
 */
import type { Rate, Rates } from '../pricing/catalog.js';
import type { Usage } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';

/** Tokens of one provider call as billed. `input` is the uncached part of the prompt. */
export interface BilledTokens {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** The part of `cacheWrite` written for an hour (billed at Rates.cacheWrite1h); absent: none. */
  readonly cacheWrite1h?: number;
  readonly output: number;
}

export interface CostSplit {
  readonly input: number;
  readonly cacheWrite: number;
  readonly cacheRead: number;
  readonly output: number;
  readonly total: number;
}

export const ZERO_COST: CostSplit = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0, total: 0 };

/** The $/M price for a request whose prompt is `promptTokens` long (a tier applies above its start). */
export function rateAt(rate: Rate, promptTokens: number): number {
  let price = rate.base;
  for (const tier of rate.tiers) if (promptTokens > tier.start) price = tier.price;
  return price;
}

/** What one call costs. Tiers are chosen by the whole prompt, as providers bill long-context calls. */
export function callCost(tokens: BilledTokens, rates: Rates): CostSplit {
  const prompt = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  const dollars = (count: number, rate: Rate) => (count * rateAt(rate, prompt)) / 1_000_000;
  const input = dollars(tokens.input, rates.input);
  const oneHour = Math.min(tokens.cacheWrite1h ?? 0, tokens.cacheWrite);
  const cacheWrite = dollars(tokens.cacheWrite - oneHour, rates.cacheWrite) + dollars(oneHour, rates.cacheWrite1h);
  const cacheRead = dollars(tokens.cacheRead, rates.cacheRead);
  const output = dollars(tokens.output, rates.output);
  return { input, cacheWrite, cacheRead, output, total: input + cacheWrite + cacheRead + output };
}

export function addCost(a: CostSplit, b: CostSplit): CostSplit {
  return {
    input: a.input + b.input,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheRead: a.cacheRead + b.cacheRead,
    output: a.output + b.output,
    total: a.total + b.total,
  };
}

/**
 * A running sum of costs, field by field in the order addCost adds them (so the same dollars to
 * the last bit), without a new CostSplit for every call added: a session sums tens of thousands.
 */
export class CostSum {
  private input = 0;
  private cacheWrite = 0;
  private cacheRead = 0;
  private output = 0;
  private total = 0;

  add(cost: CostSplit): void {
    this.input += cost.input;
    this.cacheWrite += cost.cacheWrite;
    this.cacheRead += cost.cacheRead;
    this.output += cost.output;
    this.total += cost.total;
  }

  split(): CostSplit {
    const { input, cacheWrite, cacheRead, output, total } = this;
    return { input, cacheWrite, cacheRead, output, total };
  }
}

export function sumCosts(costs: Iterable<CostSplit>): CostSplit {
  let total = ZERO_COST;
  for (const cost of costs) total = addCost(total, cost);
  return total;
}

/** Every prompt token at the plain input price: what the call costs with no prompt cache. */
export function naiveTokens(prompt: number, output: number): BilledTokens {
  return { input: prompt, cacheRead: 0, cacheWrite: 0, output };
}


/** A call as the session recorded it: the reported split, or, with no usage, all input uncached. */
export function recordedTokens(call: ProviderCall): BilledTokens {
  return {
    input: Math.max(0, call.input - call.cacheRead - call.cacheWrite),
    cacheRead: call.cacheRead,
    cacheWrite: call.cacheWrite,
    cacheWrite1h: call.cacheWrite1h,
    output: call.output,
  };
}

/** A call's reported usage as billed (`Usage.input` is already the uncached part). */
export function usageTokens(usage: Usage): BilledTokens {
  return { input: usage.input, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite, cacheWrite1h: usage.cacheWrite1h ?? 0, output: usage.output };
}
