/**
 * Context windows of models we know, so `--summarizer-context` has a sensible default. Models
 * not listed fall back to DEFAULT_SUMMARIZER_CONTEXT (128k, as for any unknown model).
 */

export const DEFAULT_SUMMARIZER_CONTEXT = 128_000;

/** Longest matching prefix wins; names are matched lower-cased, after any `provider/` prefix. */
const CONTEXT_WINDOWS: readonly (readonly [prefix: string, tokens: number])[] = [
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['gpt-5', 400_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['claude-', 200_000],
  ['gemini-1.5', 1_048_576],
  ['gemini-2', 1_048_576],
  ['llama3.1', 128_000],
  ['llama-3.1', 128_000],
  ['llama3.2', 128_000],
  ['llama3', 8_192],
  ['mistral-small', 32_000],
  ['qwen2.5', 32_768],
];

/** The model's context window in tokens, or null when we do not know the model. */
export function knownContextWindow(model: string): number | null {
  const name = model.toLowerCase().split('/').pop() ?? '';
  let best: readonly [string, number] | null = null;
  for (const entry of CONTEXT_WINDOWS) {
    if (name.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best ? best[1] : null;
}
