/**
 * Codex rollouts read as Codex bills them: the cached part of `input_tokens` is a cache read (and
 * the part written to the cache a cache write), a review is a conversation of its own whose calls
 * are spend only, a token_count no output takes is spend only, aborted turns are flagged, and the
 * window the agent ran with is kept. The expected numbers come from counts made here by hand
 * (plain JSON.parse of each line), not from the reader.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { promptTokens } from '../../src/session/model.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

const real = (name: string) => join(FIXTURES, 'real/codex', name);
const formats = (name: string) => join(FIXTURES, 'formats', name);
const TUI = real('codemie-ai_codemie-code_rollout-019e1625-tui.jsonl');
const DESKTOP = real('codemie-ai_codemie-code_rollout-019e1695-desktop.jsonl');
const ABORTED = real('jnarowski_agentcmd_rollout-01997e76-cli0.40-turn-aborted.jsonl');
const REVIEW = formats('codex-review.jsonl');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-codex-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Each distinct token_count of a rollout (by its cumulative totals), summed by hand. */
function countByHand(file: string) {
  const seen = new Set<string>();
  const sums = { calls: 0, input: 0, cached: 0, output: 0 };
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (text === '') continue;
    const line = JSON.parse(text);
    const info = line.payload?.type === 'token_count' ? line.payload.info : null;
    if (!info) continue;
    const totals = JSON.stringify(info.total_token_usage);
    if (seen.has(totals)) continue;
    seen.add(totals);
    sums.calls++;
    sums.input += info.last_token_usage.input_tokens;
    sums.cached += info.last_token_usage.cached_input_tokens;
    sums.output += info.last_token_usage.output_tokens;
  }
  return sums;
}

async function inspectJson(file: string) {
  const result = await runCli(['inspect', '--json', file]);
  expect(result.exitCode).toBe(0);
  return { record: jsonLines(result.stdout)[0]!, stderr: result.stderr };
}

describe('Codex usage as billed', () => {
  it('the codemie TUI rollout: 1.13M uncached input and 4.93M cache reads, the prompts unchanged', async () => {
    const byHand = countByHand(TUI);
    expect(byHand).toEqual({ calls: 66, input: 6_055_836, cached: 4_929_536, output: 9_118 });
    const session = await readSession(TUI);
    const usages = session.messages.flatMap((message) => (message.usage ? [message.usage] : []));
    const sum = (pick: (usage: (typeof usages)[number]) => number) => usages.reduce((total, usage) => total + pick(usage), 0);
    expect(usages).toHaveLength(byHand.calls);
    expect(sum((usage) => usage.input)).toBe(byHand.input - byHand.cached);
    expect(sum((usage) => usage.input)).toBe(1_126_300);
    expect(sum((usage) => usage.cacheRead)).toBe(4_929_536);
    expect(sum((usage) => usage.cacheWrite)).toBe(0);
    expect(sum((usage) => usage.output)).toBe(byHand.output);
    // The prompt of each call is still input_tokens: inspect's input total does not move.
    expect(sum(promptTokens)).toBe(byHand.input);
    expect(session.offContext).toEqual([]);
    expect(session.contextWindow).toBe(258_400);
  });

  it('cache writes (newest versions) are part of input_tokens: taken out of the input, the prompt unchanged', async () => {
    const path = join(dir, 'cache-write.jsonl');
    const lines = [
      { timestamp: 't', type: 'session_meta', payload: { id: 's', cli_version: '0.146.0' } },
      { timestamp: 't', type: 'turn_context', payload: { model: 'gpt-5.6', model_context_window: 400_000 } },
      { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } },
      { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] } },
      {
        timestamp: 't',
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: {
            total_token_usage: { input_tokens: 100, cached_input_tokens: 40, cache_write_input_tokens: 30, output_tokens: 10, reasoning_output_tokens: 5, total_tokens: 110 },
            last_token_usage: { input_tokens: 100, cached_input_tokens: 40, cache_write_input_tokens: 30, output_tokens: 10, reasoning_output_tokens: 5, total_tokens: 110 },
          },
        },
      },
    ];
    await writeFile(path, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    const session = await readSession(path);
    expect(session.messages[1]!.usage).toEqual({ input: 30, cacheRead: 40, cacheWrite: 30, output: 10 });
    expect(session.contextWindow).toBe(400_000);
  });

  it('Codex Desktop rollouts report no usage: their calls are estimated, context only', async () => {
    const session = await readSession(DESKTOP);
    expect(session.messages.filter((message) => message.role === 'assistant')).toHaveLength(18);
    expect(session.messages.some((message) => message.usage)).toBe(false);
    expect(session.offContext).toEqual([]);
    expect(session.contextWindow).toBeUndefined();
  });
});

