/**
 * `--tokenizer`: which TextCounter estimates use. `heuristic` is chars/4; `o200k` and
 * `cl100k` count exactly with gpt-tokenizer (pure JavaScript, ships its ranks, works offline).
 * The rank tables take a while to load and some memory, so they are loaded only when asked.
 */
import type { TextCounter } from './estimate.js';
import { heuristicCounter } from './estimate.js';

export const TOKENIZER_NAMES = ['heuristic', 'o200k', 'cl100k'] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

/**
 * Transcripts quote special-token text such as `<|endoftext|>` (gpt-tokenizer refuses it by
 * default): count it as the plain text it is, as a provider would.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

const loaded = new Map<TokenizerName, Promise<TextCounter>>();

async function load(name: TokenizerName): Promise<TextCounter> {
  switch (name) {
    case 'heuristic':
      return heuristicCounter;
    case 'o200k': {
      const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
      return (text) => (text.length === 0 ? 0 : countTokens(text, PLAIN_TEXT));
    }
    case 'cl100k': {
      const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');
      return (text) => (text.length === 0 ? 0 : countTokens(text, PLAIN_TEXT));
    }
  }
}

/** The counter for a tokenizer name, loaded once per thread. */
export function loadTextCounter(name: TokenizerName): Promise<TextCounter> {
  let counter = loaded.get(name);
  if (!counter) {
    counter = load(name);
    loaded.set(name, counter);
  }
  return counter;
}
