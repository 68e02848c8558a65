/**
 * Gemini CLI chat files: one pretty-printed JSON document a session. The two real files are read
 * with the right messages, tool pairs and token totals (counted here from the raw document, not by
 * the reader); detection and directory walks find them although they are not JSON lines; a broken
 * document is one clear error line.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGeminiCli } from '../../src/formats/gemini-cli.js';
import { detectFormat, readSession, sniffWalkedFile } from '../../src/formats/index.js';
import { formatIfUnchanged } from '../../src/formats/sniffed.js';
import type { Message } from '../../src/session/model.js';
import { isProviderCall } from '../../src/session/model.js';
import { FIXTURES, jsonLines, runCli, sessionRecords } from '../helpers/cli.js';

const CODEMIE = join(FIXTURES, 'real/gemini-cli/codemie-ai_codemie-code_gemini-session-37b7abef.json');
const JNAROWSKI = join(FIXTURES, 'real/gemini-cli/jnarowski_agentcmd_gemini-session-981c87cb.json');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-gemini-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface RawMessage {
  id: string;
  type: string;
  content: unknown;
  toolCalls?: { id: string; result?: unknown[] }[];
  tokens?: { input: number; output: number; cached: number; thoughts: number; tool: number };
}

/** The raw document's messages and token sums, by hand. */
function byHand(file: string) {
  const document = JSON.parse(readFileSync(file, 'utf8')) as { messages: RawMessage[] };
  const sums = { calls: 0, input: 0, cached: 0, tool: 0, output: 0, thoughts: 0, toolCalls: 0 };
  for (const message of document.messages) {
    sums.toolCalls += message.toolCalls?.length ?? 0;
    if (!message.tokens) continue;
    sums.calls++;
    sums.input += message.tokens.input;
    sums.cached += message.tokens.cached;
    sums.tool += message.tokens.tool;
    sums.output += message.tokens.output;
    sums.thoughts += message.tokens.thoughts;
  }
  return { messages: document.messages, sums };
}

const usageSum = (messages: readonly Message[], key: 'input' | 'cacheRead' | 'cacheWrite' | 'output') =>
  messages.reduce((total, message) => total + (message.usage?.[key] ?? 0), 0);

