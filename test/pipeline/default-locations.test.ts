/**
 * With no path, the commands read every agent's own folders under HOME (or where the agents'
 * variables say), and stderr says which folders and how many sessions each held; `--agent`
 * narrows them; a missing folder is skipped quietly, an unreadable one is one warning.
 */
import { chmod, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentFolders, parseAgents } from '../../src/pipeline/locations.js';
import { CLEAN_AGENT_ENV, placeFixture, placeOpencode } from '../helpers/agent-home.js';
import { asPermissionChecked, jsonLines, runCli } from '../helpers/cli.js';

const homes: string[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) {
    await chmod(join(home, '.codex', 'sessions'), 0o755).catch(() => {});
    await rm(home, { recursive: true, force: true });
  }
});

async function newHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'compactor-home-'));
  homes.push(home);
  return home;
}

/** A home with every agent's sessions where the agent keeps them: 1 + 1 Claude Code, 2 Codex, 1 pi, 1 Gemini CLI, 1 opencode. */
async function fullHome(): Promise<string> {
  const home = await newHome();
  await placeFixture('agents/claude-code/auto-compact/projects', join(home, '.claude', 'projects'));
  await placeFixture('real/claude-code/marot_spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl', join(home, '.config', 'claude', 'projects', '-home-me-marot', '258c7280-ae70-4798-800f-63464d01a85d.jsonl'));
  await placeFixture('agents/codex/auto-compact/sessions', join(home, '.codex', 'sessions'));
  await placeFixture('agents/codex/tools-resume-abort/sessions', join(home, '.codex', 'archived_sessions'));
  await placeFixture('agents/pi/print-continue/sessions', join(home, '.pi', 'agent', 'sessions'));
  await placeFixture('real/gemini-cli/jnarowski_agentcmd_gemini-session-981c87cb.json', join(home, '.gemini', 'tmp', 'abc123', 'chats', 'session-2025-09-18T10-23-981c87cb.json'));
  await placeOpencode(join(home, '.local', 'share', 'opencode'));
  return home;
}

const readLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('compactor: read '));

describe('the agents\' folders (pure)', () => {
  it('follows each agent\'s variables, and lists each folder once', () => {
    const folders = agentFolders({ CLAUDE_CONFIG_DIR: '/a, ~/b,/a', CODEX_HOME: '/c', PI_CODING_AGENT_DIR: '~/p', XDG_DATA_HOME: '/x' }, '/h');
    expect(folders.map(({ agent, folder }) => `${agent} ${folder}`)).toEqual([
      'claude-code /a/projects',
      'claude-code /h/b/projects',
      'codex /c/sessions',
      'codex /c/archived_sessions',
      'pi /h/p/sessions',
      'gemini-cli /h/.gemini/tmp',
      'opencode /x/opencode',
    ]);
    expect(agentFolders({ PI_CODING_AGENT_SESSION_DIR: '/s', PI_CODING_AGENT_DIR: '/p' }, '/h', ['pi'])).toEqual([{ agent: 'pi', folder: '/s' }]);
  });

  it('checks --agent names', () => {
    expect(parseAgents('codex, pi')).toEqual(['codex', 'pi']);
    expect(() => parseAgents('codex,cursor')).toThrow(/--agent must name agents among .*got "cursor"/);
  });
});

