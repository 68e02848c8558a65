/**
 * Rebuilds the provider calls of a session: each assistant message is one call whose input is
 * everything before it. Reported usage is used where the file has it; elsewhere the input is
 * the hybrid estimate of the prefix, so a session with partial usage still adds up.
 */
import type { AnyMessage, RecordedCompaction } from '../session/model.js';
import { isProviderCall, promptTokens } from '../session/model.js';
import type { ContextLookups } from './estimate.js';
import { estimateContextTokens, reportsPrompt } from './estimate.js';
import { RangeSums } from './range-sums.js';

export interface ProviderCall {
  /** Index of the assistant message this call produced. */
  readonly index: number;
  /** Prompt tokens (cached parts included). */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** The part of `cacheWrite` written for an hour (Usage.cacheWrite1h; 0 when none or unknown). */
  readonly cacheWrite1h: number;
  /** False when the file reported usage for this call. */
  readonly estimated: boolean;
}

/** `compactions`: the agent's own, so an estimated call counts only what its window held. */
export function providerCalls(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  compactions: readonly RecordedCompaction[] = [],
): ProviderCall[] {
  const calls: ProviderCall[] = [];
  // An estimated call starts from the last reported prompt before it and sums what follows:
  // scanning for both at every call is quadratic in a session that reports no usage. Calls come
  // in order, so the last report is tracked on the way, and the sums (built only when a call
  // needs one) take O(log n).
  let lastReported = -1;
  let sums: RangeSums | null = null;
  const lookups: ContextLookups = {
    sum: (from, to) => (sums ??= new RangeSums(tokens)).sum(from, to),
    lastReported: () => lastReported,
  };
  const callOf = (message: AnyMessage, index: number): ProviderCall => {
    const usage = message.usage;
    if (usage && promptTokens(usage) > 0) {
      return {
        index,
        input: promptTokens(usage),
        output: usage.output,
        cacheRead: usage.cacheRead,
        cacheWrite: usage.cacheWrite,
        cacheWrite1h: usage.cacheWrite1h ?? 0,
        estimated: false,
      };
    }
    return {
      index,
      input: estimateContextTokens(messages, tokens, index, compactions, lookups),
      output: usage?.output || (tokens[index] ?? 0),
      cacheRead: 0,
      cacheWrite: 0,
      cacheWrite1h: 0,
      estimated: true,
    };
  };
  messages.forEach((message, index) => {
    if (isProviderCall(message)) calls.push(callOf(message, index));
    if (reportsPrompt(message)) lastReported = index;
  });
  return calls;
}