describe('the real Gemini CLI chat files', () => {
  it.each([
    [CODEMIE, { messages: 14, calls: 9, input: 87_418, cached: 62_117, tool: 0, output: 1_441, thoughts: 2_914, toolCalls: 14 }, 18, 'gemini-3-pro'],
    [JNAROWSKI, { messages: 18, calls: 15, input: 57_420 + 45_385, cached: 45_385, tool: 0, output: 1_551, thoughts: 4_905, toolCalls: 13 }, 31, 'gemini-2.5-pro'],
  ])('%s: messages, tool pairs and tokens', async (file, expected, messageCount, model) => {
    const { messages: raw, sums } = byHand(file);
    expect({ messages: raw.length, ...sums }).toEqual(expected);
    const session = await readSession(file);
    expect(session.format).toBe('gemini-cli');
    expect(session.model).toBe(model);
    expect(session.warnings).toEqual([]);
    expect(session.messages).toHaveLength(messageCount);

    // Each user message, and each gemini message followed by its tool results when it made calls.
    const expectedIds = raw.flatMap((message) =>
      message.type === 'user' ? [[message.id, 'user']] : message.toolCalls?.length ? [[message.id, 'assistant'], [`${message.id}:results`, 'user']] : [[message.id, 'assistant']],
    );
    expect(session.messages.map((message) => [message.id, message.role])).toEqual(expectedIds);

    // Every tool request is answered, in order, by the message right after it.
    let pairs = 0;
    session.messages.forEach((message, index) => {
      const requests = message.content.flatMap((block) => (block.type === 'tool_request' ? [block.id] : []));
      if (requests.length === 0) return;
      const results = session.messages[index + 1]!.content.flatMap((block) => (block.type === 'tool_result' ? [block.tool_request_id] : []));
      expect(results).toEqual(requests);
      pairs += requests.length;
    });
    expect(pairs).toBe(expected.toolCalls);

    // Billed as Gemini bills: input includes cached (a cache read) and tool-use prompt tokens are
    // input; thoughts are output. The prompt of each call stays tokens.input (+ tool).
    const calls = session.messages.filter((message) => message.usage);
    expect(calls).toHaveLength(expected.calls);
    expect(usageSum(calls, 'input')).toBe(expected.input - expected.cached + expected.tool);
    expect(usageSum(calls, 'cacheRead')).toBe(expected.cached);
    expect(usageSum(calls, 'cacheWrite')).toBe(0);
    expect(usageSum(calls, 'output')).toBe(expected.output + expected.thoughts);
  });

  it('reads thoughts as thinking, and failed or cancelled tool calls as errors', async () => {
    const session = await readSession(JNAROWSKI);
    const first = session.messages.find((message) => message.id === 'f7f9dcf5-759f-479d-864c-4969680ccb17')!;
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'tool_request']);
    expect(first.content[0]).toMatchObject({ type: 'thinking', text: expect.stringMatching(/^Considering Project Structure\nI've started by listing/) });
    expect(first.usage).toEqual({ input: 5_377, cacheRead: 0, cacheWrite: 0, output: 21 + 36 });
    const results = session.messages.flatMap((message) => message.content.flatMap((block) => (block.type === 'tool_result' ? [block] : [])));
    expect(results.filter((result) => result.is_error).map((result) => [result.tool_request_id, result.output])).toEqual([
      ['run_shell_command-1761595916500-521fefbd026d5', '[Operation Cancelled] Reason: User cancelled the operation.'],
      ['list_directory-1761596555589-1e98df976df08', 'Path must be absolute: .'],
    ]);
  });

  it('inspect counts the calls and tokens of both', async () => {
    const result = await runCli(['inspect', '--json', CODEMIE, JNAROWSKI]);
    expect(result.exitCode).toBe(0);
    const records = sessionRecords(result.stdout);
    expect(records.map((record) => [record['format'], record['totals']['requests'], record['totals']['input_tokens'], record['totals']['output_tokens']])).toEqual([
      ['gemini-cli', 9, 87_418, 1_441 + 2_914],
      ['gemini-cli', 15, 102_805, 1_551 + 4_905],
    ]);
  });

  it('a gemini message with nothing in it and only zeros for tokens is no call, neither spend nor context', async () => {
    // fixtures/formats/gemini-cli-empty-reply.json, in the shape of the codemie file: a call with
    // a tool, an empty reply with tokens all 0 (as issue 30 found in a real session: 75 context
    // calls for 74 billed), and the answer.
    const file = join(FIXTURES, 'formats/gemini-cli-empty-reply.json');
    const { messages: raw, sums } = byHand(file);
    const empty = raw.filter((message) => message.type === 'gemini' && message.content === '' && !message.toolCalls?.length && Object.values(message.tokens ?? {}).every((count) => count === 0));
    expect(empty).toHaveLength(1);
    const billed = raw.filter((message) => message.tokens && Object.values(message.tokens).some((count) => count > 0));
    const session = await readSession(file);
    expect(session.messages.map((message) => message.id)).not.toContain(empty[0]!.id);
    expect(session.messages.filter(isProviderCall).map((message) => message.id)).toEqual(billed.map((message) => message.id));
    const { record } = { record: jsonLines((await runCli(['inspect', '--json', file])).stdout)[0]! };
    expect(record['spend']).toMatchObject({ requests: billed.length, input_tokens: sums.input + sums.tool, output_tokens: sums.output + sums.thoughts });
    expect(record['context']).toMatchObject({ requests: billed.length, excluded_from_spend: [] });
    expect(record['turns'].map((turn: Record<string, unknown>) => [turn['requests'], turn['estimated']])).toEqual([[billed.length, false]]);
  });

  it('hands each message to keep as it is made, in session order', async () => {
    const handed: Message[] = [];
    const session = await readGeminiCli(CODEMIE, { keep: (message) => (handed.push(message), { ...message, content: [] }) });
    expect(handed.map((message) => message.id)).toEqual(session.messages.map((message) => message.id));
    expect(session.messages.every((message) => message.content.length === 0)).toBe(true);
  });
});

describe('finding Gemini chat files', () => {
  it('detects a pretty-printed chat file and a one-line one', async () => {
    expect((await detectFormat(CODEMIE)).name).toBe('gemini-cli');
    const oneLine = join(dir, 'one-line.json');
    await writeFile(oneLine, JSON.stringify(JSON.parse(readFileSync(JNAROWSKI, 'utf8'))) + '\n');
    expect((await detectFormat(oneLine)).name).toBe('gemini-cli');
    expect((await readSession(oneLine)).messages).toEqual((await readSession(JNAROWSKI)).messages.map((message) => ({ ...message, line: 1 })));
  });

  it('a walk finds them where Gemini writes them, and no other .json file', async () => {
    const home = join(dir, 'home');
    const chats = join(home, '.gemini', 'tmp', '1b37d21d2d', 'chats');
    const subagents = join(home, '.claude', 'projects', '-home-dev-app', '5c0375b4', 'subagents');
    await mkdir(chats, { recursive: true });
    await mkdir(subagents, { recursive: true });
    const session = join(chats, 'session-2025-10-27T19-55-981c87cb.json');
    await writeFile(session, readFileSync(JNAROWSKI));
    await writeFile(join(home, '.gemini', 'settings.json'), '{\n  "theme": "dark"\n}\n');
    await writeFile(join(home, '.gemini', 'tmp', '1b37d21d2d', 'logs.json'), '[\n  {"type": "user"}\n]\n');
    await writeFile(join(chats, 'checkpoint-a.json'), '{\n  "history": []\n}\n');
    await writeFile(join(subagents, 'agent-a3f9c21.meta.json'), JSON.stringify({ agentType: 'Explore' }));
    const found = sniffWalkedFile(session);
    expect(found.kind).toBe('session');
    expect(found.kind === 'session' ? formatIfUnchanged(session, found.sniffed) : null).toBe('gemini-cli');
    const result = await runCli(['inspect', '--json', home]);
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout).map((record) => [record['session'], record['format'], record['totals']['requests']])).toEqual([[session, 'gemini-cli', 15]]);
    expect(result.stderr).toBe('');
  });
});

