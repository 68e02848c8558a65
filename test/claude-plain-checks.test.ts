/**
 * The Claude Code reader's plain checks (claude-code.ts plainChatLine, anthropic-content.ts
 * isPlainUsage, isPlainContent), which let a chat line through without zod's copy: each may
 * answer "yes" only for a value zod's own schema accepts, and then zod's output must hold the
 * same values as the line. Random near-valid lines (every field swapped for an odd value in turn,
 * and several at once) are put to both.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anthropicContentSchema, anthropicUsageSchema, isPlainContent, isPlainUsage } from '../src/formats/anthropic-content.js';
import { chatLineSchema, plainChatLine } from '../src/formats/claude-code-lines.js';

/** Values that break one rule or another of the schemas. */
const odd = fc.constantFrom<unknown>(undefined, null, '', 'x', 0, -1, 1.5, Number.NaN, 2 ** 60, true, [], {}, [{}], [{ type: 1 }], JSON.parse('{"__proto__":{"a":1}}'), { sessionId: '' }, { sessionId: 'abc' });

const usage = fc.record(
  {
    input_tokens: fc.oneof(fc.nat(), odd),
    output_tokens: fc.oneof(fc.nat(), odd),
    cache_creation_input_tokens: fc.oneof(fc.nat(), odd),
    cache_read_input_tokens: fc.oneof(fc.nat(), odd),
    cache_creation: fc.oneof(fc.record({ ephemeral_5m_input_tokens: fc.oneof(fc.nat(), odd), ephemeral_1h_input_tokens: fc.oneof(fc.nat(), odd) }, { requiredKeys: [] }), odd),
    service_tier: fc.string(),
  },
  { requiredKeys: [] },
);

const block = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'thinking'), text: fc.string() }),
  fc.record({ type: fc.constant('tool_use'), id: fc.oneof(fc.constant('toolu_1'), odd), name: fc.oneof(fc.constant('Read'), odd), input: fc.oneof(fc.constant({ file_path: '/a' }), odd) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('tool_result'), tool_use_id: fc.oneof(fc.constant('toolu_1'), odd), content: fc.oneof(fc.string(), odd), is_error: fc.oneof(fc.boolean(), odd) }, { requiredKeys: ['type'] }),
  odd,
);

const content = fc.oneof(fc.string(), fc.array(block, { maxLength: 3 }), odd);

/** A line that passes, and the places where a mutation puts an odd value. */
const validLine = {
  type: 'assistant',
  uuid: 'u-1',
  parentUuid: 'u-0',
  isSidechain: false,
  isCompactSummary: false,
  timestamp: '2026-01-01T00:00:00.000Z',
  requestId: 'req_1',
  forkedFrom: { sessionId: 's-1' },
  cwd: '/home',
  message: {
    role: 'assistant',
    content: [
      { type: 'text', text: 'hi' },
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } },
    ],
    id: 'msg_1',
    model: 'claude-sonnet-4-5',
    stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 3, cache_read_input_tokens: 4, cache_creation: { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 0 } },
  },
};
const PLACES = [
  ['type'],
  ['uuid'],
  ['parentUuid'],
  ['isSidechain'],
  ['isCompactSummary'],
  ['timestamp'],
  ['requestId'],
  ['forkedFrom'],
  ['forkedFrom', 'sessionId'],
  ['message'],
  ['message', 'content'],
  ['message', 'content', '0'],
  ['message', 'content', '0', 'type'],
  ['message', 'id'],
  ['message', 'model'],
  ['message', 'stop_reason'],
  ['message', 'usage'],
  ['message', 'usage', 'input_tokens'],
  ['message', 'usage', 'output_tokens'],
  ['message', 'usage', 'cache_creation_input_tokens'],
  ['message', 'usage', 'cache_read_input_tokens'],
  ['message', 'usage', 'cache_creation'],
  ['message', 'usage', 'cache_creation', 'ephemeral_5m_input_tokens'],
  ['message', 'usage', 'cache_creation', 'ephemeral_1h_input_tokens'],
];

/** The valid line with odd values put at some places (`undefined`: the key left out). */
function mutated(mutations: readonly (readonly [readonly string[], unknown])[]): Record<string, unknown> {
  const line = JSON.parse(JSON.stringify(validLine)) as Record<string, unknown>;
  for (const [place, value] of mutations) {
    let holder: unknown = line;
    for (const key of place.slice(0, -1)) holder = typeof holder === 'object' && holder !== null ? (holder as Record<string, unknown>)[key] : undefined;
    if (typeof holder === 'object' && holder !== null) (holder as Record<string, unknown>)[place.at(-1)!] = value;
  }
  return line;
}

/** The valid line with up to three places given odd values, or with other content. */
const chatLine = fc.tuple(fc.array(fc.tuple(fc.constantFrom(...PLACES), odd), { maxLength: 3 }), content).map(([mutations, someContent]) => {
  const line = mutated(mutations);
  if (mutations.length === 0) (line['message'] as Record<string, unknown>)['content'] = someContent;
  return line;
});

/** Every odd value at every place, one at a time. */
const ODD_VALUES = fc.sample(odd, { numRuns: 200, seed: 1 }).filter((value, index, all) => all.findIndex((other) => Object.is(other, value)) === index);

/** A value as JSON.parse would give it (no undefined values, own `__proto__` kept). */
const asParsed = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null');

describe('plain checks of a Claude Code chat line', () => {
  it('say yes only to what zod accepts, and zod then gives the same values', () => {
    fc.assert(
      fc.property(chatLine, (generated) => {
        const value = asParsed(generated) as Record<string, unknown>;
        if (plainChatLine(value) === null) return;
        const real = chatLineSchema.safeParse(value);
        expect(real.success).toBe(true);
        expect(real.data).toEqual(value);
      }),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('say yes only to what zod accepts, every odd value at every place in turn', () => {
    for (const place of PLACES) {
      for (const oddValue of ODD_VALUES) {
        const value = asParsed(mutated([[place, oddValue]])) as Record<string, unknown>;
        if (plainChatLine(value) === null) continue;
        const real = chatLineSchema.safeParse(value);
        expect(real.success, `${place.join('.')} = ${JSON.stringify(oddValue)}`).toBe(true);
        expect(real.data).toEqual(value);
      }
    }
  });

  it('usage and content alone, the same', () => {
    fc.assert(
      fc.property(fc.oneof(usage, odd), content, (generatedUsage, generatedContent) => {
        const usageValue = asParsed(generatedUsage);
        if (isPlainUsage(usageValue)) {
          const real = anthropicUsageSchema.nullish().safeParse(usageValue);
          expect(real.success).toBe(true);
          expect(real.data).toEqual(usageValue);
        }
        const contentValue = asParsed(generatedContent);
        if (isPlainContent(contentValue)) {
          const real = anthropicContentSchema.safeParse(contentValue);
          expect(real.success).toBe(true);
          expect(real.data).toEqual(contentValue);
        }
      }),
      { numRuns: 3000, seed: 12 },
    );
  });

  it('say yes to an ordinary line', () => {
    const line = { type: 'assistant', uuid: 'u', parentUuid: null, message: { content: [{ type: 'text', text: 'hi' }], id: 'm', usage: { input_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 2 } } } };
    expect(plainChatLine(line)).toBe(line);
  });
});
