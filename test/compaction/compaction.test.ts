import { beforeEach, describe, expect, it } from 'vitest';
import type { CompactionSubject } from '../../src/compaction/compact.js';
import { MAX_CUT_ATTEMPTS, planCompaction, runCompaction, runGuardedCompaction } from '../../src/compaction/compact.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { hashMessages } from '../../src/session/hash.js';
import { buildProviderContext } from '../../src/compaction/provider-view.js';
import type { Strategy } from '../../src/compaction/strategy.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import type { Message } from '../../src/session/model.js';
import { resetIds, toolCall, turn, user } from '../support/sessions.js';

const policy = { ...DEFAULT_POLICY, contextLimit: 1_000, trigger: { kind: 'reserve', tokens: 500 } as const, keepRecentTokens: 300 };

function subject(messages: Message[], previous: CompactionSubject['previous'] = null): CompactionSubject {
  return { sessionName: 's.jsonl', messages, tokens: estimateAll(messages), previous };
}

beforeEach(() => resetIds());

describe('planCompaction', () => {
  it('skips a session under the threshold', () => {
    const plan = planCompaction(subject(turn(1, { output: 10 })), policy);
    expect(plan).toMatchObject({ kind: 'skip', status: 'skipped', reason: 'under the compaction threshold' });
  });

  it('compacts a session over the threshold from the first message', () => {
    const messages = [...turn(2, { output: 100 }), ...turn(2, { output: 100 }), ...turn(2, { output: 100 })];
    const plan = planCompaction(subject(messages), policy);
    expect(plan).toMatchObject({ kind: 'compact', start: 0 });
  });
});

