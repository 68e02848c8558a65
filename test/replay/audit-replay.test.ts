/**
 * `replay` with policy presets: one comparable table, one policy's numbers reproduced by hand
 * from the fixture file, opencode's pruning, thrash, and the cache model.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedTokens, cacheExpiry } from '../../src/replay/cache.js';
import { presetPolicy } from '../../src/replay/presets.js';
import { readSession } from '../../src/formats/index.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';
import { isToolResult, messageTokens, readFixture, reportedPrompt, startsTurn } from '../helpers/fixture-math.js';
import type { RawMessage } from '../helpers/fixture-math.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const PRUNE = join(FIXTURES, 'audit', 'prune.jsonl');

describe('replay --policy pi,codex,coop', () => {
  it('prints one table comparing the three presets at the model window', async () => {
    const { stdout, exitCode } = await runCli(['replay', '--policy', 'pi,codex,coop', BUG]);
    expect(exitCode).toBe(0);
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => /^ policy\s+compacted\s+input tokens\s+saved\s+max base\s+thrash$/.test(line));
    expect(header).toBeGreaterThan(0);
    expect(lines.slice(header + 1, header + 5).map((line) => line.trim().split(/\s+/)[0])).toEqual(['recorded', 'pi', 'codex', 'coop']);
    // Opus' 200,000 window: no preset reaches its trigger on this 96k-token session.
    expect(lines[header + 2]).toMatch(/^ pi\s+0\s+4,277,423\s+0\.0%\s+90,212\s+-$/);
    expect(stdout).toContain('window 200,000');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(80);

    const [record] = jsonLines((await runCli(['replay', '--json', '--policy', 'pi,codex,coop', BUG])).stdout);
    expect(record!.policies.map((p: { name: string }) => p.name)).toEqual(['pi', 'codex', 'coop']);
    expect(record!.policies[0].policy).toMatchObject({ context_limit: 200_000, reserve_tokens: 16_384, keep_recent_tokens: 20_000, cut_rule: 'tool-safe' });
    expect(record!.policies[1].policy).toMatchObject({ trigger_percent: 90, keep_recent_tokens: 0, check: 'every-call', carry_user_tokens: 20_000 });
    expect(record!.policies[2].policy).toMatchObject({ reserve_tokens: 30_000, keep_recent_tokens: 20_000, cut_rule: 'conservative' });
    expect(record!.cost).toMatchObject({ input_usd: expect.closeTo(64.161345, 9), total_usd: expect.closeTo(64.60947, 9) });
  });

  it('derives every preset from the window it is given', () => {
    expect(presetPolicy('claude-code', 200_000).compaction.trigger).toEqual({ kind: 'reserve', tokens: 33_000 });
    expect(presetPolicy('opencode', 200_000).prune).toMatchObject({ protectTokens: 40_000, minimumTokens: 20_000 });
    expect(presetPolicy('opal', 128_000).compaction).toMatchObject({ trigger: { kind: 'percent', percent: 80 }, keepRecentTokens: 32_000 });
    expect(presetPolicy('coop', 128_000).summarizerInput).toBe('serialized');
    expect(presetPolicy('codex', 128_000).summarizerInput).toBe('conversation');
  });

  it('charges no summarizer call to custom with truncate, and an estimated one to a preset', async () => {
    const [record] = jsonLines((await runCli(['replay', '--json', '--policy', 'custom,coop', '--context-limit', '80000', BUG])).stdout);
    const [custom, coop] = record!.policies;
    expect(custom.totals.summarizer_input_tokens).toBe(0);
    expect(custom.costs.summarizer.total_usd).toBe(0);
    expect(coop.totals.summarizer_input_tokens).toBeGreaterThan(0);
    expect(coop.turns[2].compactions[0]).toMatchObject({ summarizer_estimated: true, summarizer_cached: false });
    // The first policy also stays at the top level, as one-policy replays had it.
    expect(record!.totals).toEqual(custom.totals);
    expect(record!.turns).toEqual(custom.turns);
    expect(record!.policy).toEqual(custom.policy);
  });

  it('rejects an unknown policy as a usage error', async () => {
    const result = await runCli(['replay', '--policy', 'pi,gemini', BUG]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('unknown policy "gemini"');
  });
});

/** coop at an 80,000 window, recomputed from the fixture with the README's definitions. */
describe('coop at an 80,000 window, by hand', () => {
  const LIMIT = 80_000;
  const TRIGGER = LIMIT - 30_000;
  const KEEP = 20_000;
  const PRICE = { input: 15, output: 75, read: 1.5, write: 18.75 }; // claude-opus-4-1, $ per million

  const messages = readFixture(BUG);
  const tokens = messages.map(messageTokens);
  const sumTokens = (from: number, to: number) => tokens.slice(from, to).reduce((a, b) => a + b, 0);
  const calls = messages.flatMap((m, index) => (m.role === 'assistant' ? [{ index, input: reportedPrompt(m), output: m.metadata!.output_tokens! }] : []));
  const turnOf = (index: number) => messages.slice(0, index + 1).filter(startsTurn).length;
  const validCut = (m: RawMessage) =>
    (m.role === 'user' && !isToolResult(m)) ||
    (m.role === 'assistant' && !(typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_request')));

  /** The cut walk: keep >= KEEP tokens from the end, then back to a valid cut. */
  function cutBefore(start: number, end: number): number | null {
    let kept = 0;
    for (let i = end - 1; i >= start; i--) {
      kept += tokens[i]!;
      if (kept < KEEP) continue;
      for (let j = i; j > start; j--) if (validCut(messages[j]!)) return j;
      return null;
    }
    return null;
  }

  it('matches compactions, tokens, costs, break-even and thrash', async () => {
    const [record] = jsonLines((await runCli(['replay', '--json', '--policy', 'coop', '--context-limit', String(LIMIT), BUG])).stdout);
    const coop = record!.policies[0];
    const events = coop.turns.flatMap((turn: { turn: number; compactions: object[] }) =>
      turn.compactions.map((event) => ({ ...(event as Record<string, number | string>), turn: turn.turn })),
    );

    let firstKept = 0;
    let removed = 0;
    let summary = 0;
    let eventNo = 0;
    const after: number[] = [];
    const rewritten = new Set<number>();
    const summarizer: { input: number; output: number; position: number; removedAt: number }[] = [];
    calls.forEach((call, position) => {
      const firstOfTurn = startsTurn(messages[call.index - 1]!);
      let prompt = call.input - removed + summary;
      if (firstOfTurn && prompt > TRIGGER) {
        const cut = cutBefore(firstKept, call.index);
        if (cut !== null) {
          const event = events[eventNo++]!;
          expect(event).toMatchObject({ trigger: 'proactive', turn: turnOf(call.index), first_kept_message_id: messages[cut]!.id, tokens_before: prompt });
          const summaryTokens = event.summary_tokens as number;
          expect(summaryTokens).toBeGreaterThan(0);
          expect(summaryTokens).toBeLessThan(1_000);
          summarizer.push({ input: sumTokens(firstKept, cut) + summary, output: summaryTokens, position, removedAt: 0 });
          firstKept = cut;
          removed = sumTokens(0, cut);
          summary = summaryTokens;
          const newPrompt = call.input - removed + summary;
          expect(event.tokens_after).toBe(newPrompt);
          summarizer[summarizer.length - 1]!.removedAt = prompt - newPrompt;
          prompt = newPrompt;
          rewritten.add(position);
        }
      }
      expect(prompt).toBeLessThanOrEqual(LIMIT); // no overflow compaction in this run
      after.push(prompt);
    });
    expect(eventNo).toBe(events.length);
    expect(events.map((event: { turn: number }) => event.turn)).toEqual([3, 6, 8]);

    // Tokens per turn and in total.
    const turnNumbers = calls.map((call) => turnOf(call.index));
    for (const turn of coop.turns) {
      const positions = turnNumbers.flatMap((t, p) => (t === turn.turn ? [p] : []));
      expect(turn.baseline_after).toBe(after[positions[0]!]);
      expect(turn.input_tokens_after).toBe(positions.reduce((total, p) => total + after[p]!, 0));
    }
    const afterTotal = after.reduce((a, b) => a + b, 0);
    expect(coop.totals.input_tokens_after).toBe(afterTotal);
    expect(coop.totals.summarizer_input_tokens).toBe(summarizer.reduce((a, s) => a + s.input, 0));

    // Naive: every prompt token at $15, output at $75; the summarizer calls are extra.
    const output = calls.reduce((a, call) => a + call.output, 0);
    const sIn = summarizer.reduce((a, s) => a + s.input, 0);
    const sOut = summarizer.reduce((a, s) => a + s.output, 0);
    expect(coop.costs.naive.after.total_usd).toBeCloseTo(((afterTotal + sIn) * PRICE.input + (output + sOut) * PRICE.output) / 1e6, 9);

    // Cache-aware: read the previous prompt, write the rest; after a compaction only the system
    // prompt and tools (first reported prompt minus the first message) are still cached. No two
    // calls are 5 minutes apart in this trace, so the cache never expires.
    const stamps = calls.map((call) => Date.parse(messages[call.index]!.timestamp!));
    expect(stamps.every((t, i) => i === 0 || t - stamps[i - 1]! <= 300_000)).toBe(true);
    const stable = calls[0]!.input - tokens[0]!;
    expect(stable).toBe(20_200);
    const cachedCost = (prompts: number[], rewrites: Set<number>) =>
      prompts.map((prompt, k) => {
        const read = k === 0 ? 0 : Math.min(prompts[k - 1]!, rewrites.has(k) ? stable : Infinity, prompt);
        return (read * PRICE.read + (prompt - read) * PRICE.write + calls[k]!.output * PRICE.output) / 1e6;
      });
    const before = calls.map((call) => call.input);
    const beforeCached = cachedCost(before, new Set()).reduce((a, b) => a + b, 0);
    const afterCalls = cachedCost(after, rewritten);
    // coop's summarizer is sent the span as text: no cache, full input price.
    const summarizerUsd = summarizer.map((s) => (s.input * PRICE.input + s.output * PRICE.output) / 1e6);
    const afterCached = afterCalls.reduce((a, b) => a + b, 0) + summarizerUsd.reduce((a, b) => a + b, 0);
    expect(coop.costs.cache_model.before.total_usd).toBeCloseTo(beforeCached, 9);
    expect(coop.costs.cache_model.after.total_usd).toBeCloseTo(afterCached, 9);
    expect(coop.savings.cache_aware_usd).toBeCloseTo(beforeCached - afterCached, 9);
    // The trace reports no cache use: naively priced, the recorded calls are its bill.
    expect(coop.costs.naive.before.total_usd).toBeCloseTo(record!.cost.total_usd, 9);
    expect(coop.savings.naive_usd).toBeCloseTo(record!.cost.total_usd - coop.costs.naive.after.total_usd, 9);
    // The policy's cost: the bill, less the cache-aware saving.
    expect(coop.costs.cost_usd).toBeCloseTo(record!.cost.total_usd - (beforeCached - afterCached), 9);

    // Break-even of each compaction: the same calls without it (every prompt longer by what it
    // removed, no rewrite), until the next compaction.
    summarizer.forEach((s, i) => {
      const end = summarizer[i + 1]?.position ?? calls.length;
      let saved = 0;
      let calls_ = null as number | null;
      for (let k = s.position; k < end; k++) {
        const prompt = after[k]! + s.removedAt;
        const previous = after[k - 1]! + (k > s.position ? s.removedAt : 0);
        const read = Math.min(previous, prompt);
        const without = (read * PRICE.read + (prompt - read) * PRICE.write + calls[k]!.output * PRICE.output) / 1e6;
        saved += without - afterCalls[k]!;
        if (saved >= summarizerUsd[i]!) {
          calls_ = k - s.position + 1;
          break;
        }
      }
      expect(coop.break_even[i]).toMatchObject({ turn: events[i].turn, calls: calls_ });
      expect(coop.break_even[i].cost_usd).toBeCloseTo(summarizerUsd[i]!, 12);
    });

    // Thrash: the first compaction leaves the prompt above the trigger (a cut at a turn start
    // cannot keep less of turn 2's long tool loop), so it is back at the trigger at once.
    const refill = (position: number) => {
      const next = after.findIndex((prompt, k) => k >= position && prompt > TRIGGER);
      return next < 0 ? null : turnNumbers[next]! - turnNumbers[position]!;
    };
    expect(coop.thrash.refills.map((r: { refill_turns: number | null }) => r.refill_turns)).toEqual(summarizer.map((s) => refill(s.position)));
    expect(coop.thrash.detected).toBe(true);
    expect(coop.thrash.fastest_refill_turns).toBe(0);
  });

  it('shows the same numbers in the human table', async () => {
    const [record] = jsonLines((await runCli(['replay', '--json', '--policy', 'pi,coop', '--context-limit', String(LIMIT), BUG])).stdout);
    const { stdout } = await runCli(['replay', '--policy', 'pi,coop', '--context-limit', String(LIMIT), BUG]);
    const coop = record!.policies[1];
    const usd = (value: number) => `$${value.toFixed(2)}`;
    const row = stdout.split('\n').find((line) => line.startsWith(' coop ') && line.includes('$'))!;
    expect(row.trim().split(/\s+/)).toEqual([
      'coop',
      usd(coop.costs.cost_usd),
      coop.savings.cache_aware_usd < 0 ? `-${usd(-coop.savings.cache_aware_usd)}` : usd(coop.savings.cache_aware_usd),
      usd(coop.costs.summarizer.total_usd),
      'never',
      usd(coop.savings.naive_usd),
    ]);
    expect(stdout).toMatch(/ coop\s+3\s+3,091,961\s+27\.7%\s+75,720\s+yes \(0\)/);
    expect(stdout).toMatch(/ pi\s+1\s+3,289,040\s+23\.1%\s+60,261\s+no/);
  });
});

describe('opencode pruning', () => {
  it('clears the outputs of turns 1 and 2 at the start of turn 7, as opencode would', async () => {
    const messages = readFixture(PRUNE);
    const placeholder = Math.ceil('[Old tool result content cleared]'.length / 4);
    const output = messageTokens(messages.find((m) => m.id === 't1')!);
    expect(output).toBe(16_000);
    const [record] = jsonLines(
      (await runCli(['replay', '--json', '--policy', 'opencode', '--context-limit', '400000', '--price-input', '3', '--price-output', '15', '--price-cache-read', '0.3', '--price-cache-write', '3.75', PRUNE])).stdout,
    );
    const opencode = record!.policies[0];
    const prunes = opencode.turns.map((turn: { prunes: { messages: number; tokens_saved: number }[] }) => turn.prunes);
    // Turns 6 and 5 are protected; turns 4 and 3 are the protected 40,000 (32,000 here, crossed
    // by turn 2); turns 2 and 1 free 2 x (16,000 - placeholder), over the 20,000 minimum.
    expect(prunes.slice(0, 6).every((list: unknown[]) => list.length === 0)).toBe(true);
    expect(prunes[6]).toEqual([{ messages: 2, tokens_saved: 2 * (output - placeholder) }]);
    const turn7 = opencode.turns[6];
    expect(turn7.input_tokens_before - turn7.input_tokens_after).toBe(2 * 2 * (output - placeholder));
    expect(opencode.totals).toMatchObject({ compactions: 0, prunes: 1, tokens_pruned: 2 * (output - placeholder) });

    // No usage in the file: prompts are the sum of the estimates before each call. Pruning
    // rewrites the prompt from t1 on, so turn 7's first call re-writes all but u1 and a1a.
    const tokens = messages.map(messageTokens);
    const assistants = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
    const prompts = assistants.map((i) => tokens.slice(0, i).reduce((a, b) => a + b, 0));
    const saved = 2 * (output - placeholder);
    const after = prompts.map((p, k) => (k >= 12 ? p - saved : p));
    const unchangedAtRewrite = tokens[0]! + tokens[1]!;
    let cached = 0;
    after.forEach((prompt, k) => {
      const read = k === 0 ? 0 : Math.min(after[k - 1]!, k === 12 ? unchangedAtRewrite : Infinity, prompt);
      // With no usage, a call's output is its own message's estimate.
      cached += (read * 0.3 + (prompt - read) * 3.75 + tokens[assistants[k]!]! * 15) / 1e6;
    });
    expect(opencode.costs.cache_model.after.total_usd).toBeCloseTo(cached, 9);
    // The rewrite costs more than the pruned tokens save in a cached session.
    expect(opencode.savings.cache_aware_usd).toBeLessThan(0);
    expect(opencode.savings.naive_usd).toBeGreaterThan(0);
  });
});

describe('the cache model', () => {
  it('reads the previous prompt, writes the rest, and starts over after a rewrite or an expiry', () => {
    const steps = [
      { prompt: 1000, output: 10, unchanged: null, expired: false },
      { prompt: 1500, output: 10, unchanged: null, expired: false },
      { prompt: 700, output: 10, unchanged: 200, expired: false },
      { prompt: 900, output: 10, unchanged: null, expired: true },
      { prompt: 950, output: 10, unchanged: null, expired: false },
    ];
    expect(cachedTokens(steps).map((t) => [t.cacheRead, t.cacheWrite])).toEqual([
      [0, 1000],
      [1000, 500],
      [200, 500],
      [0, 900],
      [900, 50],
    ]);
  });

  it('finds the 11-minute pause before turn 3 of the growth fixture', async () => {
    const session = await readSession(join(FIXTURES, 'audit', 'growth.jsonl'));
    const calls = providerCalls(session.messages, estimateAll(session.messages));
    const expired = cacheExpiry(session.messages, calls);
    expect(expired).toEqual([false, false, false, false, false, true, false]);
  });
});
