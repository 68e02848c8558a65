/**
 * --tokenizer: the exact counters are gpt-tokenizer's own counts, and `estimate` adds them up
 * per block exactly as the estimator defines (README "What the numbers mean").
 */
import { readFile } from 'node:fs/promises';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { loadTextCounter } from '../../src/tokens/tokenizers.js';
import { heuristicCounter } from '../../src/tokens/estimate.js';
import { jsonLines, runCli } from '../helpers/cli.js';

const TEXTS = ['', 'hello world', 'const x = await fetch(url); // ✓ → ├── 日本語', '{"command":"ls -la src/"}', 'a'.repeat(5000)];
const PLAIN = { disallowedSpecial: new Set<string>() };

describe('loadTextCounter', () => {
  it('counts exactly what gpt-tokenizer counts, for o200k and cl100k', async () => {
    const o = await loadTextCounter('o200k');
    const c = await loadTextCounter('cl100k');
    for (const text of TEXTS) {
      expect(o(text)).toBe(o200k(text));
      expect(c(text)).toBe(cl100k(text));
    }
    // The two encodings differ (Cyrillic text is a plain case).
    expect(o('Привет, как дела? Всё хорошо.')).toBe(9);
    expect(c('Привет, как дела? Всё хорошо.')).toBe(17);
  });

  it('counts special-token text as the plain text it is, instead of refusing it', async () => {
    const o = await loadTextCounter('o200k');
    expect(() => o200k('before <|endoftext|> after')).toThrow();
    expect(o('before <|endoftext|> after')).toBe(o200k('before <|endoftext|> after', PLAIN));
    expect(o('before <|endoftext|> after')).toBeGreaterThan(5);
  });

  it('keeps chars/4 as the default', async () => {
    expect(await loadTextCounter('heuristic')).toBe(heuristicCounter);
  });
});

describe('compactor estimate --tokenizer', () => {
  it('sums gpt-tokenizer counts over every block of bug.jsonl', async () => {
    let expected = 0;
    for (const line of (await readFile('fixtures/bug.jsonl', 'utf8')).split('\n').filter(Boolean)) {
      const { content } = JSON.parse(line) as { content: string | Record<string, any>[] };
      const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
      for (const block of blocks) {
        const text = block.type === 'tool_request' ? block.name + JSON.stringify(block.arguments) : block.type === 'tool_result' ? block.output : block.text;
        expected += text ? o200k(text, PLAIN) : 0;
      }
    }
    const result = await runCli(['estimate', '--json', '--tokenizer', 'o200k', 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record!.estimated_tokens).toBe(expected);
    const heuristic = jsonLines((await runCli(['estimate', '--json', 'fixtures/bug.jsonl'])).stdout)[0]!;
    expect(heuristic.estimated_tokens).toBe(76_012);
    expect(record!.estimated_tokens).not.toBe(76_012);
  });
});
