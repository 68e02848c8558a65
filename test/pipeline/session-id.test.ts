/**
 * A session id, or a unique prefix of it, as an input: found in the agents' folders; an
 * ambiguous prefix is a usage error listing the candidates, none a one-line error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { looksLikeSessionId, sessionIdsOf } from '../../src/pipeline/located.js';
import { CLEAN_AGENT_ENV, placeFixture, placeOpencode } from '../helpers/agent-home.js';
import { jsonLines, runCli } from '../helpers/cli.js';

let home = '';
const env = () => ({ HOME: home, ...CLEAN_AGENT_ENV });

const MAROT = '258c7280-ae70-4798-800f-63464d01a85d';

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'compactor-ids-'));
  await placeFixture(`real/claude-code/marot_spotter/${MAROT}.jsonl`, join(home, '.claude', 'projects', '-home-me-marot', `${MAROT}.jsonl`));
  // Its subagent transcripts beside it: never sessions of their own, never an id's match.
  await placeFixture(`real/claude-code/marot_spotter/${MAROT}`, join(home, '.claude', 'projects', '-home-me-marot', MAROT));
  // A Codex and a pi session whose ids both start with 01a210c3.
  await placeFixture('agents/codex/auto-compact/sessions', join(home, '.codex', 'sessions'));
  await placeFixture('agents/pi/print-continue/sessions', join(home, '.pi', 'agent', 'sessions'));
  await placeFixture('real/gemini-cli/jnarowski_agentcmd_gemini-session-981c87cb.json', join(home, '.gemini', 'tmp', 'abc123', 'chats', 'session-2025-09-18T10-23-981c87cb.json'));
  await placeOpencode(join(home, '.local', 'share', 'opencode'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('the ids a session path carries', () => {
  it('takes each agent\'s id from the name', () => {
    expect(sessionIdsOf(`/p/${MAROT}.jsonl`)).toEqual([MAROT]);
    expect(sessionIdsOf('/s/rollout-2026-11-25T03-33-08-01a210c3-ac09-7f62-a686-dc40d42deed3.jsonl')).toEqual(['01a210c3-ac09-7f62-a686-dc40d42deed3']);
    expect(sessionIdsOf('/s/2026-11-25T03-33-23-095Z_01a210c3-e416-7120-8e1f-efdc4edf5740.jsonl')).toEqual(['01a210c3-e416-7120-8e1f-efdc4edf5740']);
    expect(sessionIdsOf('/g/chats/session-2025-09-18T10-23-981c87cb.json')).toEqual(['981c87cb']);
    expect(sessionIdsOf('/s/tool_heavy.jsonl')).toEqual([]);
  });

  it('treats only id-like names as ids', () => {
    expect(looksLikeSessionId('258c7280')).toBe(true);
    expect(looksLikeSessionId('ses_dad8')).toBe(true);
    expect(looksLikeSessionId('abc')).toBe(false);
    expect(looksLikeSessionId('logs/*.jsonl')).toBe(false);
  });
});

describe('a session id as an input', () => {
  it('finds the one session a unique prefix names, in any case', async () => {
    for (const id of ['258c7280', '258C7280-AE70', MAROT]) {
      const result = await runCli(['estimate', '--json', id], { env: env() });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(jsonLines(result.stdout).map((record) => record['session'])).toEqual([join(home, '.claude', 'projects', '-home-me-marot', `${MAROT}.jsonl`)]);
    }
  });

  it('finds a Gemini CLI chat by its short id, and an opencode session by its ses_ id', async () => {
    const gemini = await runCli(['estimate', '--json', '981c87cb'], { env: env() });
    expect(gemini.exitCode, gemini.stderr).toBe(0);
    expect(jsonLines(gemini.stdout).map((record) => record['format'])).toEqual(['gemini-cli']);
    const opencode = await runCli(['estimate', '--json', 'ses_'], { env: env() });
    expect(opencode.exitCode, opencode.stderr).toBe(0);
    const [record] = jsonLines(opencode.stdout);
    expect(record?.['format']).toBe('opencode');
    expect(String(record?.['session'])).toMatch(/opencode\.db#ses_/);
  });

  it('is a usage error listing the candidates when the prefix is ambiguous', async () => {
    const result = await runCli(['inspect', '01a210c3'], { env: env() });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const line = result.stderr.split('\n')[0]!;
    expect(line).toMatch(/^compactor: 01a210c3: 2 sessions have an id starting with it: /);
    expect(line).toContain('rollout-2026-11-25T03-33-08-01a210c3-ac09-7f62-a686-dc40d42deed3.jsonl');
    expect(line).toContain('2026-11-25T03-33-23-095Z_01a210c3-e416-7120-8e1f-efdc4edf5740.jsonl');
  });

  it('--agent narrows the search', async () => {
    const result = await runCli(['estimate', '--json', '--agent', 'pi', '01a210c3'], { env: env() });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(jsonLines(result.stdout).map((record) => record['format'])).toEqual(['pi']);
  });

  it('is a one-line usage error when no session has it, as a path that matches nothing', async () => {
    const result = await runCli(['estimate', 'deadbeef'], { env: env() });
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^compactor: deadbeef: /), 'Run compactor --help for usage.']);
    expect(result.stderr).toMatch(/^compactor: deadbeef: no such file, and no session with this id in /);
  });

  it('names the session context prints', async () => {
    const byId = await runCli(['context', '258c7280'], { env: env() });
    const byPath = await runCli(['context', join(home, '.claude', 'projects', '-home-me-marot', `${MAROT}.jsonl`)], { env: env() });
    expect(byId.exitCode, byId.stderr).toBe(0);
    expect(byId.stdout.length).toBeGreaterThan(0);
    expect(byId.stdout).toBe(byPath.stdout);
  });

  it('names a session for the single-session commands too (fork)', async () => {
    const result = await runCli(['fork', '--strategy', 'truncate', 'zzzz9999'], { env: env() });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('zzzz9999: no such file, and no session with this id');
  });
});
