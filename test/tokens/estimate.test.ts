import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/session/model.js';
import { estimateAll, estimateContextTokens, estimateMessageTokens } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { assistant, resetIds, user } from '../support/sessions.js';

describe('estimateMessageTokens', () => {
  it('divides the characters of all blocks by four, rounding up once per message', () => {
    const message: Message = {
      id: 'a',
      role: 'assistant',
      line: 1,
      content: [
        { type: 'text', text: 'abcde' }, // 5
        { type: 'thinking', text: 'xyz' }, // 3
        { type: 'tool_request', id: 't', name: 'bash', arguments: { command: 'ls' } }, // 4 + 16
      ],
    };
    // 5 + 3 + "bash".length + '{"command":"ls"}'.length = 5 + 3 + 4 + 16 = 28 → 7
    expect(estimateMessageTokens(message)).toBe(7);
  });

  it('counts a tool result by its output', () => {
    const message: Message = {
      id: 'r',
      role: 'user',
      line: 1,
      content: [{ type: 'tool_result', tool_request_id: 't', output: 'x'.repeat(401), is_error: false }],
    };
    expect(estimateMessageTokens(message)).toBe(101);
  });
});

describe('estimateContextTokens (hybrid)', () => {
  it('is the plain estimate when nothing was reported', () => {
    resetIds();
    const messages = [user(10), assistant(20), user(5)];
    expect(estimateContextTokens(messages, estimateAll(messages))).toBe(35);
  });

  it('starts from the last reported prompt, adds its output and every later message', () => {
    resetIds();
    const messages = [user(10), assistant(20, { input: 1_000, cacheRead: 500, output: 30 }), user(5), assistant(7)];
    // 1,000 + 500 reported prompt + 30 reported output + 5 + 7 estimated after it
    expect(estimateContextTokens(messages, estimateAll(messages))).toBe(1_542);
  });
});

describe('providerCalls', () => {
  it('uses reported usage where present and the hybrid estimate elsewhere', () => {
    resetIds();
    const messages = [user(10), assistant(20, { input: 900, output: 25 }), user(5), assistant(8)];
    const calls = providerCalls(messages, estimateAll(messages));
    expect(calls).toEqual([
      { index: 1, input: 900, output: 25, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, estimated: false },
      // 900 reported + 25 output + 5 (the user message after it)
      { index: 3, input: 930, output: 8, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, estimated: true },
    ]);
  });
});
