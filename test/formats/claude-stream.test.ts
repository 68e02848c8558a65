/**
 * The Claude Code reader builds messages while it reads and hands them to the lean path's `keep`
 * hook as they settle (src/formats/claude-code-messages.ts), then lets the parent chain pick them.
 * These check that the lean read still equals the full read on every Claude fixture (abandoned
 * branches, a result written before its call, sidechains, parallel tool results), that a
 * response line written after the next response began is still merged (the reader rebuilds
 * from the chain), and which messages reach the hook.
 */
import fg from 'fast-glob';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planCompaction } from '../../src/compaction/compact.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { readSession } from '../../src/formats/index.js';
import type { AnyMessage } from '../../src/session/model.js';
import { isSlim } from '../../src/session/model.js';
import { loadHeld } from '../helpers/held-read.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-claude-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every Claude Code fixture, hand-made and real, subagent transcripts included (read as sessions of their own). */
const FIXTURES = fg.sync(['fixtures/formats/claude-code*.jsonl', 'fixtures/formats/claude-code-project/**/*.jsonl', 'fixtures/real/claude-code/**/*.jsonl']).sort();

const load = (path: string, messages: 'full' | 'lean') => loadHeld(path, { format: 'claude-code', messages }, false);
/** What a slim message keeps (text blocks go). */
const shape = (messages: readonly AnyMessage[]) =>
  messages.map((m) => [m.id, m.role, m.line, m.usage, m.model, m.timestamp, m.content.map((block) => block.type).filter((type) => type !== 'text' && type !== 'thinking')]);

function line(fields: Record<string, unknown>): string {
  return JSON.stringify({ sessionId: 's1', isSidechain: false, timestamp: '2026-01-05T10:00:00.000Z', ...fields });
}

function assistant(uuid: string, parentUuid: string, id: string, block: unknown, stop: string | null, output: number): string {
  const usage = { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 0, output_tokens: output };
  const message = { id, role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [block], stop_reason: stop, usage };
  return line({ type: 'assistant', uuid, parentUuid, requestId: `req_${id}`, message });
}

/** A response (msg_A) whose last line comes after the next response (msg_B) began. */
function lateLineFile(): string {
  const path = join(dir, 'late.jsonl');
  const lines = [
    line({ type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } }),
    assistant('a1', 'u1', 'msg_A', { type: 'text', text: 'one' }, null, 3),
    assistant('b1', 'a1', 'msg_B', { type: 'text', text: 'two' }, 'end_turn', 7),
    assistant('a1b', 'b1', 'msg_A', { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.ts' } }, 'tool_use', 20),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('Claude Code: messages built while reading', () => {
  it('gives the lean read the full read’s messages and estimates on every Claude fixture', async () => {
    for (const path of FIXTURES) {
      const full = await load(path, 'full');
      for (const mode of ['lean'] as const) {
        const lean = await load(path, mode);
        expect(lean.tokens, `${path} ${mode}`).toEqual(full.tokens);
        expect(shape(lean.session.messages), `${path} ${mode}`).toEqual(shape(full.session.messages));
        // Every file stays lean with no observer: a chain that leaves messages out or reorders
        // them, and one with repeated uuids (a renamed copy leads back to the message the hook kept).
        expect(lean.session.messages.every(isSlim), `${path} ${mode}`).toBe(true);
        expect(lean.session.recordedCompactions).toEqual(full.session.recordedCompactions);
        expect(planCompaction(lean.subject, { ...DEFAULT_POLICY, contextLimit: 2_000 })).toEqual(planCompaction(full.subject, { ...DEFAULT_POLICY, contextLimit: 2_000 }));
      }
    }
  });

  it('hands every message to the hook once, in file order, including abandoned branches', async () => {
    const handed: string[] = [];
    const session = await readSession('fixtures/formats/claude-code.jsonl', 'claude-code', {
      keep: (message) => {
        handed.push(message.id);
        return message;
      },
    });
    // u2x/a3x are an abandoned branch: handed over, then left out; r2 is written before a3.
    expect(handed).toEqual(['u1', 'a1', 'r1', 'a2', 'u2x', 'a3x', 'u2', 'r2', 'a3', 'cs', 'a4']);
    expect(session.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'r1', 'a2', 'u2', 'a3', 'r2', 'cs', 'a4']);
  });

  it('merges a response line written after the next response began, by reading the chain’s lines again', async () => {
    const path = lateLineFile();
    const handed: string[] = [];
    const session = await readSession(path, 'claude-code', {
      keep: (message) => {
        handed.push(message.id);
        return message;
      },
    });
    expect(session.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'b1']);
    const merged = session.messages[1]!;
    expect(merged.content.map((block) => block.type)).toEqual(['text', 'tool_request']);
    expect(merged.usage).toEqual({ input: 5, cacheWrite: 100, cacheRead: 0, output: 20 });
    // Built while reading (a1b alone is a message then), and again from the chain.
    expect(handed).toEqual(['u1', 'a1', 'b1', 'a1b', 'u1', 'a1', 'b1']);
    const full = await load(path, 'full');
    const lean = await load(path, 'lean');
    expect(lean.tokens).toEqual(full.tokens);
    expect(shape(lean.session.messages)).toEqual(shape(full.session.messages));
  });

  it('joins only the blocks a later line of a response adds (a line repeating earlier blocks)', async () => {
    const path = join(dir, 'repeat.jsonl');
    const tool = { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.ts' } };
    const lines = [
      line({ type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } }),
      assistant('a1', 'u1', 'msg_A', { type: 'text', text: 'one' }, null, 3),
      // The same text again, a new text, and the tool call twice.
      line({ type: 'assistant', uuid: 'a1b', parentUuid: 'a1', requestId: 'req_msg_A', message: {
        id: 'msg_A', role: 'assistant', model: 'claude-sonnet-4-5-20250929', stop_reason: 'tool_use',
        content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'one!' }, tool, tool],
        usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 0, output_tokens: 9 },
      } }),
    ];
    writeFileSync(path, `${lines.join('\n')}\n`);
    const session = await readSession(path, 'claude-code');
    const merged = session.messages[1]!;
    // Blocks equal to one already there are dropped; the two copies within one line both join.
    expect(merged.content).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'one!' },
      { type: 'tool_request', id: 'toolu_1', name: 'Read', arguments: { file_path: 'a.ts' } },
      { type: 'tool_request', id: 'toolu_1', name: 'Read', arguments: { file_path: 'a.ts' } },
    ]);
  });

  it('stops a parent chain that loops before the first line it meets again', async () => {
    const path = join(dir, 'loop.jsonl');
    const lines = [
      line({ type: 'user', uuid: 'u0', parentUuid: null, message: { role: 'user', content: 'left out' } }),
      line({ type: 'user', uuid: 'u1', parentUuid: 'a1', message: { role: 'user', content: 'hi' } }),
      assistant('a1', 'u1', 'msg_A', { type: 'text', text: 'one' }, 'end_turn', 3),
    ];
    writeFileSync(path, `${lines.join('\n')}\n`);
    const session = await readSession(path, 'claude-code');
    expect(session.messages.map((m) => m.id)).toEqual(['u1', 'a1']);
  });
});
