#!/usr/bin/env node
/**
 * Generates the small canonical sessions the audit tests compute by hand (fixtures/audit/):
 *
 * - growth.jsonl: 3 turns with every kind of content (system prompt, user text, thinking,
 *   assistant text, tool calls, tool results from read_file / bash / grep), one file read three
 *   times, Anthropic-style cache usage on every call, a model from the catalog
 *   (claude-sonnet-4-5), and a 10-minute pause before turn 3 (the prompt cache expires).
 *   Every block is sized to an exact number of characters so its chars/4 estimate is known.
 * - prune.jsonl: 7 turns, each reading one 16,000-token file; no usage, no model. Under the
 *   opencode preset the start of turn 7 prunes the outputs of turns 1 and 2 (the last two turns
 *   and 40,000 more tokens of output are protected).
 *
 * Deterministic: no clock, no randomness.   node scripts/make-audit-fixtures.js
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'audit');
mkdirSync(out, { recursive: true });

/** Text of exactly `tokens` × 4 characters, readable enough to look like a file. */
function text(tokens, seed) {
  const line = `// ${seed}: line of source text for the audit fixture\n`;
  return line.repeat(Math.ceil((tokens * 4) / line.length)).slice(0, tokens * 4);
}

function write(name, records) {
  writeFileSync(join(out, name), records.map((record) => JSON.stringify(record)).join('\n') + '\n');
}

// ── growth.jsonl ─────────────────────────────────────────────────────────────────────────
const t = (minute, second = 0) => `2026-03-01T10:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}Z`;
const call = (id, name, args) => ({ type: 'tool_request', id, name, arguments: args });
const result = (id, tokens, seed) => ({ type: 'tool_result', tool_request_id: id, output: text(tokens, seed), is_error: false });
const usage = (input, cacheRead, cacheWrite, output) => ({
  input_tokens: input,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
  output_tokens: output,
  model: 'claude-sonnet-4-5',
});

write('growth.jsonl', [
  { id: 's1', role: 'system', content: text(100, 'system'), timestamp: t(0) },
  { id: 'u1', role: 'user', content: text(50, 'user one'), timestamp: t(0, 1) },
  {
    id: 'a1',
    role: 'assistant',
    content: [{ type: 'thinking', text: text(200, 'think') }, { type: 'text', text: text(25, 'reply') }, call('r1', 'read_file', { path: 'src/app.ts' })],
    metadata: usage(10, 0, 2000, 250),
    timestamp: t(0, 5),
  },
  { id: 'u2', role: 'user', content: [result('r1', 3000, 'app.ts')], timestamp: t(0, 6) },
  { id: 'a2', role: 'assistant', content: [{ type: 'text', text: text(40, 'done one') }], metadata: usage(10, 2000, 3300, 40), timestamp: t(0, 10) },
  { id: 'u3', role: 'user', content: text(30, 'user two'), timestamp: t(1) },
  { id: 'a3', role: 'assistant', content: [call('b1', 'bash', { command: 'npm test' })], metadata: usage(10, 5300, 80, 20), timestamp: t(1, 5) },
  { id: 'u4', role: 'user', content: [result('b1', 1200, 'npm test')], timestamp: t(1, 6) },
  { id: 'a4', role: 'assistant', content: [call('r2', 'read_file', { path: 'src/app.ts' })], metadata: usage(10, 5390, 1230, 20), timestamp: t(1, 10) },
  { id: 'u5', role: 'user', content: [result('r2', 3000, 'app.ts')], timestamp: t(1, 11) },
  { id: 'a5', role: 'assistant', content: [{ type: 'text', text: text(60, 'done two') }], metadata: usage(10, 6630, 3020, 60), timestamp: t(1, 20) },
  { id: 'u6', role: 'user', content: text(20, 'user three'), timestamp: t(12) },
  {
    id: 'a6',
    role: 'assistant',
    content: [call('g1', 'grep', { pattern: 'TODO' }), call('r3', 'read_file', { path: 'src/app.ts' })],
    metadata: usage(9740, 0, 0, 30),
    timestamp: t(12, 5),
  },
  { id: 'u7', role: 'user', content: [result('g1', 400, 'grep'), result('r3', 3000, 'app.ts')], timestamp: t(12, 6) },
  { id: 'a7', role: 'assistant', content: [{ type: 'text', text: text(80, 'done three') }], metadata: usage(10, 9740, 3430, 80), timestamp: t(12, 15) },
]);

// ── prune.jsonl ──────────────────────────────────────────────────────────────────────────
const prune = [];
for (let turn = 1; turn <= 7; turn++) {
  const stamp = `2026-03-02T09:00:${String(turn * 5).padStart(2, '0')}Z`;
  prune.push({ id: `u${turn}`, role: 'user', content: text(40, `ask ${turn}`), timestamp: stamp });
  prune.push({ id: `a${turn}a`, role: 'assistant', content: [call(`r${turn}`, 'read_file', { path: `src/file${turn}.ts` })], timestamp: stamp });
  prune.push({ id: `t${turn}`, role: 'user', content: [result(`r${turn}`, 16_000, `file ${turn}`)], timestamp: stamp });
  prune.push({ id: `a${turn}b`, role: 'assistant', content: [{ type: 'text', text: text(30, `answer ${turn}`) }], timestamp: stamp });
}
write('prune.jsonl', prune);
