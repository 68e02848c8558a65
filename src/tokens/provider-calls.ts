/**
 * Rebuilds the provider calls of a session: each assistant message is one call whose input is
 * everything before it. Reported usage is used where the file has it; elsewhere the input is
 * the hybrid estimate of the prefix, so a session with partial usage still adds up.
 */
import type { Message, RecordedCompaction } from '../session/model.js';
import { isProviderCall, promptTokens } from '../session/model.js';
import { estimateContextTokens } from './estimate.js';

export interface ProviderCall {
  /** Index of the assistant message this call produced. */
  readonly index: number;
  /** Prompt tokens (cached parts included). */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** False when the file reported usage for this call. */
  readonly estimated: boolean;
}

/** `compactions`: the agent's own, so an estimated call counts only what its window held. */
export function providerCalls(
  messages: readonly Message[],
  tokens: readonly number[],
  compactions: readonly RecordedCompaction[] = [],
): ProviderCall[] {
  const calls: ProviderCall[] = [];
  messages.forEach((message, index) => {
    if (!isProviderCall(message)) return;
    const usage = message.usage;
    if (usage && promptTokens(usage) > 0) {
      calls.push({
        index,
        input: promptTokens(usage),
        output: usage.output,
        cacheRead: usage.cacheRead,
        cacheWrite: usage.cacheWrite,
        estimated: false,
      });
    } else {
      calls.push({
        index,
        input: estimateContextTokens(messages, tokens, index, compactions),
        output: usage?.output || (tokens[index] ?? 0),
        cacheRead: 0,
        cacheWrite: 0,
        estimated: true,
      });
    }
  });
  return calls;
}
