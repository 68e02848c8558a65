/**
 * One pass of block lengths for a lean read's estimate and its observer (tokens/estimate.ts
 * blockLengths, read/index.ts): the estimate and the growth facts taken from them are what each
 * gives measuring the blocks itself.
 */
import { describe, expect, it } from 'vitest';
import { GrowthFacts } from '../../src/growth/facts.js';
import type { Message } from '../../src/session/model.js';
import { blockLengths, estimateFromLengths, estimateMessageTokens, heuristicCounter } from '../../src/tokens/estimate.js';

const MESSAGES: Message[] = [
  { id: 'u1', role: 'user', line: 1, content: [{ type: 'text', text: 'read the file, é 😀' }] },
  {
    id: 'a1',
    role: 'assistant',
    line: 2,
    content: [
      { type: 'thinking', text: 'x'.repeat(17) },
      { type: 'text', text: 'reading' },
      { type: 'tool_request', id: 't1', name: 'Read', arguments: { file_path: '/src/ä.ts', limit: 40 } },
      { type: 'tool_request', id: 't2', name: 'Bash', arguments: { command: 'ls -la\n"quoted"' } },
    ],
  },
  { id: 'u2', role: 'user', line: 3, content: [{ type: 'tool_result', tool_request_id: 't1', output: 'y'.repeat(9), is_error: false }, { type: 'tool_result', tool_request_id: 't2', output: '', is_error: true }] },
  { id: 'a2', role: 'assistant', line: 4, content: [{ type: 'text', text: 'done' }], knownTokens: 123 },
];

describe('block lengths taken once', () => {
  it('give the estimate chars/4 gives', () => {
    const lengths: number[] = [];
    for (const message of MESSAGES) expect(estimateFromLengths(message, blockLengths(message, lengths))).toBe(estimateMessageTokens(message, heuristicCounter));
  });

  it('give the growth facts the blocks measured again give', () => {
    const measured = new GrowthFacts(heuristicCounter);
    const handed = new GrowthFacts(heuristicCounter);
    const lengths: number[] = [];
    for (const message of MESSAGES) {
      measured.observe(message);
      handed.observe(message, blockLengths(message, lengths));
    }
    expect(handed).toEqual(measured);
    expect(handed.toolCalls.at(1)).toBeGreaterThan(0);
  });
});
