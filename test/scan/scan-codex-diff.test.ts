/**
 * The WebAssembly scanner's Codex reader (src/formats/codex-scanned.ts) against the JavaScript
 * reader, the reference: on a read that only measures text (estimate, inspect), both must give
 * the same session (slim messages, recorded compactions, spend, warnings, aborted turns), the
 * same estimates and inspect's growth facts, and the same error at the same line. Run over every
 * Codex rollout of the fixtures (the real ones among them, reviews and forks with theirs), and
 * over random files of near-valid and invalid rollout lines (test/helpers/random-lines.ts: keys
 * spaced, escaped and repeated, wrong types, cut lines, bytes that are no UTF-8, NULs, CRs, a BOM,
 * characters of one to four bytes at every offset, huge strings).
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCodexWith } from '../../src/formats/codex.js';
import * as layout from '../../src/scan/codex-layout.js';
import { ClaudeScanner, scannerModule } from '../../src/scan/scanner.js';
import { FIXTURES } from '../helpers/cli.js';
import { expectSameRead as sameRead, jsonlFiles } from '../helpers/scanned-read.js';
import { mostly, odd, PROTO_KEY, randomFile, text } from '../helpers/random-lines.js';

const module = scannerModule();
/** One scanner for every scanned read here, as a thread lends its own to one read after another. */
const scanner = module ? new ClaudeScanner(module) : null;

/** The file read the same with the scanner as without it (test/helpers/scanned-read.ts); whether the read succeeded. */
const expectSameRead = (path: string) => sameRead(readCodexWith, path, scanner);

/** The kind of each record the scanner writes for `bytes` (one scan of the whole file). */
function recordKinds(bytes: Buffer): number[] {
  if (scanner!.input.length < bytes.length) scanner!.growInput(bytes.length, 0);
  scanner!.input.set(bytes);
  const kinds: number[] = [];
  for (let from = 0; from < bytes.length; ) {
    const scan = scanner!.scanCodex(from, bytes.length, true, 0);
    for (let at = 0; at < scan.words.length; at += scan.words[at + layout.CODEX_WORD_LENGTH]!) kinds.push(scan.words[at]! & 0xff);
    if (!scan.full) break;
    from = scan.end;
  }
  return kinds;
}

describe('the Codex scanner', () => {
  it('is built, loads here, and has the record layout src/scan/ reads', () => {
    expect(module).not.toBeNull();
    const instance = new WebAssembly.Instance(module!, { env: { abort: () => {} } });
    for (const [name, value] of Object.entries(layout)) expect((instance.exports[name] as WebAssembly.Global | undefined)?.value, name).toBe(value);
  });
});

describe('the scanned Codex reader against the JavaScript reader', () => {
  const files = [...jsonlFiles(join(FIXTURES, 'real', 'codex')), ...jsonlFiles(join(FIXTURES, 'agents', 'codex')), ...jsonlFiles(join(FIXTURES, 'formats')).filter((file) => file.includes('codex'))];

  it('reads every Codex fixture and real rollout alike', async () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
    const kinds = new Set<number>();
    for (const file of files) {
      await expectSameRead(file);
      const { readFileSync } = await import('node:fs');
      for (const kind of recordKinds(readFileSync(file))) kinds.add(kind);
    }
    // The fixtures put every kind of record to work.
    expect([...kinds].sort()).toEqual(Object.entries(layout).filter(([name]) => name.startsWith('CODEX_KIND_')).map(([, value]) => value).sort());
  });

  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'compactor-scan-codex-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads random near-valid and invalid rollout lines alike', async () => {
    let run = 0;
    /** Lines by what the scanner made of them: the random files must put both ways to work. */
    const kinds = new Map<number, number>();
    let read = 0;
    await fc.assert(
      fc.asyncProperty(randomFile(rolloutLine, { intact: 300 }), async (bytes) => {
        const path = join(dir, `s${run++}.jsonl`);
        writeFileSync(path, bytes);
        if (await expectSameRead(path)) read++;
        for (const kind of recordKinds(bytes)) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }),
      { numRuns: 1000 },
    );
    const total = [...kinds.values()].reduce((sum, count) => sum + count, 0);
    for (const kind of [layout.CODEX_KIND_OUTPUT, layout.CODEX_KIND_REASONING, layout.CODEX_KIND_META, layout.CODEX_KIND_SKIP, layout.CODEX_KIND_TOKENS, layout.CODEX_KIND_CONTEXT, layout.CODEX_KIND_CALL, layout.CODEX_KIND_MESSAGE]) expect(kinds.get(kind)! / total, `kind ${kind}`).toBeGreaterThan(0.01);
    expect(kinds.get(layout.CODEX_KIND_RAW)! / total).toBeGreaterThan(0.1);
    // An error ends a read: many files must be read to their end, for their later lines to count.
    expect(read / run).toBeGreaterThan(0.35);
  }, 600_000);

  it('reads a file of huge lines and characters at every offset alike, across the reads of its chunks', async () => {
    const path = join(dir, 'huge.jsonl');
    const lines: string[] = [JSON.stringify({ timestamp: '2026-01-05T10:00:00.000Z', type: 'session_meta', payload: { id: 't1', cwd: '/w', instructions: 'i'.repeat(300_000) } })];
    for (let index = 0; index < 40; index++) {
      const pad = 'x'.repeat(index % 17);
      const wide = ['é', '→', '😀', '\u0001', '"', '\\'][index % 6]!;
      const output = `${pad}${wide}${'ok '.repeat(index % 3 === 0 ? 300_000 : 10)}${wide}${pad}`;
      const timestamp = `2026-01-05T10:00:${String(index).padStart(2, '0')}.000Z`;
      const payload =
        index % 2 === 0
          ? { type: 'reasoning', summary: [{ type: 'summary_text', text: output }], encrypted_content: 'e'.repeat(index * 1000) }
          : { type: 'function_call_output', call_id: `call_${index}`, output };
      lines.push(JSON.stringify({ timestamp, type: 'response_item', payload }));
    }
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect(statSync(path).size).toBeGreaterThan(4 << 20);
    await expectSameRead(path);
  });
});