describe('runCompaction with truncate', () => {
  const readTurn = (path: string) => [user(10), ...toolCall('read_file', { path }, 150), ...toolCall('edit_file', { path: 'out.ts' }, 5)];

  it('summarizes the span, names the first kept message and records the hash of what it covers', async () => {
    const messages = [...readTurn('a.ts'), ...readTurn('b.ts'), ...readTurn('c.ts')];
    const s = subject(messages);
    const plan = planCompaction(s, policy);
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    const state = await runCompaction(s, plan, truncateStrategy, { now: new Date('2026-01-01T00:00:00Z') });
    expect(state.first_kept_message_id).toBe(messages[plan.cut.index]!.id);
    expect(state.summarized_hash).toBe(hashMessages(messages, 0, plan.cut.index));
    expect(state.summary).toMatch(/^\[Compacted \d+ messages: /);
    expect(state.summary).toContain('<read-files>');
    expect(state.summary).toContain('<modified-files>\nout.ts\n</modified-files>');
    expect(state.tokens_after).toBeLessThan(state.tokens_before);
    expect(state.created_at).toBe('2026-01-01T00:00:00.000Z');
    expect(state.compactions).toBe(1);
  });

  it('merges with the previous compaction: only the new span, cumulative counts and files', async () => {
    const messages = [...readTurn('a.ts'), ...readTurn('b.ts'), ...readTurn('c.ts')];
    const first = subject(messages);
    const plan1 = planCompaction(first, policy);
    if (plan1.kind !== 'compact') throw new Error('expected a compaction');
    const state1 = await runCompaction(first, plan1, truncateStrategy);

    const grown = [...messages, ...readTurn('d.ts'), ...readTurn('e.ts')];
    const second = subject(grown, { state: state1, firstKeptIndex: plan1.cut.index });
    const plan2 = planCompaction(second, policy);
    if (plan2.kind !== 'compact') throw new Error('expected a second compaction');
    expect(plan2.start).toBe(plan1.cut.index);
    const state2 = await runCompaction(second, plan2, truncateStrategy);

    expect(state2.messages_summarized).toBe(plan2.cut.index - plan1.cut.index);
    expect(state2.messages_summarized_total).toBe(plan2.cut.index);
    expect(state2.summary).toMatch(new RegExp(`^\\[Compacted ${plan2.cut.index} messages: `));
    expect(state2.read_files).toEqual(expect.arrayContaining(['a.ts']));
    expect(state2.compactions).toBe(2);
  });

  it('changes nothing when compacted again with no new messages', async () => {
    const messages = [...readTurn('a.ts'), ...readTurn('b.ts'), ...readTurn('c.ts')];
    const s = subject(messages);
    const plan = planCompaction(s, policy);
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    const state = await runCompaction(s, plan, truncateStrategy);
    const again = planCompaction(subject(messages, { state, firstKeptIndex: plan.cut.index }), { ...policy, force: true });
    expect(again).toMatchObject({ kind: 'skip', status: 'up-to-date' });
  });

  it('gives a split turn its own summary, and the provider view carries both', async () => {
    const messages = [
      ...turn(0, { user: 200, answer: 200 }),
      user(10),
      ...toolCall('bash', { command: 'make' }, 100),
      ...toolCall('bash', { command: 'make test' }, 100),
      ...toolCall('bash', { command: 'make lint' }, 100),
      { id: 'mid', role: 'assistant', line: 0, content: [{ type: 'text', text: 'x'.repeat(40) }] } as Message,
      ...toolCall('bash', { command: 'make install' }, 100),
      ...turn(0, { user: 10, answer: 10 }).slice(1),
    ];
    const s = subject(messages);
    const plan = planCompaction(s, { ...policy, keepRecentTokens: 100, force: true });
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    expect(plan.cut.splitTurnStart).toBe(2);
    const state = await runCompaction(s, plan, truncateStrategy);
    expect(state.turn_prefix_summary).toBe('[Compacted turn prefix of 7 messages: 1 user, 3 assistant, 3 tool results]');
    expect(state.summary).toMatch(/^\[Compacted 2 messages: 1 user, 1 assistant\]/);
    const view = buildProviderContext(messages, state);
    expect(view[2]!.id).toBe('mid');
  });
});

/** A strategy whose summary is `tokens` long each time (a summarizer that writes more than planned). */
function sized(tokens: readonly number[]): Strategy & { calls: number } {
  const strategy = {
    name: 'sized',
    calls: 0,
    summarize: async () => {
      const size = tokens[Math.min(strategy.calls++, tokens.length - 1)]!;
      return { summary: 'y'.repeat(size * 4), turnPrefixSummary: null, usage: { input: 100, output: size }, details: {} };
    },
  };
  return strategy;
}

describe('planCompaction and runGuardedCompaction: a compaction must get under the trigger and pay', () => {
  // Turns of a prompt, one tool call with a 100-token result and an answer; trigger at 1,000 - 500 = 500.
  const turns = (n: number) => Array.from({ length: n }, () => turn(1, { output: 100 })).flat();

  it('moves the cut past the keep budget when the budget cut would leave the context over the trigger', () => {
    const messages = turns(8);
    const plan = planCompaction(subject(messages), { ...policy, keepRecentTokens: 900 });
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    // The budget cut keeps >= 900 and summarizes too little; the earliest cut that gets under is taken.
    expect(plan.cut).toMatchObject({ pastKeepBudget: true });
    expect(plan.cut.tokensToSummarize).toBeGreaterThanOrEqual(plan.contextTokens - 500);
    expect(plan.cut.tokensKept).toBeLessThan(900);
  });

  it('says would-thrash when no valid cut can bring the context under the trigger', () => {
    // Two short turns, then a 1,000-token prompt: every valid cut summarizes at most 40 of the 540 needed.
    const messages = [...turn(0, { user: 10, answer: 10 }), ...turn(0, { user: 10, answer: 10 }), user(1_000)];
    const plan = planCompaction(subject(messages), policy);
    expect(plan).toMatchObject({ kind: 'skip', status: 'would-thrash', cut: { kind: 'none', reason: 'cannot-get-under' } });
  });

  it('moves the cut on when the real summary is larger than planned, and counts every attempt in usage', async () => {
    const messages = turns(8);
    const s = subject(messages);
    const plan = planCompaction(s, policy);
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    // 300-token summaries: the planned cut lands over the trigger, the next one under it.
    const strategy = sized([300]);
    const outcome = await runGuardedCompaction(s, plan, strategy, policy);
    expect(outcome.kind).toBe('compacted');
    if (outcome.kind !== 'compacted') return;
    expect(outcome.tokensAfter).toBeLessThanOrEqual(500);
    expect(outcome.plan.cut.index).toBeGreaterThan(plan.cut.index);
    expect(strategy.calls).toBeGreaterThan(1);
    expect(outcome.state.usage).toEqual({ input_tokens: 100 * strategy.calls, output_tokens: 300 * strategy.calls });
  });

  it('gives up as would-thrash when no cut gets under it, after at most MAX_CUT_ATTEMPTS runs', async () => {
    const messages = turns(8);
    const s = subject(messages);
    const plan = planCompaction(s, policy);
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    const strategy = sized([2_000]);
    const outcome = await runGuardedCompaction(s, plan, strategy, policy);
    expect(outcome).toMatchObject({ kind: 'would-thrash', tokensBefore: plan.contextTokens });
    expect(strategy.calls).toBeLessThanOrEqual(MAX_CUT_ATTEMPTS);
    // The presets replay the agents as they behave: the same compaction is kept.
    expect((await runGuardedCompaction(s, plan, sized([2_000]), { ...policy, allowThrash: true, allowNoGain: true })).kind).toBe('compacted');
  });

  it('refuses a compaction that takes less than 1% of the context off, unless allowed', async () => {
    const messages = [...turn(0, { user: 10, answer: 10 }), ...turns(8)];
    const s = subject(messages);
    // Forced under the trigger with a budget that holds everything: the earliest cut, 10 tokens.
    const forced = { ...policy, contextLimit: 100_000, force: true, keepRecentTokens: 2_000 };
    const plan = planCompaction(s, forced);
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    expect(plan.cut).toMatchObject({ index: 1, forced: true, tokensToSummarize: 10 });
    const outcome = await runGuardedCompaction(s, plan, sized([1]), forced);
    expect(outcome).toMatchObject({ kind: 'no-gain', tokensBefore: plan.contextTokens });
    expect((await runGuardedCompaction(s, plan, sized([5]), { ...forced, allowNoGain: true })).kind).toBe('compacted');
  });
});