describe('a review is its own thread', () => {
  it('its items are not context and its calls are spend only, as "review"', async () => {
    const session = await readSession(REVIEW);
    // Lines 14-20 are the review's prompt, reasoning, call, output and answer: none is context.
    // Line 22 is Codex's record of the outcome, line 24 its rendering (an assistant message no
    // call made: `rendered`): both context.
    expect(session.messages.map((message) => [message.id, message.role, message.rendered ?? false])).toEqual([
      ['L4', 'user', false],
      ['L5', 'assistant', false],
      ['L7', 'user', false],
      ['L8', 'assistant', false],
      ['L22', 'user', false],
      ['L24', 'assistant', true],
      ['L29', 'user', false],
      ['L30', 'assistant', false],
      ['L32', 'user', false],
      ['L33', 'assistant', false],
    ]);
    // Lines 17 and 21 (line 19 repeats 17's totals): the review's totals restart at 6000.
    expect(session.offContext).toEqual([
      { cause: 'review', usage: { input: 6_000, cacheRead: 0, cacheWrite: 0, output: 90 }, model: 'gpt-5-codex-mini', timestamp: '2026-02-10T14:00:17.000Z', file: REVIEW, line: 17 },
      { cause: 'review', usage: { input: 912, cacheRead: 5_888, cacheWrite: 0, output: 310 }, model: 'gpt-5-codex-mini', timestamp: '2026-02-10T14:00:21.000Z', file: REVIEW, line: 21 },
    ]);
    // The main thread's model and window, not the review's (128,000).
    expect(session.model).toBe('gpt-5-codex');
    expect(session.contextWindow).toBe(272_000);
    // Line 26 repeats the main thread's totals from before the review: no call of its own.
    expect(session.warnings).toEqual([]);
  });

  it('the main thread keeps its baselines: no dip where the review ran', async () => {
    const { record } = await inspectJson(REVIEW);
    expect((record['turns'] as Record<string, unknown>[]).map((turn) => [turn['requests'], turn['baseline_input_tokens'], turn['input_tokens']])).toEqual([
      [2, 12_000, 24_500],
      [2, 13_800, 27_900],
    ]);
    // 12000 + 12500 + 13800 + 14100: the main thread's final total_token_usage.
    expect(record['totals']).toMatchObject({ requests: 4, input_tokens: 52_400, output_tokens: 530 });
    const replay = jsonLines((await runCli(['replay', '--json', REVIEW])).stdout)[0]!;
    expect(replay['totals']).toMatchObject({ requests: 4, compactions: 0, reduction: 0, input_tokens_before: 52_400, input_tokens_after: 52_400 });
  });
});

describe('aborted turns and unmatched usage', () => {
  it('the 0.40 rollout: its four turn_aborted flag turns 1, 4, 7 and 8', async () => {
    const session = await readSession(ABORTED);
    // grep -n turn_aborted FILE → lines 169, 262, 552, 615
    expect(session.abortedTurns?.map((aborted) => [aborted.line, aborted.reason])).toEqual([
      [169, 'interrupted'],
      [262, 'interrupted'],
      [552, 'interrupted'],
      [615, 'interrupted'],
    ]);
    const { record } = await inspectJson(ABORTED);
    const turns = record['turns'] as Record<string, unknown>[];
    expect(turns.filter((turn) => turn['aborted']).map((turn) => turn['turn'])).toEqual([1, 4, 7, 8]);
    expect(turns.every((turn) => typeof turn['aborted'] === 'boolean')).toBe(true);
    const text = await runCli(['inspect', ABORTED]);
    expect(text.stdout).toMatch(/^\s+1 \(aborted\)\s+28\s/m);
    expect(text.stdout).toMatch(/^\s+4 \(aborted\)\s+12\s/m);
    expect(text.stdout).toMatch(/^\s+2\s+1\s/m);
  });

  it('a turn aborted before any call is a turn of its own, shown as aborted; its billed usage is spend only', async () => {
    const session = await readSession(formats('codex-aborted.jsonl'));
    // Line 5's usage came before the abort and no output took it; line 10's is the second prompt's call.
    expect(session.messages.filter((message) => message.usage).map((message) => [message.id, message.usage])).toEqual([
      ['L9', { input: 240, cacheRead: 8_960, cacheWrite: 0, output: 40 }],
    ]);
    expect(session.offContext).toEqual([
      { cause: 'unmatched', usage: { input: 9_000, cacheRead: 0, cacheWrite: 0, output: 0 }, model: 'gpt-5.1-codex', timestamp: '2026-02-11T09:00:05.000Z', file: formats('codex-aborted.jsonl'), line: 5 },
    ]);
    expect(session.warnings.map((warning) => [warning.line, warning.message])).toEqual([[5, 'token usage matches no model output; counted as spend only']]);
    const { record, stderr } = await inspectJson(formats('codex-aborted.jsonl'));
    expect((record['turns'] as Record<string, unknown>[]).map((turn) => [turn['turn'], turn['requests'], turn['baseline_input_tokens'], turn['aborted']])).toEqual([
      [1, 0, 0, true],
      [2, 1, 9_200, false],
    ]);
    expect(stderr).toContain('codex-aborted.jsonl:5: token usage matches no model output; counted as spend only');
    expect((await runCli(['inspect', formats('codex-aborted.jsonl')])).stdout).toMatch(/^\s+1 \(aborted\)\s+0\s/m);
  });
});
