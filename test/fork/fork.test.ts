/**
 * `compactor fork` and `context --as` without the agents (test/agents/agents-fork.test.ts runs them):
 * the fork of every format reads back, through our own readers, as the summary and then the kept
 * messages of the view; the original and its sidecar stay as they were; a session ending inside a
 * tool call gets one line and no file (Codex: it is forked with the call answered `aborted`); a
 * session with nothing to compact, or whose fork would not shrink the request, is not forked; the
 * request bodies keep the provider's rules; the library's two calls.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forkSession, loadCompactedView, readSession, sessionRequestBody, viewViolations } from '../../src/index.js';
import type { Message } from '../../src/index.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function copy(fixture: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-fork-'));
  scratch.push(dir);
  const path = join(dir, basename(fixture));
  cpSync(join(FIXTURES, fixture), path);
  return path;
}
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const FLAGS = ['--force', '--allow-no-gain', '--keep-recent', '200', '--json'];

/** What a view says, block by block (the ids of the summary pair are ours). */
const shape = (messages: readonly Message[]) => messages.map((message) => ({ role: message.role, content: message.content }));

describe('compactor fork', () => {
  it.each(['formats/claude-code.jsonl', 'formats/codex.jsonl', 'formats/pi-branch.jsonl', 'formats/canonical.jsonl', 'formats/openai-chat.jsonl', 'formats/anthropic-messages.jsonl', 'bug.jsonl'].filter((name) => {
    try {
      readFileSync(join(FIXTURES, name));
      return true;
    } catch {
      return false;
    }
  }))('%s: a new file that reads back as the summary and the kept messages; the original untouched', async (fixture) => {
    const original = copy(fixture);
    const before = sha(original);
    const result = await runCli(['fork', ...FLAGS, original]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({ session: original, status: 'forked' });
    expect(record!['fork']).not.toBe(original);
    expect(sha(original)).toBe(before);
    const sidecar = sha(`${original.replace(/\.jsonl$/, '')}_compaction.json`);

    const { view, loaded } = await loadCompactedView(original);
    const forked = await readSession(record!['fork']);
    const forkView = (await loadCompactedView(record!['fork'])).view;
    const agentFormat = ['claude-code', 'codex', 'pi'].includes(loaded.session.format);
    // An agent's fork carries the summary as one message and no acknowledgement; a log carries the view itself.
    const expected = agentFormat ? [view[0]!, ...view.slice(2)] : view;
    if (loaded.session.format === 'pi') {
      // Our pi reader places a compaction's summary where its entry is: after the kept entries.
      expect(forkView.at(-1)!.content[0]).toMatchObject({ type: 'text' });
      expect(shape(forkView.slice(0, -1))).toEqual(shape(expected.slice(1)));
    } else if (loaded.session.format === 'codex') {
      expect(shape(forkView.filter((message) => message.role !== 'system')).slice(1)).toEqual(shape(expected.slice(1).filter((message) => message.role !== 'system')));
    } else {
      expect(shape(forkView)).toEqual(shape(expected));
    }
    expect(forked.format).toBe(loaded.session.format);
    expect(viewViolations(forkView)).toEqual([]);
    // Forking again reuses the sidecar and writes another new file.
    const again = await runCli(['fork', ...FLAGS, original]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(jsonLines(again.stdout)[0]!['fork']).not.toBe(record!['fork']);
    expect(sha(`${original.replace(/\.jsonl$/, '')}_compaction.json`)).toBe(sidecar);
    expect(sha(original)).toBe(before);
  });

  it('refuses a session that ends inside a tool call: one line, no file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-fork-'));
    scratch.push(dir);
    const session = join(dir, 's.jsonl');
    const lines = [
      { id: 'u1', role: 'user', content: 'x'.repeat(4000) },
      { id: 'a1', role: 'assistant', content: 'Done.' },
      { id: 'u2', role: 'user', content: 'Run it.' },
      { id: 'a2', role: 'assistant', content: [{ type: 'tool_request', id: 't1', name: 'bash', arguments: { command: 'ls' } }] },
    ];
    writeFileSync(session, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    const result = await runCli(['fork', '--force', '--allow-no-gain', '--keep-recent', '10', session]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${session}:4: cannot fork: the session ends inside a tool call (bash "t1" has no result yet)`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(dir)).toEqual(['s.jsonl']);
  });

  // The first lines of a real rollout (Codex 0.58): what it leaves when stopped while a command ran.
  it('forks a Codex session that ends inside a tool call, the call answered "aborted" as Codex resumes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-fork-'));
    scratch.push(dir);
    const text = readFileSync(join(FIXTURES, 'real', 'codex', 'codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl'), 'utf8');
    const session = join(dir, 'rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl');
    writeFileSync(session, `${text.split('\n').slice(0, 276).join('\n')}\n`);
    const call = JSON.parse(readFileSync(session, 'utf8').trim().split('\n').at(-1)!)['payload'] as Record<string, unknown>;
    expect(call['type']).toBe('function_call');
    const result = await runCli(['fork', ...FLAGS, session]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({ status: 'forked' });
    const items = readFileSync(record!['fork'], 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line)['payload'] as Record<string, unknown>)
      .filter((payload) => payload['call_id'] === call['call_id']);
    expect(items.map((payload) => payload['type'])).toEqual(['function_call', 'function_call_output']);
    expect(items[1]).toEqual({ type: 'function_call_output', call_id: call['call_id'], output: 'aborted' });
    // Our reader reads the fork back with the call answered.
    const fork = await readSession(record!['fork']);
    expect(viewViolations(fork.messages)).toEqual([]);
  });

  // Codex 0.169's first turn up to its prompt: the fork would drop only the context Codex injects, which it sends again.
  it('does not fork a Codex session whose fork would not shrink the request (no-gain: one line, no file, exit 0)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-fork-'));
    scratch.push(dir);
    const source = join(FIXTURES, 'agents', 'codex', 'tools-resume-abort', 'sessions', '2026', '11', '25', 'rollout-2026-11-25T03-32-57-01a210c3-81b5-76a2-9146-7e76c78237a7.jsonl');
    const session = join(dir, basename(source));
    writeFileSync(session, `${readFileSync(source, 'utf8').split('\n').slice(0, 12).join('\n')}\n`);
    const flags = ['--force', '--keep-recent', '300', '--cut-rule', 'tool-safe'];
    const result = await runCli(['fork', ...flags, session]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^not forked .*: no-gain, the fork would not make the request smaller \([\d,]+ -> [\d,]+ tokens\)$/)]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.jsonl'))).toEqual([basename(session)]);
    const [record] = jsonLines((await runCli(['fork', ...flags, '--json', session])).stdout);
    expect(record).toMatchObject({ session, status: 'no-gain', reason: 'the fork would not make the request smaller' });
    expect(record!['tokens_after']).toBeGreaterThanOrEqual(record!['tokens_before']);
    // --allow-no-gain writes it all the same.
    const allowed = jsonLines((await runCli(['fork', ...flags, '--allow-no-gain', '--json', session])).stdout);
    expect(allowed[0]).toMatchObject({ status: 'forked' });
  });

  it('does not fork a session with nothing to compact (exit 0, says why)', async () => {
    const original = copy('bug.jsonl');
    const result = await runCli(['fork', original]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^not forked .*bug\.jsonl: skipped, nothing to fork \(/m);
    expect(readdirSync(join(original, '..'))).toEqual(['bug.jsonl']);
  });

  it('refuses a format no fork is written for', async () => {
    const original = copy('formats/tracing.jsonl');
    const result = await runCli(['fork', ...FLAGS, original]);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'failed' });
  });

  it('--out puts the fork elsewhere', async () => {
    const original = copy('formats/claude-code.jsonl');
    const out = join(original, '..', 'forks');
    const result = await runCli(['fork', ...FLAGS, '--out', out, original]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(readdirSync(out)).toEqual([`${record!['session_id']}.jsonl`]);
  });
});

describe('context --as', () => {
  it.each(['anthropic', 'openai-chat', 'openai-responses'] as const)('%s: one request body carrying the compacted view', async (api) => {
    const original = copy('bug.jsonl');
    expect((await runCli(['compact', '--force', '--keep-recent', '20000', original])).exitCode).toBe(0);
    const result = await runCli(['context', '--as', api, original]);
    expect(result.exitCode, result.stderr).toBe(0);
    const bodies = jsonLines(result.stdout);
    expect(bodies).toHaveLength(1);
    const body = bodies[0]!;
    expect(body['model']).toBe('claude-opus-4-1-20250805');
    expect(body).toEqual(await sessionRequestBody(original, api));
    // The body read back by our own readers keeps the provider's rules and starts with the summary.
    const dir = mkdtempSync(join(tmpdir(), 'compactor-body-'));
    scratch.push(dir);
    const file = join(dir, 'body.jsonl');
    const lines =
      api === 'openai-responses'
        ? (body['input'] as unknown[]).map((item) => ({ timestamp: '2026-01-01T00:00:00Z', type: 'response_item', payload: item }))
        : (body['messages'] as unknown[]);
    writeFileSync(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    const read = await readSession(file, api === 'anthropic' ? 'anthropic-messages' : api === 'openai-chat' ? 'openai-chat' : 'codex');
    expect(viewViolations(read.messages)).toEqual([]);
    expect(JSON.stringify(read.messages[0]!.content)).toContain('The conversation history before this point was compacted');
    if (api === 'anthropic') expect(body['max_tokens']).toBe(4096);
  });
});

describe('library', () => {
  it('forkSession writes the fork of the sidecar and says how to resume it', async () => {
    const original = copy('formats/claude-code.jsonl');
    expect((await runCli(['compact', '--force', '--allow-no-gain', '--keep-recent', '10', original])).exitCode).toBe(0);
    const result = await forkSession(original, { allowNoGain: true });
    if (result.status !== 'forked') throw new Error(`not forked: ${result.reason}`);
    expect(result).toMatchObject({ session: original, resume: expect.stringContaining(`claude --resume ${result.session_id}`) });
    expect(readFileSync(result.fork, 'utf8')).toContain('"subtype":"compact_boundary"');
  });

  it('forkSession without a compaction is one clear error', async () => {
    const original = copy('formats/claude-code.jsonl');
    await expect(forkSession(original)).rejects.toThrow(/cannot fork: the session has no compaction to apply/);
  });
});
