/**
 * Sessions found where the agents keep them (pipeline/locations.ts) rather than at a path the
 * user named: which of the agents' folders can be walked (a missing one is skipped quietly, an
 * unreadable one with one warning), and the session a session id, or a unique prefix of it,
 * names. The walk itself and the reading of stores are inputs.ts's and formats/'s.
 */
import { readdir, realpath } from 'node:fs/promises';
import { basename } from 'node:path';
import { UsageError } from '../errors.js';
import { storedSessions } from '../formats/index.js';
import { parseStoreAddress } from '../formats/store-address.js';
import { isSidecarPath } from '../sidecar/store.js';
import type { AgentFolder } from './locations.js';
import { logMessage } from './log.js';

/**
 * The folders that exist and can be read; an unreadable one is one warning, a missing one
 * nothing. A folder that is another one under a second name (`~/.config/claude` linked to
 * `~/.claude`) is read once, under its first name.
 */
export async function readableFolders(folders: readonly AgentFolder[], warn = true): Promise<AgentFolder[]> {
  const readable: AgentFolder[] = [];
  const seen = new Set<string>();
  for (const entry of folders) {
    try {
      await readdir(entry.folder);
      const real = await realpath(entry.folder);
      if (seen.has(real)) continue;
      seen.add(real);
      readable.push(entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      if (warn) logMessage('warning', `${entry.folder}: cannot read ${entry.agent}'s sessions here (${code ?? 'error'}); skipped`);
    }
  }
  return readable;
}

/** An input that names no file and may be a session id: letters, digits, `-` and `_`, 4 or more. */
export function looksLikeSessionId(input: string): boolean {
  return /^[A-Za-z0-9_-]{4,}$/.test(input);
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * The ids a session's path carries: the UUIDs in its file name (Claude Code's `<id>.jsonl`,
 * Codex's `rollout-<time>-<id>.jsonl`, pi's `<time>_<id>.jsonl`), an opencode session's id
 * (`opencode.db#ses_…`), and the short id ending a Gemini CLI chat's name (`session-<time>-<id8>.json`).
 */
export function sessionIdsOf(path: string): string[] {
  const address = parseStoreAddress(path);
  if (address) return [address.session];
  const name = basename(path);
  const ids = [...name.matchAll(UUID)].map((match) => match[0]);
  const gemini = /^session-.*-([0-9a-f]{8})\.json$/i.exec(name);
  if (gemini) ids.push(gemini[1]!);
  return ids;
}

/** The sessions among these walked files (a store stands for its sessions), sidecars left out. */
function sessionsOfFiles(paths: readonly string[]): string[] {
  const sessions: string[] = [];
  for (const path of paths) {
    if (isSidecarPath(path)) continue;
    let addresses: readonly string[] | null = null;
    try {
      addresses = storedSessions(path);
    } catch {
      addresses = null;
    }
    sessions.push(...(addresses ?? [path]));
  }
  return sessions;
}

/** The most candidates an ambiguous prefix lists. */
const LISTED = 10;

/**
 * The session `prefix` names among the files of the agents' folders: the one whose id starts
 * with it (case aside). None: a one-line usage error, as for a path that matches nothing;
 * several: a usage error listing them.
 */
export async function sessionById(prefix: string, folders: readonly AgentFolder[], walk: (folder: string) => Promise<string[]>): Promise<string> {
  const wanted = prefix.toLowerCase();
  const matches = new Set<string>();
  for (const { folder } of await readableFolders(folders, false)) {
    for (const session of sessionsOfFiles(await walk(folder))) {
      if (sessionIdsOf(session).some((id) => id.toLowerCase().startsWith(wanted))) matches.add(session);
    }
  }
  const found = [...matches].sort();
  if (found.length === 1) return found[0]!;
  if (found.length === 0) {
    // As a path that matches nothing: a usage error (exit 2).
    throw new UsageError(`${prefix}: no such file, and no session with this id in ${folders.map((entry) => entry.folder).join(', ') || 'the agents\' folders'}`);
  }
  const listed = found.slice(0, LISTED).join(', ');
  const more = found.length > LISTED ? `, and ${found.length - LISTED} more` : '';
  throw new UsageError(`${prefix}: ${found.length} sessions have an id starting with it: ${listed}${more}; give more of the id`);
}
