/**
 * The window a session ran with (src/pricing/window.ts): Claude Code's 200K, or 1M once a call
 * shows more; the window Codex recorded; the agent's own default where the session records none
 * (Codex 258,400, Gemini CLI 1,048,576, pi 128,000 after the catalog); the catalog's; 128,000 for
 * a file no agent wrote; `--context-limit` over all of them. And the commands that use it:
 * inspect, replay, estimate and compact, through the CLI.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { knownWindow, sessionWindow } from '../../src/pricing/window.js';
import type { Message, Session } from '../../src/session/model.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';
import { removeAfterTest } from '../helpers/session-builder.js';

function session(format: string, prompt: number, extra: Partial<Session> = {}): Session {
  const messages: Message[] = [
    { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], line: 1 },
    { id: 'a1', role: 'assistant', content: [{ type: 'text', text: 'ok' }], line: 2, usage: { input: 5, output: 10, cacheRead: prompt - 5, cacheWrite: 0 } },
  ];
  return { path: 's.jsonl', format, messages, model: 'claude-opus-4-6', recordedCompactions: [], offContext: [], warnings: [], ...extra };
}

describe('the window rule', () => {
  it('gives Claude Code 200K, and 1M once the session shows a longer prompt', async () => {
    expect(await sessionWindow(session('claude-code', 150_000), {})).toEqual({ tokens: 200_000, source: 'claude-code-default' });
    expect(await sessionWindow(session('claude-code', 200_001), {})).toEqual({ tokens: 1_000_000, source: 'agent' });
    // A subagent's long prompt is its own conversation's; an abandoned branch is the agent's.
    const usage = { input: 0, output: 0, cacheRead: 300_000, cacheWrite: 0 };
    const subagent = session('claude-code', 1000, { offContext: [{ cause: 'subagent', usage, file: 'agent.jsonl', line: 1 }] });
    expect((await sessionWindow(subagent, {})).tokens).toBe(200_000);
    const branch = session('claude-code', 1000, { offContext: [{ cause: 'abandoned-branch', usage, file: 's.jsonl', line: 3 }] });
    expect((await sessionWindow(branch, {})).tokens).toBe(1_000_000);
  });

  it("takes the window Codex recorded, else Codex's own (not the catalog's 400,000: the API's, output included), else the catalog, else 128,000; the flag over all", async () => {
    expect(await sessionWindow(session('codex', 1000, { model: 'gpt-5-codex', contextWindow: 272_000 }), {})).toEqual({ tokens: 272_000, source: 'agent' });
    expect(await sessionWindow(session('codex', 1000, { model: 'gpt-5-codex' }), {})).toEqual({ tokens: 258_400, source: 'agent-default' });
    expect(await sessionWindow(session('codex', 1000, { model: 'no-such-model-9000' }), {})).toEqual({ tokens: 258_400, source: 'agent-default' });
    expect(await sessionWindow(session('canonical', 1000), {})).toEqual({ tokens: 1_000_000, source: 'catalog' });
    expect(await sessionWindow(session('canonical', 1000, { model: 'no-such-model-9000' }), {})).toEqual({ tokens: 128_000, source: 'fallback' });
    expect(await sessionWindow(session('claude-code', 250_000), { flag: 90_000 })).toEqual({ tokens: 90_000, source: 'flag' });
    expect(knownWindow(session('codex', 1000, { contextWindow: 272_000 }), 50_000)).toEqual({ tokens: 50_000, source: 'flag' });
  });

  it("an unknown model runs at its agent's own window: Gemini CLI's token limit for every model, pi's default after the catalog, Claude Code's 200K", async () => {
    expect(await sessionWindow(session('gemini-cli', 1000, { model: 'gemini-3-pro' }), {})).toEqual({ tokens: 1_048_576, source: 'agent-default' });
    expect(await sessionWindow(session('gemini-cli', 1000, { model: 'gemini-2.5-pro' }), {})).toEqual({ tokens: 1_048_576, source: 'agent-default' });
    expect(await sessionWindow(session('pi', 1000, { model: 'pi-fixture-model' }), {})).toEqual({ tokens: 128_000, source: 'agent-default' });
    expect(await sessionWindow(session('pi', 1000, { model: 'gpt-4.1' }), {})).toEqual({ tokens: 1_000_000, source: 'catalog' });
    expect(await sessionWindow(session('claude-code', 1000), { model: 'no-such-model-9000' })).toEqual({ tokens: 200_000, source: 'claude-code-default' });
    expect(await sessionWindow(session('codex', 1000), { model: 'no-such-model-9000' })).toEqual({ tokens: 258_400, source: 'agent-default' });
  });

  it("asks the catalog about --model's window, not what the agent ran", async () => {
    expect(await sessionWindow(session('claude-code', 1000), { model: 'gpt-4o' })).toEqual({ tokens: 128_000, source: 'catalog' });
    expect(await sessionWindow(session('claude-code', 1000), { model: 'claude-opus-4-6' })).toEqual({ tokens: 200_000, source: 'claude-code-default' });
  });
});

/** A Claude Code session of three turns on Opus 4.6 whose reported prompts start at `prompt` tokens. */
function claudeCodeLines(prompt: number): string {
  const lines: object[] = [];
  let parent: string | null = null;
  for (let i = 1; i <= 3; i++) {
    const common = { sessionId: 's1', isSidechain: false, cwd: '/w', version: '2.1.39', userType: 'external' };
    lines.push({ ...common, type: 'user', uuid: `u${i}`, parentUuid: parent, timestamp: `2026-02-01T10:0${i}:00.000Z`, message: { role: 'user', content: `question ${i} ${'words '.repeat(200)}` } });
    const usage = { input_tokens: 5, cache_creation_input_tokens: 1000, cache_read_input_tokens: prompt - 1005 + i * 2000, output_tokens: 300 };
    const message = { id: `msg_${i}`, type: 'message', role: 'assistant', model: 'claude-opus-4-6', content: [{ type: 'text', text: `answer ${i} ${'text '.repeat(200)}` }], usage };
    lines.push({ ...common, type: 'assistant', uuid: `a${i}`, parentUuid: `u${i}`, timestamp: `2026-02-01T10:0${i}:30.000Z`, requestId: `req_${i}`, message });
    parent = `a${i}`;
  }
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

async function claudeCodeSessions() {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-test-'));
  await writeFile(join(dir, 'near-200k.jsonl'), claudeCodeLines(150_000));
  await writeFile(join(dir, 'past-200k.jsonl'), claudeCodeLines(250_000));
  return removeAfterTest({ path: (name: string) => join(dir, name), cleanup: () => rm(dir, { recursive: true, force: true }) });
}

describe('the commands use it', () => {
  it('estimate and compact: Claude Code at 200K (not 128,000), 1M past 200K, the flag over both', async () => {
    const { path } = await claudeCodeSessions();
    const [near, past] = jsonLines((await runCli(['estimate', '--json', path('near-200k.jsonl'), path('past-200k.jsonl')])).stdout);
    // About 156,000 tokens of context: over 128,000 - 30,000, under 200,000 - 30,000.
    expect(near).toMatchObject({ context_window: 200_000, context_window_source: 'claude-code-default', would_compact: false, reason: 'under the compaction threshold' });
    expect(past).toMatchObject({ context_window: 1_000_000, context_window_source: 'agent', would_compact: false, reason: 'under the compaction threshold' });
    const compacted = jsonLines((await runCli(['compact', '--dry-run', '--json', '--strategy', 'truncate', path('near-200k.jsonl')])).stdout);
    expect(compacted[0]).toMatchObject({ status: 'skipped', reason: 'under the compaction threshold', context_window: 200_000, context_window_source: 'claude-code-default' });
    const flagged = ['--context-limit', '128000', '--keep-recent', '100'];
    // Over 98,000 at 128,000, but the prompt is the agent's cached prefix, not its six short
    // messages: no cut can bring it under the trigger, so neither would compact.
    const [nearFlagged] = jsonLines((await runCli(['estimate', '--json', ...flagged, path('near-200k.jsonl')])).stdout);
    expect(nearFlagged).toMatchObject({ context_window: 128_000, context_window_source: 'flag', would_compact: false, would_thrash: true });
    const [compactFlagged] = jsonLines((await runCli(['compact', '--dry-run', '--json', '--strategy', 'truncate', ...flagged, path('past-200k.jsonl')])).stdout);
    expect(compactFlagged).toMatchObject({ status: 'would-thrash', context_window: 128_000, context_window_source: 'flag' });
  });

  it("estimate and compact look the session's model up in the catalog", async () => {
    // bug.jsonl is canonical, on claude-opus-4-1: 200,000 in the catalog, where 128,000 was used.
    const [record] = jsonLines((await runCli(['estimate', '--json', join(FIXTURES, 'bug.jsonl')])).stdout);
    expect(record).toMatchObject({ context_window: 200_000, context_window_source: 'catalog' });
    const [bare] = jsonLines((await runCli(['estimate', '--json', join(FIXTURES, 'audit', 'prune.jsonl')])).stdout);
    expect(bare).toMatchObject({ context_window: 128_000, context_window_source: 'fallback' });
  });

  it('inspect and replay run Claude 4.6 in Claude Code at 200K, where the catalog says 1M, and say why', async () => {
    const { path } = await claudeCodeSessions();
    const [inspected] = jsonLines((await runCli(['inspect', '--json', path('near-200k.jsonl')])).stdout);
    expect(inspected!.pricing).toMatchObject({ catalog_model: 'claude-opus-4-6', context_window: 200_000, context_window_source: 'claude-code-default' });
    expect(inspected!.policy.context_limit).toBe(200_000);
    expect(inspected!.turns.map((turn: { over_trigger: boolean }) => turn.over_trigger)).toEqual([false, false, false]);
    const [replayed] = jsonLines((await runCli(['replay', '--json', path('past-200k.jsonl')])).stdout);
    expect(replayed!.pricing).toMatchObject({ context_window: 1_000_000, context_window_source: 'agent' });
    expect(replayed!.policy.context_limit).toBe(1_000_000);
  });
});
