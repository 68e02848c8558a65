/**
 * opencode's replay prunes old tool outputs, and sized them from the session's text, so it read
 * the session in full (2.2 GB of peak RSS on the 909 MB canonical session). What it reads of the
 * text is one number a message, the message's estimate with its outputs replaced by the
 * placeholder, taken while reading (replay/pruned-sizes.ts): the replay of slim messages with
 * those numbers must be the replay of the full messages, number for number.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OPENCODE_PRUNE, placeholderTokens, placeholderTokensFromLengths } from '../../src/compaction/prune.js';
import { presetPolicy } from '../../src/replay/presets.js';
import { PrunedSizesObserver } from '../../src/replay/pruned-sizes.js';
import { replayReport } from '../../src/replay/simulate.js';
import { slimmer } from '../../src/read/slim.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import type { TextCounter } from '../../src/tokens/estimate.js';
import { blockLengths, estimateAll, heuristicCounter } from '../../src/tokens/estimate.js';

const blockArb: fc.Arbitrary<ContentBlock> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), text: fc.string({ maxLength: 300 }) }),
  fc.record({ type: fc.constant('thinking' as const), text: fc.string({ maxLength: 300 }) }),
  fc.record({ type: fc.constant('tool_request' as const), id: fc.string({ maxLength: 8 }), name: fc.string({ maxLength: 10 }), arguments: fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 40 })) }),
  fc.record({ type: fc.constant('tool_result' as const), tool_request_id: fc.string({ maxLength: 8 }), output: fc.string({ maxLength: 600 }), is_error: fc.boolean() }),
);

const messageArb: fc.Arbitrary<Message> = fc.record({
  id: fc.constant('m'),
  role: fc.constantFrom('user' as const, 'assistant' as const),
  content: fc.array(blockArb, { maxLength: 5 }),
  line: fc.constant(1),
  knownTokens: fc.option(fc.nat({ max: 10_000 }), { nil: undefined }),
}).map(({ knownTokens, ...message }) => (knownTokens === undefined ? message : { ...message, knownTokens }));

/** `turns` turns of a prompt, four tool loops (outputs of several sizes, a `skill` call among them) and an answer. */
function longSession(turns: number): Message[] {
  const messages: Message[] = [];
  const push = (role: Message['role'], content: ContentBlock[]) => messages.push({ id: `m${messages.length + 1}`, role, content, line: messages.length + 1 });
  for (let t = 0; t < turns; t++) {
    push('user', [{ type: 'text', text: `do it ${'u'.repeat(100 + (t % 7) * 30)}` }]);
    for (let k = 0; k < 4; k++) {
      const id = `t${t}-${k}`;
      const name = k === 3 && t % 5 === 0 ? 'skill' : 'read';
      push('assistant', [{ type: 'text', text: 'reading' }, { type: 'tool_request', id, name, arguments: { path: `src/f${k}.ts` } }]);
      push('user', [{ type: 'tool_result', tool_request_id: id, output: 'w'.repeat(500 + ((t * 4 + k) % 9) * 700), is_error: false }]);
    }
    push('assistant', [{ type: 'text', text: 'a'.repeat(300) }]);
  }
  return messages;
}

/** What a lean read hands the replay: slim messages, and the pruned sizes the observer took from the full ones. */
function leanRead(messages: readonly Message[], count: TextCounter) {
  const observer = new PrunedSizesObserver(OPENCODE_PRUNE.placeholder, count);
  const slim = slimmer();
  const slimMessages = messages.map((message) => {
    if (count === heuristicCounter) observer.observe(message, blockLengths(message, []));
    else observer.observe(message);
    return slim(message);
  });
  return { messages: slimMessages, prunedSizes: observer.sizes() };
}

describe('pruned sizes', () => {
  it('from block lengths are the sizes from the text', () => {
    fc.assert(
      fc.property(messageArb, fc.string({ maxLength: 60 }), (message, placeholder) => {
        expect(placeholderTokensFromLengths(message, blockLengths(message, []), placeholder)).toBe(placeholderTokens(message, placeholder));
      }),
    );
  });

  const counters: readonly { readonly label: string; readonly count: TextCounter }[] = [
    { label: 'chars/4', count: heuristicCounter },
    { label: 'another counter', count: (text) => Math.ceil(text.length / 3) + 1 },
  ];
  for (const { label, count } of counters) {
    it(`give opencode's replay of slim messages the replay of the full ones (${label})`, async () => {
      const full = longSession(300);
      const tokens = estimateAll(full, count);
      const policy = presetPolicy('opencode', 120_000);
      const common = { sessionName: 's', tokens, policy, strategy: truncateStrategy, count };
      const fromText = await replayReport({ ...common, messages: full });
      const lean = leanRead(full, count);
      const fromSizes = await replayReport({ ...common, read: 'lean', messages: lean.messages, prunedSizes: lean.prunedSizes });
      expect(fromText.totals.prunes).toBeGreaterThanOrEqual(10);
      expect(fromText.totals.compactions).toBeGreaterThanOrEqual(3);
      expect(fromSizes).toEqual(fromText);
    });
  }

  it('are asked for when the messages are slim and none were taken', async () => {
    const full = longSession(300);
    const { messages } = leanRead(full, heuristicCounter);
    const run = replayReport({ read: 'lean', sessionName: 's', messages, tokens: estimateAll(full), policy: presetPolicy('opencode', 120_000), strategy: truncateStrategy });
    await expect(run).rejects.toThrow(/pruned sizes/);
  });
});