// ---- random rollout lines -------------------------------------------------------------------------

const callId = mostly(fc.constantFrom('call_1', 'call_2', 'call_3'));
const count = fc.oneof({ weight: 12, arbitrary: fc.nat(200_000) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, '1234', 'Some(12)', 1.5, -1, 1e3, 2 ** 60) });
const tokenUsage = fc.record(
  { input_tokens: count, cached_input_tokens: count, cache_write_input_tokens: count, output_tokens: count, reasoning_output_tokens: count, total_tokens: count },
  { requiredKeys: [] },
);
/** A message's text: now and then Codex's record of a review's outcome, or text that only looks like its start. */
const messageText = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 1, arbitrary: fc.constantFrom('<user_action>\n<context>done</context>', '  <user_action> x', '\n<user_action>', '<user_acti', '<user_action', '<environment_context>', '\u00a0<user_action>', '<USER_action>', '\t<user_action>', '\ufeff<user_action>') },
);
const part = (type: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ type: fc.constant(type), text: type === 'input_text' ? messageText : text }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('reasoning_text', 'input_image', 'text', 'output_text'), text }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>({ text: 'untyped' }, { type: 'refusal', refusal: 'no' }, { type: 'summary_text', text: null }, 'plain', 3, { type: 7, text: 'x' }, { type: 'input_image', image_url: 'data:' }) },
  );
const parts = (type: string) => mostly(fc.oneof({ weight: 6, arbitrary: fc.array(part(type), { maxLength: 3 }) }, { weight: 1, arbitrary: type === 'input_text' ? messageText : text }, { weight: 1, arbitrary: fc.constant(null) }));

const responseItem = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('message'), role: mostly(fc.constantFrom('user', 'assistant', 'developer')), content: parts('input_text') }) },
  // The same, its keys in another order (the type last: the scanner must not read the text as nothing).
  { weight: 1, arbitrary: fc.record({ content: parts('input_text'), role: mostly(fc.constantFrom('user', 'assistant')), type: fc.constant('message') }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('reasoning'), summary: parts('summary_text'), content: fc.constant(null), encrypted_content: fc.oneof(text, fc.constant('gAAAA'.repeat(200))) }, { requiredKeys: ['type'] }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('function_call'), name: mostly(fc.constantFrom('shell', 'apply_patch')), arguments: mostly(fc.oneof(text, fc.constant('{"command":["ls","-la"]}'))), call_id: callId }, { requiredKeys: ['type', 'call_id'] }) },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        type: fc.constantFrom('function_call_output', 'function_call_output', 'custom_tool_call_output', 'local_shell_call_output'),
        call_id: callId,
        output: mostly(fc.oneof({ weight: 8, arbitrary: text }, { weight: 1, arbitrary: fc.record({ content: text, success: fc.boolean() }, { requiredKeys: [] }) }, { weight: 1, arbitrary: fc.array(part('input_text'), { maxLength: 2 }) })),
        id: fc.constant('fco_1'),
      },
      { requiredKeys: ['type', 'call_id'] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>({ type: 'ghost_snapshot', ghost_commit: { id: 'g' } }, { type: 'web_search_call', action: { query: 'q' } }, { type: 'custom_tool_call', name: 'apply_patch', input: '*** patch', call_id: 'call_2' }, { type: 'mystery' }, { role: 'user' }, { type: 7 }) },
);

