/**
 * Where each agent keeps its sessions when the user names none: the folders a run reads with no
 * path (docs/guarantees.md "Default locations"). Pure: the environment and home folder are passed in;
 * walking the folders is inputs.ts's.
 *
 * - Claude Code: `projects/` under each folder of `$CLAUDE_CONFIG_DIR` (a comma-separated list, as
 *   ccusage takes it), else under `~/.claude` and `~/.config/claude`.
 * - Codex: `sessions/` and `archived_sessions/` under `$CODEX_HOME`, else `~/.codex`.
 * - pi: `$PI_CODING_AGENT_SESSION_DIR`, else `sessions/` under `$PI_CODING_AGENT_DIR`, else
 *   `~/.pi/agent/sessions` (pi's own rule, config.js and main.js of @mariozechner/pi-coding-agent).
 * - Gemini CLI: `~/.gemini/tmp` (its chats are `tmp/<project hash>/chats/session-*.json`, which a
 *   walk finds).
 * - opencode: its data folder (formats/opencode-location.ts), whose database and JSON storage a
 *   walk finds.
 */
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { opencodeDataDir } from '../formats/opencode-location.js';

export const AGENT_NAMES = ['claude-code', 'codex', 'pi', 'gemini-cli', 'opencode'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** A folder an agent keeps sessions in. */
export interface AgentFolder {
  readonly agent: AgentName;
  readonly folder: string;
}

/** `~` and `~/…` as the home folder, as pi expands its variables. */
function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  return path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

function given(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function claudeCodeFolders(env: NodeJS.ProcessEnv, home: string): string[] {
  const listed = given(env, 'CLAUDE_CONFIG_DIR');
  const roots = listed
    ? listed
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '')
        .map((entry) => expandHome(entry, home))
    : [join(home, '.claude'), join(home, '.config', 'claude')];
  return roots.map((root) => join(root, 'projects'));
}

function codexFolders(env: NodeJS.ProcessEnv, home: string): string[] {
  const root = expandHome(given(env, 'CODEX_HOME') ?? join(home, '.codex'), home);
  return [join(root, 'sessions'), join(root, 'archived_sessions')];
}

function piFolders(env: NodeJS.ProcessEnv, home: string): string[] {
  const sessions = given(env, 'PI_CODING_AGENT_SESSION_DIR');
  if (sessions) return [expandHome(sessions, home)];
  const agent = given(env, 'PI_CODING_AGENT_DIR');
  return [join(agent ? expandHome(agent, home) : join(home, '.pi', 'agent'), 'sessions')];
}

const FOLDERS: Readonly<Record<AgentName, (env: NodeJS.ProcessEnv, home: string) => string[]>> = {
  'claude-code': claudeCodeFolders,
  codex: codexFolders,
  pi: piFolders,
  'gemini-cli': (_env, home) => [join(home, '.gemini', 'tmp')],
  opencode: (env, home) => [opencodeDataDir(env, home)],
};

/** The folders of these agents (all by default), in AGENT_NAMES order, each once. */
export function agentFolders(env: NodeJS.ProcessEnv, home: string, agents: readonly AgentName[] = AGENT_NAMES): AgentFolder[] {
  const seen = new Set<string>();
  const folders: AgentFolder[] = [];
  for (const agent of AGENT_NAMES.filter((name) => agents.includes(name))) {
    for (const folder of FOLDERS[agent](env, home)) {
      if (seen.has(folder)) continue;
      seen.add(folder);
      folders.push({ agent, folder });
    }
  }
  return folders;
}

/** `--agent claude-code,codex`: the agents named, checked; all when not given. */
export function parseAgents(text: string | undefined): AgentName[] {
  if (text === undefined || text.trim() === '') return [...AGENT_NAMES];
  const names = text.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = names.filter((name) => !(AGENT_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new UsageError(`--agent must name agents among ${AGENT_NAMES.join(', ')}, got ${unknown.map((name) => JSON.stringify(name)).join(', ')}`);
  return AGENT_NAMES.filter((name) => names.includes(name));
}