describe('a broken chat file', () => {
  const write = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it('cut off (still being written): one line naming the file and the line where it ends', async () => {
    const text = readFileSync(CODEMIE, 'utf8');
    const path = await write('truncated.json', text.slice(0, text.indexOf('"toolCalls"')));
    const lines = text.slice(0, text.indexOf('"toolCalls"')).split('\n').length;
    const result = await runCli(['inspect', path]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(`compactor: error: ${path}:${lines}: invalid JSON document: it ends before its closing "}" (truncated, or still being written?)`);
  });

  it('invalid JSON inside a message: its line and column', async () => {
    const path = await write('bad-json.json', '{\n  "sessionId": "s",\n  "projectHash": "p",\n  "messages": [\n    {"id": "a", "type": "user", "content": "hi",}\n  ]\n}\n');
    const result = await runCli(['inspect', path]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^compactor: error: ${path}:5: invalid JSON: .* \\(column 49\\)$`));
  });

  it('a message of the wrong shape: its line and field', async () => {
    const path = await write(
      'bad-shape.json',
      '{\n  "sessionId": "s",\n  "projectHash": "p",\n  "messages": [\n    {"id": "a", "type": "user", "content": "hi"},\n    {"id": "b", "type": "gemini", "content": "", "toolCalls": [{"id": 7, "name": "x"}]}\n  ]\n}\n',
    );
    const result = await runCli(['inspect', path]);
    expect(result.stderr).toMatch(new RegExp(`^compactor: error: ${path}:6: message: toolCalls\\.0\\.id: .+$`));
  });

  it('a JSON document no reader knows: unknown format, not a JSON error', async () => {
    const path = await write('settings.json', '{\n  "theme": "dark"\n}\n');
    const result = await runCli(['inspect', path]);
    expect(result.stderr).toBe(
      `compactor: error: ${path}: unknown session format: one JSON document that no reader knows (try --format; known: canonical, claude-code, codex, pi, gemini-cli, opencode, opencode-json, anthropic-messages, openai-chat, tracing)`,
    );
  });
});
