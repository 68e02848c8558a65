/**
 * A ChatClient that calls nothing: for `replay --summary-tokens N`, every reply is a stand-in
 * summary of N tokens and its usage is the prompt's chars/4 estimate plus N. Running the real
 * summarize strategy over it keeps chunking and folding, so replay's summarizer cost is the
 * cost the real endpoint would charge for summaries of that size.
 */
import { CHARS_PER_TOKEN, heuristicCounter } from '../tokens/estimate.js';
import type { ChatClient } from './client.js';
import { CHECKPOINT_SECTIONS, TURN_PREFIX_SECTIONS } from './prompts.js';

export const SIMULATED_MODEL = 'simulated';

/** Headings of both summary kinds, then filler up to `tokens` tokens (chars/4). */
export function simulatedSummary(tokens: number): string {
  const headings = [...CHECKPOINT_SECTIONS, ...TURN_PREFIX_SECTIONS].map((section) => `## ${section}`).join('\n');
  const head = `${headings}\n(simulated summary of ${tokens} tokens)\n`;
  const fill = Math.max(0, tokens * CHARS_PER_TOKEN - head.length);
  return head + '.'.repeat(fill);
}

export function simulatedClient(summaryTokens: number): ChatClient {
  const text = simulatedSummary(summaryTokens);
  return {
    model: SIMULATED_MODEL,
    complete: async (request) => ({
      text,
      finishReason: 'stop',
      usage: { input: heuristicCounter(request.system) + heuristicCounter(request.user), output: heuristicCounter(text) },
      usageEstimated: true,
    }),
  };
}