describe('no path: every agent\'s default folders', () => {
  it('reads them all, and says on stderr which folders and how many sessions each held', async () => {
    const home = await fullHome();
    const result = await runCli(['estimate', '--json'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readLines(result.stderr)).toEqual([
      `compactor: read ${home}/.claude/projects (claude-code): 1 session`,
      `compactor: read ${home}/.config/claude/projects (claude-code): 1 session`,
      `compactor: read ${home}/.codex/sessions (codex): 1 session`,
      `compactor: read ${home}/.codex/archived_sessions (codex): 1 session`,
      `compactor: read ${home}/.pi/agent/sessions (pi): 1 session`,
      `compactor: read ${home}/.gemini/tmp (gemini-cli): 1 session`,
      `compactor: read ${home}/.local/share/opencode (opencode): 1 session`,
    ]);
    const records = jsonLines(result.stdout);
    expect(records.map((record) => record['format']).sort()).toEqual(['claude-code', 'claude-code', 'codex', 'codex', 'gemini-cli', 'opencode', 'pi']);
    // stdout stays the records alone.
    expect(result.stdout).not.toContain('compactor: read');
  });

  it('--agent reads only the agents named', async () => {
    const home = await fullHome();
    const result = await runCli(['inspect', '--json', '--agent', 'codex,pi'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readLines(result.stderr)).toEqual([
      `compactor: read ${home}/.codex/sessions (codex): 1 session`,
      `compactor: read ${home}/.codex/archived_sessions (codex): 1 session`,
      `compactor: read ${home}/.pi/agent/sessions (pi): 1 session`,
    ]);
    expect(jsonLines(result.stdout).filter((record) => !('rollup' in record))).toHaveLength(3);
  });

  it('follows $CLAUDE_CONFIG_DIR (a list), $CODEX_HOME, $PI_CODING_AGENT_DIR and $XDG_DATA_HOME', async () => {
    const home = await newHome();
    const elsewhere = await newHome();
    await placeFixture('agents/claude-code/auto-compact/projects', join(elsewhere, 'one', 'projects'));
    await placeFixture('agents/claude-code/branches-compact-abort/projects', join(elsewhere, 'two', 'projects'));
    await placeFixture('agents/codex/auto-compact/sessions', join(elsewhere, 'codex', 'sessions'));
    await placeFixture('agents/pi/print-continue/sessions', join(elsewhere, 'pi', 'sessions'));
    await placeOpencode(join(elsewhere, 'data', 'opencode'));
    // What is under HOME is not read when a variable names another folder.
    await placeFixture('agents/codex/tools-resume-abort/sessions', join(home, '.codex', 'sessions'));
    const env = {
      HOME: home,
      ...CLEAN_AGENT_ENV,
      CLAUDE_CONFIG_DIR: `${elsewhere}/one,${elsewhere}/two`,
      CODEX_HOME: join(elsewhere, 'codex'),
      PI_CODING_AGENT_DIR: join(elsewhere, 'pi'),
      XDG_DATA_HOME: join(elsewhere, 'data'),
    };
    const result = await runCli(['estimate', '--json'], { env });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readLines(result.stderr)).toEqual([
      `compactor: read ${elsewhere}/one/projects (claude-code): 1 session`,
      `compactor: read ${elsewhere}/two/projects (claude-code): 2 sessions`,
      `compactor: read ${elsewhere}/codex/sessions (codex): 1 session`,
      `compactor: read ${elsewhere}/pi/sessions (pi): 1 session`,
      `compactor: read ${elsewhere}/data/opencode (opencode): 1 session`,
    ]);
    expect(jsonLines(result.stdout).every((record) => String(record['session']).startsWith(elsewhere))).toBe(true);
  });

  it('skips a missing folder without a word, and warns once about an unreadable one', async () => {
    const home = await newHome();
    await placeFixture('agents/claude-code/auto-compact/projects', join(home, '.claude', 'projects'));
    await placeFixture('agents/codex/auto-compact/sessions', join(home, '.codex', 'sessions'));
    await chmod(join(home, '.codex', 'sessions'), 0o000);
    const result = await runCli(['estimate', '--json'], { env: { HOME: home, ...CLEAN_AGENT_ENV }, under: asPermissionChecked });
    expect(result.exitCode, result.stderr).toBe(0);
    const warnings = result.stderr.split('\n').filter((line) => line.includes('warning'));
    expect(warnings).toEqual([`compactor: warning: ${home}/.codex/sessions: cannot read codex's sessions here (EACCES); skipped`]);
    expect(readLines(result.stderr)).toEqual([`compactor: read ${home}/.claude/projects (claude-code): 1 session`]);
    // The missing folders (~/.config/claude, ~/.pi, ~/.gemini, opencode's) are not named at all.
    expect(result.stderr).not.toMatch(/\.pi|\.gemini|opencode|\.config/);
    expect(jsonLines(result.stdout)).toHaveLength(1);
  });

  it('reads a folder linked under a second name once (~/.config/claude -> ~/.claude)', async () => {
    const home = await newHome();
    await placeFixture('agents/claude-code/auto-compact/projects', join(home, '.claude', 'projects'));
    await mkdir(join(home, '.config'));
    await symlink(join(home, '.claude'), join(home, '.config', 'claude'));
    const result = await runCli(['estimate', '--json'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readLines(result.stderr)).toEqual([`compactor: read ${home}/.claude/projects (claude-code): 1 session`]);
    expect(jsonLines(result.stdout)).toHaveLength(1);
  });

  it('is a usage error when no agent folder exists, or none holds a session', async () => {
    const home = await newHome();
    const none = await runCli(['inspect'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain("none of the agents' folders exists");
    await mkdir(join(home, '.claude', 'projects', 'empty'), { recursive: true });
    const empty = await runCli(['inspect'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toContain(`compactor: read ${home}/.claude/projects (claude-code): 0 sessions`);
    expect(empty.stderr).toContain("no session in the agents' folders read above");
  });

  it('compact with no path writes its sidecars in the agents\' folders, and says so first', async () => {
    const home = await newHome();
    await placeFixture('agents/claude-code/auto-compact/projects', join(home, '.claude', 'projects'));
    const result = await runCli(['compact', '--strategy', 'truncate', '--force', '--allow-no-gain'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain("compactor: writing sidecars beside the sessions in the agents' folders");
    const folder = join(home, '.claude', 'projects', '-tmp-compactor-agents-project');
    expect((await readdir(folder)).filter((name) => name.endsWith('_compaction.json'))).toHaveLength(1);
    const dry = await runCli(['compact', '--strategy', 'truncate', '--dry-run'], { env: { HOME: home, ...CLEAN_AGENT_ENV } });
    expect(dry.stderr).not.toContain('writing sidecars');
  });
});
