import { beforeEach, describe, expect, it } from 'vitest';
import type { SummaryState } from '../src/compaction/state.js';
import { buildProviderContext, SUMMARY_ACKNOWLEDGEMENT } from '../src/compaction/provider-view.js';
import { InputError } from '../src/errors.js';
import { resetIds, turn } from './support/sessions.js';

function stateKeepingFrom(id: string, summary = 'SUMMARY TEXT'): SummaryState {
  return {
    format_version: 1,
    session: 's.jsonl',
    strategy: 'truncate',
    fallback: false,
    summary,
    turn_prefix_summary: null,
    first_kept_message_id: id,
    first_kept_index: 0,
    tokens_before: 0,
    tokens_after: 0,
    summary_tokens: 0,
    messages_summarized: 0,
    messages_summarized_total: 0,
    summarized_hash: `sha256:${'0'.repeat(64)}`,
    read_files: [],
    modified_files: [],
    compactions: 1,
    usage: null,
    dropped_outputs: [],
    pruned_outputs: null,
    details: {},
    created_at: '2026-01-01T00:00:00.000Z',
    tool_version: 'test',
  };
}

beforeEach(() => resetIds());

describe('buildProviderContext', () => {
  it('returns every message unchanged without a compaction', () => {
    const messages = [...turn(2), ...turn(1)];
    expect(buildProviderContext(messages, null)).toEqual(messages);
  });

  it('prepends the summary as a user message and an acknowledgement', () => {
    const messages = [...turn(2), ...turn(1)];
    const view = buildProviderContext(messages, stateKeepingFrom(messages[6]!.id));
    expect(view[0]).toMatchObject({ role: 'user' });
    expect(view[0]!.content[0]).toMatchObject({ type: 'text' });
    expect((view[0]!.content[0] as { text: string }).text).toContain('<summary>\nSUMMARY TEXT\n</summary>');
    expect(view[1]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: SUMMARY_ACKNOWLEDGEMENT }] });
  });

  it('keeps every message from the first kept one, identical', () => {
    const messages = [...turn(2), ...turn(1)];
    const view = buildProviderContext(messages, stateKeepingFrom(messages[6]!.id));
    expect(view.slice(2)).toEqual(messages.slice(6));
    expect(view.slice(2).every((message, i) => message === messages[6 + i])).toBe(true);
  });

  it('adds a split turn\'s own summary after the history summary', () => {
    const messages = turn(1);
    const state = { ...stateKeepingFrom(messages[1]!.id), turn_prefix_summary: 'PREFIX' };
    const text = (buildProviderContext(messages, state)[0]!.content[0] as { text: string }).text;
    expect(text.indexOf('<turn-prefix-summary>\nPREFIX\n</turn-prefix-summary>')).toBeGreaterThan(text.indexOf('</summary>'));
  });

  it('refuses a state whose first kept message is not in the session', () => {
    expect(() => buildProviderContext(turn(1), stateKeepingFrom('nope'))).toThrow(InputError);
  });
});