const eventMessage = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('token_count'), info: mostly(fc.record({ total_token_usage: mostly(tokenUsage), last_token_usage: mostly(tokenUsage), model_context_window: count }, { requiredKeys: [] })), rate_limits: fc.constant({ primary: { used_percent: 1.5 } }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constantFrom('agent_message', 'user_message', 'agent_reasoning', 'exec_command_end'), message: text, aggregated_output: text }, { requiredKeys: ['type'] }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('task_started', 'task_complete', 'turn_aborted', 'entered_review_mode', 'exited_review_mode'), model_context_window: count, reason: fc.constantFrom('interrupted', '') }, { requiredKeys: ['type'] }) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'entered_review_mode' }, { type: 'exited_review_mode' }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('item_completed'), item: mostly(fc.record({ type: fc.constantFrom('EnteredReviewMode', 'ExitedReviewMode', 'AgentMessage'), text: text }, { requiredKeys: ['type'] })) }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>({}, { type: 5 }, { type: 'token_count', info: null }, { [PROTO_KEY]: { type: 'token_count' } }) },
);

const sessionMeta = fc.record(
  { id: mostly(fc.constantFrom('thread-1', 'thread-2')), cwd: mostly(fc.oneof(text, fc.constant('/work/é'))), forked_from_id: mostly(fc.constant('thread-0')), instructions: text, originator: fc.constant('codex_cli_rs') },
  { requiredKeys: [] },
);

const payloadOf = {
  session_meta: sessionMeta,
  response_item: responseItem,
  event_msg: eventMessage,
  turn_context: fc.record({ model: mostly(fc.constantFrom('gpt-5-codex', 'gpt-5')), model_context_window: count, cwd: fc.constant('/w') }, { requiredKeys: [] }),
  token_usage_record: fc.record({ response_id: mostly(fc.constantFrom('resp_1', 'resp_2')), usage: mostly(tokenUsage), thread_token_usage: mostly(tokenUsage) }, { requiredKeys: [] }),
  compacted: fc.record({ message: mostly(text), replacement_history: mostly(fc.array(responseItem, { maxLength: 2 })) }, { requiredKeys: [] }),
  world_state: fc.constant({ files: ['a'] }),
};

/** A line's time: mostly a second after the last, now and then after a pause (a fork's copy ends at one), or odd. */
function timestamp(index: number) {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(new Date(Date.UTC(2026, 0, 5, 10, 0, index)).toISOString()) },
    { weight: 2, arbitrary: fc.constant(new Date(Date.UTC(2026, 0, 5, 10, 30, index)).toISOString()) },
    { weight: 1, arbitrary: odd },
  );
}

/** One line of a rollout, as a value: what Codex writes, sometimes not quite. */
function rolloutLine(index: number): fc.Arbitrary<unknown> {
  const typed = (type: keyof typeof payloadOf, weight: number) => ({
    weight,
    arbitrary: fc.tuple(timestamp(index), payloadOf[type] as fc.Arbitrary<unknown>, fc.nat(9)).map(([time, payload, order]) =>
      // Codex writes timestamp, type, payload; now and then another order, or an extra key.
      order === 0 ? { payload, type, timestamp: time } : order === 1 ? { timestamp: time, type, payload, ordinal: index } : { timestamp: time, type, payload },
    ),
  });
  return fc.oneof(
    typed('session_meta', index < 3 ? 30 : 5),
    typed('response_item', 60),
    typed('event_msg', 40),
    typed('turn_context', 10),
    typed('token_usage_record', 5),
    typed('compacted', 5),
    typed('world_state', 5),
    { weight: 1, arbitrary: fc.constantFrom<unknown>({ type: 'response_item', payload: [] }, { type: 'event_msg' }, { type: 3, payload: {} }, { payload: { type: 'message' } }, [1, 2], 'a string', null, { type: 'event_msg', payload: null }) },
  );
}
