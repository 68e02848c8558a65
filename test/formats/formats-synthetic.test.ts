/**
 * The hand-written files under fixtures/formats/: one per format, each built to hold that
 * format's traps with numbers small enough to add up by hand (the sums are in the comments).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import type { Message } from '../../src/session/model.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

const fixture = (name: string) => join(FIXTURES, 'formats', name);
const ids = (messages: readonly Message[]) => messages.map((message) => message.id);

async function inspect(name: string) {
  const result = await runCli(['inspect', '--json', fixture(name)]);
  expect(result.exitCode).toBe(0);
  return { record: jsonLines(result.stdout)[0]!, stderr: result.stderr };
}

const turnRows = (record: Record<string, any>) =>
  (record['turns'] as Record<string, number>[]).map((turn) => [turn['requests'], turn['baseline_input_tokens'], turn['input_tokens'], turn['output_tokens']]);

describe('OpenAI chat messages', () => {
  it('counts prompt_tokens (cached inside) per call, usage on the line or on the next line', async () => {
    const { record } = await inspect('openai-chat.jsonl');
    expect(record['format']).toBe('openai-chat');
    expect(record['model']).toBe('gpt-4.1');
    // turn 1: 1200 + 1240 + 1290 = 3730 in, 20 + 18 + 15 = 53 out; turn 2: 1330 (usage line 10) + 1370 = 2700, 30 + 10 = 40.
    expect(turnRows(record)).toEqual([
      [3, 1_200, 3_730, 53],
      [2, 1_330, 2_700, 40],
    ]);
    expect(record['totals']).toMatchObject({ requests: 5, input_tokens: 6_430, output_tokens: 93 });
  });

  it('turns tool_calls and tool messages into paired blocks with line ids', async () => {
    const session = await readSession(fixture('openai-chat.jsonl'));
    expect(ids(session.messages)).toEqual(['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'L8', 'L9', 'L11', 'L12']);
    expect(session.messages[0]!.role).toBe('system');
    expect(session.messages[2]!.content).toEqual([{ type: 'tool_request', id: 'call_1', name: 'bash', arguments: { command: 'ls src/' } }]);
    expect(session.messages[3]!.content).toEqual([{ type: 'tool_result', tool_request_id: 'call_1', output: 'main.rs\nlib.rs', is_error: false }]);
    expect(session.messages[8]!.usage).toEqual({ input: 1_330, output: 30, cacheRead: 0, cacheWrite: 0 });
  });
});

describe('Anthropic messages', () => {
  it('adds cache reads and writes to the uncached input', async () => {
    const { record } = await inspect('anthropic-messages.jsonl');
    expect(record['format']).toBe('anthropic-messages');
    // prompts: 12+3000+0 = 3012, 40+80+3000 = 3120, 25+0+3120 = 3145 | 30+60+3120 = 3210, 10+0+3250 = 3260
    expect(turnRows(record)).toEqual([
      [3, 3_012, 9_277, 115],
      [2, 3_210, 6_470, 62],
    ]);
    expect(record['totals']).toMatchObject({ requests: 5, input_tokens: 15_747, output_tokens: 177 });
  });

  it('reads the system line, thinking, tools, errors and a logged response object', async () => {
    const session = await readSession(fixture('anthropic-messages.jsonl'));
    expect(session.messages[0]).toMatchObject({ role: 'system', content: [{ type: 'text', text: 'You are a coding assistant.' }] });
    expect(session.messages[2]!.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_request']);
    expect(session.messages[3]!.content[0]).toEqual({ type: 'tool_result', tool_request_id: 'toolu_01', output: "error TS2304: Cannot find name 'foo'.", is_error: true });
    // the image block of line 8 carries no text; the text beside it stays
    expect(session.messages[7]!.content).toEqual([{ type: 'text', text: 'Fix it.' }]);
    expect(session.messages[10]!.usage).toEqual({ input: 10, output: 12, cacheRead: 3_250, cacheWrite: 0 });
  });
});

describe('canonical', () => {
  it("reads a thinking block as {text} and as Anthropic's {thinking, signature}, and redacted_thinking as thinking without text", async () => {
    const session = await readSession(fixture('canonical-thinking.jsonl'));
    expect(session.format).toBe('canonical');
    expect(session.warnings).toEqual([]);
    expect(session.messages[1]!.content[0]).toEqual({ type: 'thinking', text: 'Read the CI log first.' });
    expect(session.messages[3]!.content).toEqual([
      { type: 'thinking', text: 'The parser test fails on empty input; that is the whole story.' },
      { type: 'thinking', text: '' },
      { type: 'text', text: 'test_parse fails: the parser raises on empty input.' },
    ]);
    // Anthropic's field name reads as ours: the same file written with `text` everywhere inspects the same.
    const { dir, cleanup } = await scratchCopy();
    try {
      const asText = readFileSync(fixture('canonical-thinking.jsonl'), 'utf8').replace('"thinking":"The parser', '"text":"The parser');
      await writeFile(join(dir, 'as-text.jsonl'), asText);
      const [ours, theirs] = await Promise.all([inspect('canonical-thinking.jsonl'), runCli(['inspect', '--json', join(dir, 'as-text.jsonl')])]);
      const { session: _a, ...withThinking } = ours.record;
      const { session: _b, ...withText } = jsonLines(theirs.stdout)[0]!;
      expect(withThinking).toEqual(withText);
      expect(withThinking['turns'][0]['added']['thinking']).toBeGreaterThan(0);
      // The lean read (estimate) sizes both shapes as the full read does.
      const estimate = jsonLines((await runCli(['estimate', '--json', fixture('canonical-thinking.jsonl')])).stdout)[0]!;
      expect(estimate['estimated_tokens']).toBe(withThinking['turns'][0]['added_tokens']);
    } finally {
      await cleanup();
    }
  });
});

describe('Claude Code', () => {
  it('merges a split response, follows the chain past an abandoned branch, skips sidechains and synthetic lines', async () => {
    const session = await readSession(fixture('claude-code.jsonl'));
    // a1 + a1b are one response (msg_01); u2x/a3x were abandoned (u2 branches from a2 again);
    // r2 is written before a3 but answers it; sc1/sc2 are a sidechain; a5 is <synthetic>.
    expect(ids(session.messages)).toEqual(['u1', 'a1', 'r1', 'a2', 'u2', 'a3', 'r2', 'cs', 'a4']);
    const merged = session.messages[1]!;
    expect(merged.content.map((block) => block.type)).toEqual(['text', 'tool_request']);
    // input, cache figures once; output 40 from the stop_reason line, not the partial 3
    expect(merged.usage).toEqual({ input: 5, cacheWrite: 2_000, cacheRead: 0, output: 40 });
    expect(session.model).toBe('claude-sonnet-4-5-20250929');
  });

  it('counts each response once and records the compact boundary', async () => {
    const { record } = await inspect('claude-code.jsonl');
    // prompts: a1 5+2000+0 = 2005, a2 3+100+2000 = 2103 | a3 4+60+2100 = 2164 | a4 10+400+0 = 410
    expect(turnRows(record)).toEqual([
      [2, 2_005, 4_108, 60],
      [1, 2_164, 2_164, 30],
      [1, 410, 410, 15],
    ]);
    expect(record['totals']).toMatchObject({ requests: 4, input_tokens: 6_682, output_tokens: 105 });
    // preTokens 2300; first call after: 410; last call before (a3): 2164 − 410 = 1754
    expect(record['recorded_compactions']).toEqual([
      { line: 13, first_kept_message_id: 'cs', tokens_before: 2_300, tokens_after: 410, reported_drop: 1_754 },
    ]);
  });
});

describe('Codex CLI', () => {
  it('takes content from response items, one call per run of outputs, usage from distinct token counts', async () => {
    const session = await readSession(fixture('codex.jsonl'));
    expect(ids(session.messages)).toEqual(['L2', 'L3', 'L4', 'L8', 'L11', 'L13', 'L15', 'L16', 'L19', 'L22', 'L23', 'L25', 'L26']);
    expect(session.messages[0]!.role).toBe('system');
    expect(session.messages[3]!.content.map((block) => block.type)).toEqual(['thinking', 'tool_request']);
    expect(session.messages[4]!.content[0]).toEqual({ type: 'tool_result', tool_request_id: 'call_a', output: '1 failing: a.test.ts expects bar', is_error: true });
    // input_tokens minus cached_input_tokens (8000-0, 8600-7936, 8750-8576, 1500-0, 1560-1408); the cached part is cacheRead
    const usages = session.messages.filter((message) => message.usage).map((message) => message.usage!);
    expect(usages.map((usage) => [usage.input, usage.cacheRead])).toEqual([
      [8_000, 0],
      [664, 7_936],
      [174, 8_576],
      [1_500, 0],
      [152, 1_408],
    ]);
    expect(session.model).toBe('gpt-5-codex');
  });

  it('reports the compacted item and the numbers around it', async () => {
    const { record } = await inspect('codex.jsonl');
    // 8000 + 8600 + 8750 = 25350 | 1500 + 1560 = 3060; equal to the last total_token_usage (28410, 495)
    expect(turnRows(record)).toEqual([
      [3, 8_000, 25_350, 460],
      [2, 1_500, 3_060, 35],
    ]);
    expect(record['totals']).toMatchObject({ requests: 5, input_tokens: 28_410, output_tokens: 495 });
    // before: no figure in the file, so the context estimate at the compaction: 8750 + its output 40
    expect(record['recorded_compactions']).toEqual([
      { line: 19, first_kept_message_id: 'L19', tokens_before: 8_790, tokens_after: 1_500, reported_drop: 7_250 },
    ]);
  });
});

describe('pi', () => {
  it('follows the current branch from the last entry and leaves aborted and errored calls out', async () => {
    const session = await readSession(fixture('pi-branch.jsonl'));
    // e6/e7 are an abandoned branch (e8 branches from e5); e12 is an error; e10 is the compaction summary.
    expect(ids(session.messages)).toEqual(['e2', 'e3', 'e4', 'e5', 'e8', 'e9', 'e10', 'e11', 'e13']);
    // e3 has totalTokens 0: the parts still count (5 + 0 + 1000)
    expect(session.messages[1]!.usage).toEqual({ input: 5, output: 20, cacheRead: 0, cacheWrite: 1_000 });
    expect(session.recordedCompactions).toEqual([
      { firstKeptIndex: 4, atIndex: 6, summary: 'The user read a.txt; it says hello.', line: 11, tokensBefore: 1_062 },
    ]);
  });

  it('reports the compaction and starts estimate from it', async () => {
    const { record } = await inspect('pi-branch.jsonl');
    // prompts: e3 5+0+1000 = 1005, e5 3+1000+30 = 1033 | e9 4+1030+20 = 1054 | e13 6+0+300 = 306
    expect(turnRows(record)).toEqual([
      [2, 1_005, 2_038, 30],
      [1, 1_054, 1_054, 8],
      [1, 306, 306, 5],
    ]);
    expect(record['recorded_compactions']).toEqual([
      { line: 11, first_kept_message_id: 'e8', tokens_before: 1_062, tokens_after: 306, reported_drop: 748 },
    ]);
    const estimate = jsonLines((await runCli(['estimate', '--json', '--force', '--keep-recent', '0', fixture('pi-branch.jsonl')])).stdout)[0]!;
    // context: e13's prompt 306 + its output 5; the cut summarizes e8..e11 (from pi's first kept entry), not e2..e5
    expect(estimate['context_tokens']).toBe(311);
    expect(estimate['cut']).toMatchObject({ index: 8, first_kept_message_id: 'e13' });
    const session = await readSession(fixture('pi-branch.jsonl'));
    const tokens = estimateAll(session.messages);
    expect(estimate['cut']['tokens_to_summarize']).toBe(tokens[4]! + tokens[5]! + tokens[6]! + tokens[7]!);
  });
});

describe('tracing logs', () => {
  it('keys calls by turn span, drops a retried request, orders by timestamp', async () => {
    const { record, stderr } = await inspect('tracing.jsonl');
    expect(record['format']).toBe('tracing');
    expect(record['model']).toBe('claude-opus-4');
    // turn 1: 20264 + 21000 + 21500 = 62764 | turn 2: r4 22565, r5 30000 (second attempt), r6 58884 = 111449 | turn 3: 60000
    expect(turnRows(record)).toEqual([
      [3, 20_264, 62_764, 360],
      [3, 22_565, 111_449, 340],
      [1, 60_000, 60_000, 40],
    ]);
    expect(record['totals']).toMatchObject({ requests: 7, input_tokens: 234_213, output_tokens: 740 });
    expect(stderr).toContain('1 repeated provider call (same request id) dropped');
  });

  it('sizes the empty messages from how the prompts grew', async () => {
    const session = await readSession(fixture('tracing.jsonl'));
    // r6 (line 7) is logged before r5's attempts (lines 8, 9) but happened after them.
    expect(ids(session.messages)).toEqual(['L2-turn', 'L2', 'L3', 'L4', 'L6-turn', 'L6', 'L9', 'L7', 'L10-turn', 'L10']);
    // r1: 120 out + (21000 − 20264 − 120) grown before r2 = 736; turn 2 opener: 22565 − 21500 − 150 = 915;
    // r5: 200 + (58884 − 30000 − 200) = 28884. All sizes add up to the last prompt + output − the first prompt.
    expect(session.messages.map((message) => message.knownTokens)).toEqual([0, 736, 500, 150, 915, 7_435, 28_884, 60, 1_056, 40]);
    expect(estimateAll(session.messages).reduce((a, b) => a + b, 0)).toBe(60_000 + 40 - 20_264);
  });

  it('reads a flattened log without spans as one turn, string-recorded numbers included', async () => {
    const { record, stderr } = await inspect('tracing-flat.jsonl');
    // prompts: 12+4000+300 = 4312, 20+4312+168 = 4500, 5+4500+295 = 4800
    expect(turnRows(record)).toEqual([[3, 4_312, 13_612, 100]]);
    expect(stderr).toContain('all provider calls are one turn');
  });

  it('replays by numbers: a compaction removes the grown tokens it summarized', async () => {
    const result = await runCli(['replay', '--json', '--context-limit', '40000', '--reserve', '5000', '--keep-recent', '1000', fixture('tracing.jsonl')]);
    const record = jsonLines(result.stdout)[0]!;
    expect(record['totals']['compactions']).toBeGreaterThan(0);
    expect(record['totals']['input_tokens_after']).toBeLessThan(record['totals']['input_tokens_before']);
    // turn 3's call (60000) exceeds the 40000 window: an overflow compaction brings it under
    const turn3 = record['turns'][2];
    expect(turn3['input_tokens_before']).toBe(60_000);
    expect(turn3['input_tokens_after']).toBeLessThanOrEqual(40_000);
  });
});
