/**
 * The relevance filter: what the sidecar says was dropped on fixtures/bug.jsonl (through the
 * CLI), and the rules themselves on hand-built spans (the pure module, since what the
 * summarizer is shown is not visible from outside).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filterRelevant } from '../../src/compaction/relevance.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import { jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { removeAfterTest } from '../helpers/session-builder.js';


describe('the relevance filter on fixtures/bug.jsonl', () => {
  it('drops the reads of turns 1 and 2 that are read again later, and says which read stays', async () => {
    const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
    const session = join(scratch.dir, 'bug.jsonl');
    expect((await runCli(['compact', '--strategy', 'extract', '--context-limit', '80000', session])).exitCode).toBe(0);
    const sidecar = JSON.parse(await readFile(join(scratch.dir, 'bug_compaction.json'), 'utf8'));
    expect(sidecar.dropped_outputs.map((d: any) => `${d.tool_request_id}>${d.kept_tool_request_id}`)).toEqual([
      'call_002>call_048', 'call_003>call_019', 'call_004>call_040', 'call_005>call_048',
      'call_007>call_032', 'call_008>call_015', 'call_010>call_036',
    ]);
    expect(sidecar.dropped_outputs[0]).toEqual({
      tool_request_id: 'call_002',
      message_id: 'msg-0005',
      tool: 'read_file',
      reason: 'superseded-read',
      kept_tool_request_id: 'call_048',
      tokens: 1549,
    });
    // each kept read is a later read of the same file
    const records = jsonLines(await readFile(session, 'utf8'));
    const requests = new Map<string, { index: number; path: string }>();
    records.forEach((record, index) => {
      for (const block of record.content) if (block.type === 'tool_request') requests.set(block.id, { index, path: block.arguments.path });
    });
    for (const drop of sidecar.dropped_outputs) {
      const dropped = requests.get(drop.tool_request_id)!;
      const kept = requests.get(drop.kept_tool_request_id)!;
      expect(kept.path).toBe(dropped.path);
      expect(kept.index).toBeGreaterThan(dropped.index);
    }
  });
});

let calls = 0;
function turn(name: string, args: Record<string, unknown>, output: string, isError = false): Message[] {
  const id = `c${++calls}`;
  const request: ContentBlock = { type: 'tool_request', id, name, arguments: args };
  const result: ContentBlock = { type: 'tool_result', tool_request_id: id, output, is_error: isError };
  return [
    { id: `a${id}`, role: 'assistant', content: [request], line: 0 },
    { id: `r${id}`, role: 'user', content: [result], line: 0 },
  ];
}
const big = (label: string) => `${label}\n`.repeat(40);
const outputOf = (messages: readonly Message[], id: string) => {
  for (const message of messages) for (const block of message.content) if (block.type === 'tool_result' && block.tool_request_id === id) return block.output;
  return undefined;
};

describe('filterRelevant', () => {
  it('drops superseded reads and duplicate outputs, never failures or short outputs', () => {
    calls = 0;
    const messages: Message[] = [
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Look around.' }], line: 0 },
      ...turn('read_file', { path: 'a.ts' }, big('a v1')), // c1: read again whole later → dropped
      ...turn('read_file', { path: 'a.ts', offset: 10 }, big('a slice')), // c2: a later whole read covers it → dropped
      ...turn('read_file', { path: 'b.ts', offset: 10 }, big('b slice')), // c3: later read of another range → kept
      ...turn('bash', { command: 'ls' }, big('listing')), // c4: first copy → kept
      ...turn('bash', { command: 'ls' }, big('listing')), // c5: duplicate of c4 → dropped
      ...turn('bash', { command: 'make' }, `${big('make')}exit code: 2`), // c6: failure → kept
      ...turn('bash', { command: 'make' }, `${big('make')}exit code: 2`), // c7: identical failure → still kept
      ...turn('bash', { command: 'true' }, 'ok'), // c8: short
      ...turn('bash', { command: 'true' }, 'ok'), // c9: short duplicate → kept (the note would be longer)
      ...turn('read_file', { path: 'b.ts', offset: 50 }, big('b other slice')), // c10
      ...turn('read_file', { path: 'c.ts' }, big('c v1')), // c11: the later read failed → kept
      ...turn('read_file', { path: 'c.ts' }, 'ENOENT: no such file', true), // c12
    ];
    const spanEnd = messages.length;
    messages.push(...turn('read_file', { path: 'a.ts' }, big('a v2'))); // c13: in the kept part, still supersedes
    const filtered = filterRelevant(messages, 0, spanEnd);
    expect(filtered.dropped.map((d) => [d.tool_request_id, d.reason, d.kept_tool_request_id])).toEqual([
      ['c1', 'superseded-read', 'c13'],
      ['c2', 'superseded-read', 'c13'],
      ['c5', 'duplicate-output', 'c4'],
    ]);
    expect(filtered.dropped[0]!.tokens).toBe(Math.ceil(big('a v1').length / 4));
    expect(filtered.messages).toHaveLength(spanEnd);
    expect(outputOf(filtered.messages, 'c1')).toBe('[output dropped: a.ts is read again later (c13)]');
    expect(outputOf(filtered.messages, 'c5')).toBe('[output dropped: identical to the output of c4]');
    expect(outputOf(filtered.messages, 'c7')).toBe(`${big('make')}exit code: 2`);
    expect(outputOf(filtered.messages, 'c3')).toBe(big('b slice'));
    // the session's own messages are not changed
    expect(outputOf(messages, 'c1')).toBe(big('a v1'));
  });

  it('counts duplicates only inside the span: a copy already summarized does not count', () => {
    calls = 0;
    const messages = [...turn('bash', { command: 'ls' }, big('listing')), ...turn('bash', { command: 'ls' }, big('listing'))];
    expect(filterRelevant(messages, 2, 4).dropped).toEqual([]);
    expect(filterRelevant(messages, 0, 4).dropped.map((d) => d.tool_request_id)).toEqual(['c2']);
  });
});
