import { describe, expect, it } from 'vitest';
import { serializeForSummary } from '../../src/compaction/serialize.js';
import type { Message } from '../../src/session/model.js';

describe('serializeForSummary', () => {
  it('writes [User], [Assistant], [Tool call], [Tool result] and omits thinking', () => {
    const messages: Message[] = [
      { id: '1', role: 'user', line: 1, content: [{ type: 'text', text: 'What files are in src/?' }] },
      {
        id: '2',
        role: 'assistant',
        line: 2,
        content: [
          { type: 'thinking', text: 'secret reasoning' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_request', id: 't', name: 'bash', arguments: { command: 'ls src/' } },
        ],
      },
      { id: '3', role: 'user', line: 3, content: [{ type: 'tool_result', tool_request_id: 't', output: 'main.rs lib.rs', is_error: false }] },
      { id: '4', role: 'assistant', line: 4, content: [{ type: 'text', text: 'There are two files.' }] },
    ];
    expect(serializeForSummary(messages)).toBe(
      [
        '[User]: What files are in src/?',
        '[Thinking]: (omitted)',
        '[Assistant]: Let me check.',
        '[Tool call]: bash(command="ls src/")',
        '[Tool result]: main.rs lib.rs',
        '[Assistant]: There are two files.',
      ].join('\n'),
    );
  });

  it('cuts long tool results and says how much was cut', () => {
    const output = 'a'.repeat(2_500);
    const text = serializeForSummary([{ id: '1', role: 'user', line: 1, content: [{ type: 'tool_result', tool_request_id: 't', output, is_error: true }] }]);
    expect(text).toBe(`[Tool result (error)]: ${'a'.repeat(2_000)}\n[… 500 more characters cut]`);
  });
});
