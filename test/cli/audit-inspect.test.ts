/**
 * `inspect`: growth attribution, cost from the catalog, the chart, on bug.jsonl and on a small
 * fixture whose every number is computed here from the file itself.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';
import { blockChars, blocks, readFixture, reportedPrompt } from '../helpers/fixture-math.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const GROWTH = join(FIXTURES, 'audit', 'growth.jsonl');

function widest(text: string): number {
  return Math.max(...text.split('\n').map((line) => line.length));
}

describe('inspect on bug.jsonl (the bug report trace, Opus)', () => {
  it('attributes turn 3 growth to its file reads and prints about $64 of input cost', async () => {
    const human = await runCli(['inspect', BUG]);
    expect(human.exitCode).toBe(0);
    // 4,277,423 input tokens at $15 per million.
    expect(human.stdout).toContain('input $64.16, cache write $0.00, cache read $0.00, output $0.45, total $64.61');
    const turn3 = human.stdout.split('\n').find((line) => /^\s+3\s+18,809\s/.test(line));
    expect(turn3).toMatch(/read_file \d+%$/);
    expect(widest(human.stdout)).toBeLessThanOrEqual(80);

    const [record] = jsonLines((await runCli(['inspect', '--json', BUG])).stdout);
    expect(record!.cost.input_usd).toBeCloseTo((4_277_423 * 15) / 1e6, 9);
    expect(record!.pricing).toMatchObject({ catalog_model: 'claude-opus-4-1', context_window: 200_000, source: 'catalog' });
    const turn = record!.turns[2];
    // The existing fields keep their meaning.
    expect(turn).toMatchObject({ turn: 3, baseline_input_tokens: 58_884, requests: 13, input_tokens: 912_044 });
    const results = Object.entries(turn.tool_results as Record<string, number>).sort((a, b) => b[1] - a[1]);
    expect(results[0]![0]).toBe('read_file');
    expect(results[0]![1] / turn.added_tokens).toBeGreaterThan(0.5);
    // Turn 3's baseline grew by what turn 2 added after its prompt, plus turn 3's prompt (the
    // fixture is sized so); blocks are estimated one by one, so each of turn 2's 9 two-block
    // assistant messages may round up by one token.
    const turn2 = record!.turns[1];
    const growth = turn2.added_tokens - turn2.added.user_text + turn.added.user_text;
    expect(growth - (58_884 - 22_565)).toBeGreaterThanOrEqual(0);
    expect(growth - (58_884 - 22_565)).toBeLessThanOrEqual(9);
    expect(record!.totals).toMatchObject({ requests: 58, input_tokens: 4_277_423, max_baseline_input_tokens: 90_212 });
  });

  it('draws the baseline per turn as a plain-text chart within 80 columns', async () => {
    const { stdout } = await runCli(['inspect', '--chart', BUG]);
    const bars = stdout.split('\n').filter((line) => /^\d\s+#+/.test(line));
    expect(bars).toHaveLength(9);
    const lengths = bars.map((line) => (line.match(/#+/)?.[0] ?? '').length);
    // Baselines only grow in this trace; turn 9 (90,212) is 4.5x turn 1 (20,264).
    expect([...lengths].sort((a, b) => a - b)).toEqual(lengths);
    expect(lengths[8]! / lengths[0]!).toBeCloseTo(90_212 / 20_264, 0);
    expect(stdout).toContain('| = window 200,000');
    expect(widest(stdout)).toBeLessThanOrEqual(80);
    expect(stdout).not.toMatch(/\u001b\[/);
  });
});

describe('inspect on a fixture computed by hand', () => {
  const messages = readFixture(GROWTH);

  it('splits what each turn added by kind and tool, from the file itself', async () => {
    const [record] = jsonLines((await runCli(['inspect', '--json', GROWTH])).stdout);
    // Turn boundaries: user prompts u1, u3, u6 (the system message belongs to turn 1).
    const starts = [0, messages.findIndex((m) => m.id === 'u3'), messages.findIndex((m) => m.id === 'u6'), messages.length];
    const toolNames = new Map<string, string>();
    for (const m of messages) for (const b of blocks(m)) if (b.type === 'tool_request') toolNames.set(b.id!, b.name!);
    for (let turn = 0; turn < 3; turn++) {
      const expected = { user_text: 0, assistant_text: 0, thinking: 0, tool_calls: 0, tool_results: 0, system: 0 };
      const perTool: Record<string, number> = {};
      for (const m of messages.slice(starts[turn], starts[turn + 1])) {
        for (const b of blocks(m)) {
          const tokens = Math.ceil(blockChars(b) / 4);
          if (b.type === 'thinking') expected.thinking += tokens;
          else if (b.type === 'tool_request') expected.tool_calls += tokens;
          else if (b.type === 'tool_result') {
            expected.tool_results += tokens;
            const tool = toolNames.get(b.tool_request_id!)!;
            perTool[tool] = (perTool[tool] ?? 0) + tokens;
          } else if (m.role === 'user') expected.user_text += tokens;
          else if (m.role === 'assistant') expected.assistant_text += tokens;
          else expected.system += tokens;
        }
      }
      expect(record!.turns[turn].added).toEqual(expected);
      expect(record!.turns[turn].tool_results).toEqual(perTool);
    }
    expect(record!.turns[0].added).toEqual({ user_text: 50, assistant_text: 65, thinking: 200, tool_calls: 8, tool_results: 3000, system: 100 });
    expect(record!.turns[1].tool_results).toEqual({ read_file: 3000, bash: 1200 });
  });

  it('ranks tool outputs by tokens re-sent and finds the file read three times', async () => {
    const [record] = jsonLines((await runCli(['inspect', '--json', '--top', '3', GROWTH])).stdout);
    // r1's output (message u2) is re-sent by every later call: a2, a3, a4, a5, a6, a7.
    const callsAfterU2 = messages.slice(messages.findIndex((m) => m.id === 'u2')).filter((m) => m.role === 'assistant').length;
    expect(callsAfterU2).toBe(6);
    expect(record!.largest_tool_outputs).toHaveLength(3);
    expect(record!.largest_tool_outputs[0]).toMatchObject({ turn: 1, tool: 'read_file', target: 'src/app.ts', tokens: 3000, calls_after: 6, resent_tokens: 18_000 });
    expect(record!.largest_tool_outputs[2]).toMatchObject({ tool: 'bash', target: 'npm test', tokens: 1200, calls_after: 4, resent_tokens: 4800 });
    expect(record!.repeated_reads).toEqual([{ path: 'src/app.ts', reads: 3, tokens: 9000, turns: [1, 2, 3] }]);
    expect(record!.tools).toEqual([
      { tool: 'read_file', results: 3, tokens: 9000 },
      { tool: 'bash', results: 1, tokens: 1200 },
      { tool: 'grep', results: 1, tokens: 400 },
    ]);
  });

  it('prices each reported split at the catalog rates of the session model', async () => {
    const [record] = jsonLines((await runCli(['inspect', '--json', GROWTH])).stdout);
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million.
    let input = 0;
    let read = 0;
    let write = 0;
    let output = 0;
    for (const m of messages.filter((m) => m.role === 'assistant')) {
      input += m.metadata!.input_tokens!;
      read += m.metadata!.cache_read_input_tokens!;
      write += m.metadata!.cache_creation_input_tokens!;
      output += m.metadata!.output_tokens!;
    }
    expect(record!.cost.input_usd).toBeCloseTo((input * 3) / 1e6, 12);
    expect(record!.cost.cache_read_usd).toBeCloseTo((read * 0.3) / 1e6, 12);
    expect(record!.cost.cache_write_usd).toBeCloseTo((write * 3.75) / 1e6, 12);
    expect(record!.cost.output_usd).toBeCloseTo((output * 15) / 1e6, 12);
    expect(record!.cost.total_usd).toBeCloseTo((input * 3 + read * 0.3 + write * 3.75 + output * 15) / 1e6, 12);
    // The system prompt and tools the provider counted before the first message.
    const a1 = messages.find((m) => m.id === 'a1')!;
    expect(record!.prompt_overhead_tokens).toBe(reportedPrompt(a1) - 100 - 50);
    expect(record!.turns.map((turn: { cost_usd: number }) => turn.cost_usd).reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(
      record!.cost.total_usd,
      12,
    );
  });

  it('keeps every human table within 80 columns', async () => {
    const { stdout, exitCode } = await runCli(['inspect', '--chart', GROWTH]);
    expect(exitCode).toBe(0);
    expect(stdout).toContain('src/app.ts       3    9,000   1,2,3');
    expect(widest(stdout)).toBeLessThanOrEqual(80);
  });
});
