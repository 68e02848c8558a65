import { beforeEach, describe, expect, it } from 'vitest';
import { findCutPoint, splitTurnStart } from '../src/compaction/cut-point.js';
import { isValidCutPoint } from '../src/compaction/cut-sites.js';
import type { Message } from '../src/session/model.js';
import { estimateAll, sum } from '../src/tokens/estimate.js';
import { assistant, resetIds, toolCall, turn, user } from './support/sessions.js';

/** Every tool request before the cut has its result before the cut, and vice versa. */
function separatesToolPairs(messages: readonly Message[], cut: number): boolean {
  const side = new Map<string, 'summarized' | 'kept'>();
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_request') side.set(block.id, index < cut ? 'summarized' : 'kept');
    }
  });
  return messages.some((message, index) =>
    message.content.some((block) => block.type === 'tool_result' && side.get(block.tool_request_id) !== (index < cut ? 'summarized' : 'kept')),
  );
}

beforeEach(() => resetIds());

describe('isValidCutPoint (the cut rules)', () => {
  it('accepts turn-starting user messages and assistant messages without tool requests', () => {
    const [call, result] = toolCall('bash', { command: 'ls' });
    expect(isValidCutPoint(user())).toBe(true);
    expect(isValidCutPoint(assistant())).toBe(true);
    expect(isValidCutPoint(call)).toBe(false);
    expect(isValidCutPoint(result)).toBe(false);
  });

  it('also accepts an assistant message with tool requests under the tool-safe rule, never a result', () => {
    const [call, result] = toolCall('bash', { command: 'ls' });
    expect(isValidCutPoint(call, 'tool-safe')).toBe(true);
    expect(isValidCutPoint(result, 'tool-safe')).toBe(false);
  });
});

