/**
 * The prompt-cache model used by cache-aware replay. Pure.
 *
 * Providers cache a prompt's prefix: a call whose prompt starts with what the previous call sent
 * reads that part at the cache-read price and writes the rest (Anthropic-style breakpoint at the
 * end of every prompt). We model exactly that, and nothing finer:
 * - the first call, and any call more than the cache lifetime after the previous one, writes its
 *   whole prompt; the lifetime is the session's own (cacheLifetime): five minutes, or one hour
 *   when its writes were one-hour writes, and the writes are priced as such;
 * - otherwise a call reads min(previous prompt, unchanged prefix) and writes the rest;
 * - the unchanged prefix is the whole previous prompt for an append-only conversation; after a
 *   compaction it is only the stable prefix (system prompt and tool schemas, which precede the
 *   summary); after pruning it ends where the first pruned message starts;
 * - no uncached input: every prompt token is either read or written.
 * What a call's prompt is, and when it was rewritten, is left to src/replay/simulate.ts.
 */
import type { AnyMessage } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import { sum } from '../tokens/estimate.js';
import type { BilledTokens } from '../cost/billing.js';

/** Anthropic's default cache lifetime (5 minutes); OpenAI keeps prefixes at least as long. */
export const CACHE_TTL_MS = 5 * 60 * 1000;

/** How long a cache write lives: Anthropic's default five minutes, or its extended hour. */
export type CacheLifetime = '5m' | '1h';

export const CACHE_LIFETIME_MS: Readonly<Record<CacheLifetime, number>> = { '5m': CACHE_TTL_MS, '1h': 60 * 60 * 1000 };

/**
 * The lifetime a session's cache ran with: one hour when most of the tokens it wrote to the
 * cache were one-hour writes (Claude Code 2.x asks for them), five minutes otherwise.
 */
export function cacheLifetime(calls: readonly { readonly cacheWrite: number; readonly cacheWrite1h: number }[]): CacheLifetime {
  let written = 0;
  let oneHour = 0;
  for (const call of calls) {
    written += call.cacheWrite;
    oneHour += Math.min(call.cacheWrite1h, call.cacheWrite);
  }
  return oneHour * 2 > written ? '1h' : '5m';
}

/** A call that reads `read` tokens of its prompt from the cache and writes the rest, for `lifetime`. */
export function readAndWrite(read: number, prompt: number, output: number, lifetime: CacheLifetime): BilledTokens {
  const write = prompt - read;
  return { input: 0, cacheRead: read, cacheWrite: write, cacheWrite1h: lifetime === '1h' ? write : 0, output };
}
export interface PromptStep {
  readonly prompt: number;
  readonly output: number;
  /** Prompt tokens unchanged since the previous call when the prefix was rewritten; null if append-only. */
  readonly unchanged: number | null;
  /** True when the previous call is older than the cache lifetime. */
  readonly expired: boolean;
}

/** How each call of a sequence is billed under the cache model above. */
export function cachedTokens(steps: readonly PromptStep[], lifetime: CacheLifetime = '5m'): BilledTokens[] {
  let previous: number | null = null;
  return steps.map((step) => {
    const billed = cachedCall(step, previous, lifetime);
    previous = step.prompt;
    return billed;
  });
}

/** How one step is billed, after a call whose prompt was `previous` tokens (null: the first call). */
export function cachedCall(step: PromptStep, previous: number | null, lifetime: CacheLifetime): BilledTokens {
  const read = previous === null || step.expired ? 0 : Math.min(previous, step.unchanged ?? Infinity, step.prompt);
  return readAndWrite(read, step.prompt, step.output, lifetime);
}

/**
 * Tokens every prompt carries before the first message (system prompt, tool schemas): the first
 * reported prompt minus the estimates of the messages before it. 0 when no call reports usage.
 * A compaction leaves this prefix in place, so it stays cached.
 */
export function stablePrefixTokens(calls: readonly ProviderCall[], tokens: readonly number[]): number {
  const reported = calls.find((call) => !call.estimated);
  if (!reported) return 0;
  return Math.max(0, reported.input - sum(tokens, 0, reported.index));
}

/** For each call, whether the cache had expired since the previous call (by message timestamps). */
export function cacheExpiry(messages: readonly AnyMessage[], calls: readonly { readonly index: number }[], lifetime: CacheLifetime = '5m'): boolean[] {
  const ttl = CACHE_LIFETIME_MS[lifetime];
  let previous: number | null = null;
  return calls.map((call) => {
    const stamp = messages[call.index]?.timestamp;
    const time = stamp === undefined ? Number.NaN : Date.parse(stamp);
    const expired = previous !== null && !Number.isNaN(time) && time - previous > ttl;
    if (!Number.isNaN(time)) previous = time;
    return expired;
  });
}
