/**
 * Which reader a file gets (`--format auto`), what a forced `--format` does, clear errors for
 * files no reader knows, and directory walks over agent archives (`~/.claude/projects`,
 * `~/.codex/sessions`) that skip what is not a session instead of failing.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/formats/index.js';
import { FIXTURES, jsonLines, runCli, sessionRecords } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-detect-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, lines: readonly unknown[]): Promise<string> {
  const path = join(dir, name);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return path;
}

describe('detection from the first lines', () => {
  it.each([
    ['bug.jsonl', 'canonical'],
    ['real/claude-code/claude-code-viewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', 'claude-code'],
    ['real/claude-code/agent-sessions_claude_small_schema-fixture.jsonl', 'claude-code'],
    ['real/codex/codex-session-view_example-session-metadata_session_meta_only.jsonl', 'codex'],
    ['real/pi/pi-mono_large-session_v1.jsonl', 'pi'],
    ['real/pi/agent-sessions_pi_small_v3.jsonl', 'pi'],
    ['formats/openai-chat.jsonl', 'openai-chat'],
    ['formats/anthropic-messages.jsonl', 'anthropic-messages'],
    ['formats/tracing.jsonl', 'tracing'],
    ['formats/tracing-flat.jsonl', 'tracing'],
  ])('%s is %s', async (name, format) => {
    expect((await detectFormat(join(FIXTURES, name))).name).toBe(format);
  });

  it('canonical takes only its own lines, not chat logs that also have id, role and content', async () => {
    const cases: [unknown, string][] = [
      [{ id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }] }, 'canonical'],
      [{ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 5, output_tokens: 2 } }, 'anthropic-messages'],
      [{ id: 'x1', role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }, 'anthropic-messages'],
      [{ id: 'a1', role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'openai-chat'],
      [{ role: 'user', content: 'hi' }, 'openai-chat'],
    ];
    for (const [index, [line, format]] of cases.entries()) {
      expect((await detectFormat(await file(`case-${index}.jsonl`, [line]))).name, JSON.stringify(line)).toBe(format);
    }
  });

  it('a named file no reader knows is one clear error line naming it', async () => {
    const path = await file('notes.jsonl', [{ note: 'not a session' }]);
    const result = await runCli(['inspect', path]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      `compactor: error: ${path}: unknown session format (try --format; known: canonical, claude-code, codex, pi, gemini-cli, opencode, opencode-json, anthropic-messages, openai-chat, tracing)`,
    ]);
  });

  it('--format names come from the readers, and forcing the wrong one says what to use', async () => {
    const help = await runCli(['inspect', '--help']);
    // yargs wraps the choices to the terminal: compare without white space
    expect(help.stdout.replace(/\s+/g, '')).toContain('"auto","canonical","claude-code","codex","pi","gemini-cli","opencode","opencode-json","anthropic-messages","openai-chat","tracing"');
    const anthropic = (await readFile(join(FIXTURES, 'formats/anthropic-messages.jsonl'), 'utf8')).split('\n').slice(1, 4);
    const path = await file('anthropic-without-system.jsonl', anthropic);
    const result = await runCli(['inspect', '--format', 'openai-chat', path]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(`compactor: error: ${path}:2: content holds an Anthropic "thinking" block; read this file with --format anthropic-messages`);
  });

  it('a malformed line of a known format names file and line', async () => {
    const claude = await file('bad-claude.jsonl', [
      { type: 'user', uuid: 'u1', parentUuid: null, sessionId: 's', message: { role: 'user', content: 'hi' } },
      { type: 'assistant', uuid: 'a1', parentUuid: 'u1', sessionId: 's', message: { role: 'assistant', content: 42 } },
    ]);
    const codex = await file('bad-codex.jsonl', [{ timestamp: 't', type: 'session_meta', payload: { id: 'x' } }, { timestamp: 't', type: 'response_item', payload: { type: 'function_call_output', output: 'x' } }]);
    const [a, b] = await Promise.all([runCli(['inspect', claude]), runCli(['inspect', codex])]);
    // (execa drops the final newline)
    expect(a.stderr).toBe(`compactor: error: ${claude}:2: assistant line: message.content: Invalid input`);
    expect(b.stderr).toBe(`compactor: error: ${codex}:2: function_call_output: call_id: expected a string`);
  });
});

describe('walking an archive directory', () => {
  let archive: string;
  const claudeSession = 'claude-code-viewer_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl';

  beforeAll(async () => {
    archive = join(dir, 'archive');
    const project = join(archive, 'claude', 'projects', '-home-dev-app');
    const codexDay = join(archive, 'codex', 'sessions', '2025', '11', '17');
    await mkdir(join(project, '1af7fc5e', 'subagents'), { recursive: true });
    await mkdir(join(project, '1af7fc5e', 'tool-results'), { recursive: true });
    await mkdir(codexDay, { recursive: true });
    await cp(join(FIXTURES, 'real/claude-code', claudeSession), join(project, claudeSession));
    await cp(join(FIXTURES, 'real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl'), join(codexDay, 'rollout-2025-11-17T15-30-28-019a93b9.jsonl'));
    // A 2.1 subagent transcript: the same lines, all on a sidechain.
    const lines = (await readFile(join(FIXTURES, 'real/claude-code', claudeSession), 'utf8')).trim().split('\n');
    const sidechain = lines.map((line) => JSON.stringify({ ...JSON.parse(line), isSidechain: true, agentId: 'a3f9c21' }));
    await writeFile(join(project, '1af7fc5e', 'subagents', 'agent-a3f9c21.jsonl'), sidechain.join('\n') + '\n');
    await writeFile(join(project, '1af7fc5e', 'tool-results', 'toolu_01.jsonl'), 'not json at all\n');
    await writeFile(join(archive, 'claude', 'history.jsonl'), JSON.stringify({ display: '/init', pastedContents: {}, timestamp: 1 }) + '\n');
    await writeFile(join(project, 'empty.jsonl'), '');
  });

  it('reads the sessions, skips the rest with a warning each, and does not fail', async () => {
    const result = await runCli(['inspect', '--json', archive]);
    expect(result.exitCode).toBe(0);
    const records = sessionRecords(result.stdout);
    expect(records.map((record) => [record['format'], record['totals']['requests']])).toEqual([
      ['claude-code', 7],
      ['codex', 39],
    ]);
    expect(result.stderr.trim().split('\n').sort()).toEqual(
      [
        `compactor: warning: ${archive}: skipped 1 Claude Code subagent transcript whose session is not among the inputs (name a file to read it)`,
        `compactor: warning: ${join(archive, 'claude', 'history.jsonl')}: not a session file (no known format); skipped`,
        `compactor: warning: ${join(archive, 'claude', 'projects', '-home-dev-app', 'empty.jsonl')}: empty file; skipped`,
      ].sort(),
    );
  });

  it('reads a subagent transcript named explicitly as a session of its own', async () => {
    const path = join(archive, 'claude', 'projects', '-home-dev-app', '1af7fc5e', 'subagents', 'agent-a3f9c21.jsonl');
    const record = jsonLines((await runCli(['inspect', '--json', path])).stdout)[0]!;
    expect(record['format']).toBe('claude-code');
    expect(record['totals']).toMatchObject({ requests: 7, input_tokens: 116_010, output_tokens: 953 });
  });

  it('a directory with no session at all is a usage error', async () => {
    const empty = join(dir, 'nothing');
    await mkdir(empty, { recursive: true });
    await writeFile(join(empty, 'history.jsonl'), JSON.stringify({ display: 'x' }) + '\n');
    const result = await runCli(['estimate', empty]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${empty}: none of its 1 candidate files is a session`);
  });
});