describe('findCutPoint', () => {
  it('keeps at least keep_recent tokens and cuts at the nearest valid point before it', () => {
    const messages = [...turn(0, { user: 100, answer: 100 }), ...turn(0, { user: 100, answer: 100 }), ...turn(0, { user: 100, answer: 100 })];
    const tokens = estimateAll(messages);
    const cut = findCutPoint(messages, tokens, { keepRecentTokens: 250 });
    // Walking back: 100 (answer 3) + 100 (user 3) = 200 < 250; + 100 (answer 2) = 300 >= 250 → cut at answer 2.
    expect(cut).toMatchObject({ kind: 'cut', index: 3, tokensKept: 300, tokensToSummarize: 300 });
  });

  it('never splits a tool result from its request', () => {
    // user, [call, result] x 3, answer: the budget is reached at a tool result.
    const messages = turn(3, { user: 10, output: 100, answer: 10 });
    const tokens = estimateAll(messages);
    const keeps = Array.from({ length: Math.ceil((sum(tokens) + 10) / 7) }, (_, step) => 1 + step * 7);
    for (const cutRule of ['conservative', 'tool-safe'] as const) {
      const made = keeps.flatMap((keep) => {
        const cut = findCutPoint(messages, tokens, { keepRecentTokens: keep, cutRule });
        return cut.kind === 'cut' ? [cut.index] : [];
      });
      // Some budgets did cut (the claim is checked under each rule), and no cut splits a pair.
      expect(made.length, cutRule).toBeGreaterThan(0);
      expect(made.filter((index) => separatesToolPairs(messages, index)), cutRule).toEqual([]);
    }
  });

  it('walks back past tool calls to the turn start under the conservative rule, and stops at the call under tool-safe', () => {
    const messages = [...turn(0, { user: 50, answer: 50 }), ...turn(3, { user: 10, output: 100, answer: 10 })];
    const tokens = estimateAll(messages);
    // [U50, A50, U10, C, R100, C, R100, C, R100, A10]: walking back 10 + 100 + 8 + 100 reaches 150
    // at the result at index 6. Conservative moves back to the turn start (2); tool-safe to its call (5).
    expect(findCutPoint(messages, tokens, { keepRecentTokens: 150 })).toMatchObject({ kind: 'cut', index: 2 });
    expect(findCutPoint(messages, tokens, { keepRecentTokens: 150, cutRule: 'tool-safe' })).toMatchObject({ kind: 'cut', index: 5 });
  });

  it('reports "fits" when everything is within the budget', () => {
    const messages = turn(1);
    expect(findCutPoint(messages, estimateAll(messages), { keepRecentTokens: 100_000 })).toEqual({ kind: 'none', reason: 'fits' });
  });

  it('reports "no-valid-cut" when the budget lands where no valid point precedes it', () => {
    const messages = turn(4, { output: 100 }); // one long tool loop: only the first user message is valid
    expect(findCutPoint(messages, estimateAll(messages), { keepRecentTokens: 150 })).toEqual({ kind: 'none', reason: 'no-valid-cut' });
  });

  it('with force and no valid cut keeps only the last 2 messages, moving back past a tool result (the force fallback)', () => {
    const messages = turn(4, { output: 100 }); // ends [..., call, result, answer]
    const cut = findCutPoint(messages, estimateAll(messages), { keepRecentTokens: 150, force: true });
    expect(cut).toMatchObject({ kind: 'cut', forced: true, index: messages.length - 3 });
    if (cut.kind === 'cut') expect(separatesToolPairs(messages, cut.index)).toBe(false);
  });

  it('never cuts at or before the start of the range (a previous compaction)', () => {
    const messages = [...turn(0, { user: 100, answer: 100 }), ...turn(0, { user: 100, answer: 100 })];
    const tokens = estimateAll(messages);
    // [U100, A100, U100, A100] with a previous compaction keeping from 1.
    expect(findCutPoint(messages, tokens, { keepRecentTokens: 150 }, { start: 1, end: 4 })).toMatchObject({ kind: 'cut', index: 2 });
    // Reaching the budget only at the range's first message leaves nothing to summarize.
    expect(findCutPoint(messages, tokens, { keepRecentTokens: 250 }, { start: 1, end: 4 })).toEqual({ kind: 'none', reason: 'fits' });
  });

  it('says "at-previous-cut" when the rules land on the previous cut, and forces past it only when asked', () => {
    // [U100, A100(valid), U10, C, R100, C, R100, A10]: a previous compaction kept from 2.
    const messages = [...turn(0, { user: 100, answer: 100 }), ...turn(2, { user: 10, output: 100, answer: 10 })];
    const tokens = estimateAll(messages);
    const range = { start: 2, end: messages.length };
    expect(findCutPoint(messages, tokens, { keepRecentTokens: 150, force: true }, range)).toEqual({ kind: 'none', reason: 'at-previous-cut' });
    const deeper = findCutPoint(messages, tokens, { keepRecentTokens: 150, force: true, forcePastPreviousCut: true }, range);
    expect(deeper).toMatchObject({ kind: 'cut', forced: true, index: messages.length - 3 });
  });

  it('considers only messages before `end` (replaying a prefix)', () => {
    const messages = [...turn(0, { user: 100, answer: 100 }), ...turn(0, { user: 100, answer: 100 }), user(1000)];
    const cut = findCutPoint(messages, estimateAll(messages), { keepRecentTokens: 150 }, { start: 0, end: 4 });
    expect(cut).toMatchObject({ kind: 'cut', index: 2, tokensKept: 200 });
  });
});

describe('split turns', () => {
  it('gives a mid-turn cut with a prefix of 5 or more messages a turn-prefix summary', () => {
    // user, [call, result] x 3, text-only assistant (valid mid-turn cut), [call, result], answer
    const messages = [user(10), ...toolCall('bash', { command: 'a' }, 100), ...toolCall('bash', { command: 'b' }, 100), ...toolCall('bash', { command: 'c' }, 100), assistant(10), ...toolCall('bash', { command: 'd' }, 100), assistant(10)];
    const tokens = estimateAll(messages);
    const cut = findCutPoint(messages, tokens, { keepRecentTokens: 100 });
    expect(cut).toMatchObject({ kind: 'cut', index: 7, splitTurnStart: 0 });
  });

  it('treats a prefix shorter than 5 messages as a clean cut', () => {
    const messages = [user(10), ...toolCall('bash', { command: 'a' }, 100), assistant(10), ...toolCall('bash', { command: 'b' }, 100), assistant(10)];
    expect(splitTurnStart(messages, 0, 3)).toBeNull();
    const cut = findCutPoint(messages, estimateAll(messages), { keepRecentTokens: 100 });
    expect(cut).toMatchObject({ kind: 'cut', index: 3, splitTurnStart: null });
  });

  it('does not split off a turn that began before the range', () => {
    const messages = [user(10), ...toolCall('bash', { command: 'a' }, 100), ...toolCall('bash', { command: 'b' }, 100), ...toolCall('bash', { command: 'c' }, 100), assistant(10)];
    expect(splitTurnStart(messages, 2, 7)).toBeNull();
  });
});
