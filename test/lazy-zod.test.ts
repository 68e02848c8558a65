/**
 * The schemas' plain checks (src/lazy-zod.ts) against zod itself: whenever a plain check accepts
 * a value, zod must accept it too and return the same data, key for key in the same order. A
 * plain check may leave any value to zod; it may never answer differently. Random values are
 * built from the keys and values the schemas look for, so most are near misses of a valid shape.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anthropicContentSchema, anthropicUsageSchema } from '../src/formats/anthropic-content.js';
import { forkedFromSchema } from '../src/formats/claude-code-spend.js';
import { realSchema, withoutZod, z } from '../src/lazy-zod.js';
import { settingsLayerSchema } from '../src/config/settings.js';
import { sidecarSchema, summarizeDetailsSchema } from '../src/sidecar/schema.js';

/** Same data and same key order all the way down (what JSON output and hashes would see). */
function sameData(a: unknown, b: unknown, path = '$'): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return `${path}: ${String(a)} ≠ ${String(b)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array and object`;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.join('\u0000') !== keysB.join('\u0000')) return `${path}: keys ${keysA.join(',')} ≠ ${keysB.join(',')}`;
  for (const key of keysA) {
    const difference = sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`);
    if (difference) return difference;
  }
  return null;
}

const KEYS = [
  'type', 'text', 'id', 'name', 'input', 'arguments', 'tool_request_id', 'output', 'is_error', 'role', 'content', 'sessionId',
  'input_tokens', 'output_tokens', 'cache_read_input_tokens', 'model', 'requests', 'chunks', 'overflow_splits', 'strategy',
  'keep_recent', 'reserve', 'tokenizer', 'base_url', 'timeout', 'api_key_env', 'extra', 'format_version', 'session',
] as const;
const WORDS = ['text', 'thinking', 'tool_request', 'tool_result', 'tool_use', 'user', 'assistant', 'summarize', 'truncate', 'o200k', '', 'x', '25%', '101%', 'http://h/v1', 'API_KEY', '1'];

const leaf = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.string({ maxLength: 4 }),
  fc.constantFrom(0, 1, 2, 3, -1, 0.5, 100, 1e20, Number.MAX_SAFE_INTEGER + 2),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('object'), fc.array(tie('value'), { maxLength: 3 })),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 6, noNullPrototype: true }),
}));

/** Checks one schema: plain answers agree with zod's. Returns how many values the plain check answered. */
function agree(schema: unknown, values: fc.Arbitrary<unknown>, runs = 2_000): number {
  let sure = 0;
  fc.assert(
    fc.property(values, (input) => {
      const plain = withoutZod(schema, input);
      if (!plain.sure) return;
      sure++;
      const real = realSchema(schema).safeParse(input);
      expect(real.success, JSON.stringify(input)).toBe(true);
      expect(sameData(plain.data, real.data), JSON.stringify(input)).toBeNull();
    }),
    { numRuns: runs, seed: 7 },
  );
  return sure;
}

/**
 * Objects near a shape: each named key mostly its first (valid) value, sometimes absent or one of
 * the others (near misses, other valid values), sometimes another key too, in random order.
 */
const ABSENT = Symbol('absent');
function near(fields: Record<string, readonly unknown[]>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([key, [first, ...others]]) =>
    fc.oneof({ weight: 12, arbitrary: fc.constant(first) }, { weight: 1, arbitrary: fc.constant(ABSENT) }, ...others.map((other) => ({ weight: 1, arbitrary: fc.constant(other) }))).map((chosen) => [key, chosen] as const),
  );
  const extra = fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 2, noNullPrototype: true }) });
  return fc.tuple(fc.tuple(...entries), extra, fc.boolean()).map(([chosen, others, othersFirst]) => {
    const named = Object.fromEntries(chosen.filter(([, v]) => v !== ABSENT));
    return othersFirst ? { ...others, ...named } : { ...named, ...others };
  });
}

const COUNTS = [0, 1, 7, -1, 2.5, '3', null];
const REASONS = ['empty', 'cut-off', 'over-budget', 'continued', 'not-a-summary', 'unreadable', 'other'];

/** Every construct the plain checks model, each with the values that reach it. */
const block = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_request'), id: z.string().min(1), name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('tool_result'), tool_request_id: z.string().min(1), output: z.string(), is_error: z.boolean().default(false) }),
]);
const blocks = near({
  type: ['text', 'tool_request', 'tool_result', 'thinking', 1],
  text: ['hi', '', 2],
  id: ['c1', '', null],
  name: ['Read', ''],
  arguments: [{}, { path: 'a', n: 1 }, { b: [1], a: null }, [], 'x'],
  tool_request_id: ['c1', ''],
  output: ['ok', 3],
  is_error: [true, false, 'no', null],
});
const cases: Record<string, [unknown, fc.Arbitrary<unknown>]> = {
  'loose object, nullish, enum': [
    z.looseObject({ role: z.enum(['user', 'assistant']), name: z.string().nullish(), model: z.string().nullable() }),
    near({ role: ['user', 'assistant', 'system', 1], name: ['a', null, 1], model: ['m', null, undefined, 2] }),
  ],
  'strict partial object with transforms': [
    z
      .object({
        keep_recent: z.unknown().transform((v, context) => (typeof v === 'number' ? v * 2 : (context.addIssue({ code: 'custom', message: 'no' }), z.NEVER))),
        reserve: z.number().int().nonnegative(),
      })
      .partial()
      .strict(),
    near({ keep_recent: [1, 'x', null], reserve: COUNTS }),
  ],
  'discriminated union with a default': [block, blocks],
  'array of a union': [z.array(z.union([z.string(), z.looseObject({ type: z.string() }), z.null()])), fc.array(fc.oneof(leaf, near({ type: ['a', 1], text: ['b'] })), { maxLength: 4 })],
  'default, optional, catch, regex, positive': [
    z.looseObject({
      is_error: z.boolean().default(false),
      output: z.string().optional(),
      sessionId: z.looseObject({ id: z.string().min(1) }).nullish().catch(null),
      id: z.string().regex(/^[a-z]+$/),
      requests: z.number().positive().min(1),
    }),
    near({ is_error: [true, 'x'], output: ['o', 1], sessionId: [{ id: 'a' }, { id: '' }, null, 'x', {}], id: ['abc', 'ABC', '', 'abc', 'abc'], requests: [1, 0, 2.5, 3, 3, -1, 'x'] }),
  ],
  'record': [z.record(z.string(), z.unknown()), fc.oneof(value, near({ a: [1, undefined], b: [null] }))],
  'object with an unknown value': [z.object({ name: z.string(), input: z.unknown() }), near({ name: ['n', 'n', 1], input: [{}, null, 'x', undefined] })],
  'project: anthropicUsageSchema': [
    anthropicUsageSchema,
    near({ input_tokens: COUNTS, output_tokens: COUNTS, cache_read_input_tokens: COUNTS, cache_creation_input_tokens: COUNTS, service_tier: ['standard', null] }),
  ],
  'project: anthropicContentSchema': [anthropicContentSchema, fc.oneof(fc.string(), fc.array(blocks, { maxLength: 3 }), value)],
  'project: forkedFromSchema': [forkedFromSchema, fc.oneof(near({ sessionId: ['s', '', 1] }), leaf)],
  'project: summarizeDetailsSchema': [
    summarizeDetailsSchema,
    near({
      model: ['m', 1],
      requests: COUNTS,
      chunks: COUNTS,
      overflow_splits: COUNTS,
      rejected_replies: [[], [{ reason: 'empty', reply_tokens: 3 }], [{ reason: 'empty', reply_tokens: null, extra: 1 }], [{ reason: 'other', reply_tokens: 1 }], null],
    }),
  ],
  'project: sidecarSchema': [
    sidecarSchema,
    near({
      format_version: [1, 1, 2],
      session: ['s.jsonl', ''],
      strategy: ['truncate', 'summarize', ''],
      fallback: [false, 'no'],
      summary: ['sum'],
      turn_prefix_summary: [null, 'p', 1],
      first_kept_message_id: ['m1', ''],
      first_kept_index: COUNTS,
      tokens_before: [10],
      tokens_after: [5],
      summary_tokens: [2],
      messages_summarized: [3],
      messages_summarized_total: [3],
      summarized_hash: [`sha256:${'a'.repeat(64)}`, 'sha256:x'],
      read_files: [[], ['a'], [1]],
      modified_files: [[]],
      compactions: [1, 0],
      usage: [null, { input_tokens: 1, output_tokens: 2 }, { input_tokens: 1 }],
      dropped_outputs: [undefined, [], [{ tool_request_id: 't', message_id: 'm', tool: 'Read', reason: 'superseded-read', kept_tool_request_id: 'k', tokens: 4, extra: 1 }]],
      pruned_outputs: [undefined, null, [{ tool_request_id: 't', message_id: 'm', tool: 'Read', arguments: '{}', tokens: 4 }]],
      details: [{}, { model: 'm', requests: 1, chunks: 1, overflow_splits: 0 }, { model: 'm' }],
      created_at: ['2026-01-01T00:00:00Z'],
      tool_version: ['0.1.0'],
    }),
  ],
  'project: settingsLayerSchema': [
    settingsLayerSchema,
    // base_url's rules are zod's alone (any value given is unsure), so it is left out here.
    near({ keep_recent: [100, '25%', '101%', -1, 2.5], reserve: [0, 'x'], strategy: ['truncate', 'magic'], tokenizer: ['o200k', 'x'], timeout: [30, 0, -1], api_key_env: ['API_KEY', '1x'] }),
  ],
};

describe('plain checks answer as zod does', () => {
  for (const [name, [schema, values]] of Object.entries(cases)) {
    it(name, () => {
      agree(schema, value);
      // Enough of the near values are valid for the comparison to mean something.
      expect(agree(schema, values)).toBeGreaterThan(100);
    });
  }

  it('accept the valid shapes without zod', () => {
    // Not a speed claim: these are the shapes a valid session holds, so they must not need zod.
    expect(withoutZod(block, { type: 'tool_result', tool_request_id: 'c1', output: 'ok' })).toEqual({ sure: true, data: { type: 'tool_result', tool_request_id: 'c1', output: 'ok', is_error: false } });
    expect(withoutZod(anthropicContentSchema, [{ text: 'hi', type: 'text' }])).toEqual({ sure: true, data: [{ type: 'text', text: 'hi' }] });
    expect(withoutZod(anthropicUsageSchema, { input_tokens: 3, output_tokens: 4 }).sure).toBe(true);
    expect(withoutZod(settingsLayerSchema, {}).sure).toBe(true);
  });
});
