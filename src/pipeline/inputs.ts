/**
 * Expands the paths users give (files, directories, globs) into session files, sorted and
 * without duplicates. `-` is stdin, one session (formats/json/input-source.ts). Directories are walked
 * for `.jsonl` and `.jsonl.gz` files and for Gemini CLI chat files (`chats/session-*.json`, where
 * Gemini writes them; no other `.json` file is a session); our own sidecars are skipped.
 * A walk stays inside the tree it was given: it does not follow symlinked directories (a link to
 * `~` would walk the home directory, and write sidecars all over it). A symlinked file inside the
 * tree is read through its link, and its sidecar is written beside the link, inside the tree.
 * Names may hold any byte a file name can (a newline too).
 * What cannot be read (a dangling symlink, a file without read permission), named or walked, is
 * kept so its session fails with a one-line error instead of vanishing or stopping the run. A
 * walk skips directories named *.jsonl (it walks into them) and FIFOs, sockets and devices
 * (reading them could block forever).
 * What a walk or a glob finds is sniffed first (its first lines): files no reader knows are
 * skipped with a warning, so a whole `~/.claude/projects` or `~/.codex/sessions` reads without
 * failing. The format a sniff finds goes with the path to the read (formats/sniffed.ts). A file named
 * explicitly is always read (and fails clearly if it is not a session), except a subagent's file
 * (a Claude Code subagent transcript, a Codex review rollout) whose session is among the inputs:
 * the session's read counts its calls (one note says so). Walked subagent transcripts are never
 * read as sessions of their own.
 * Each file also gets a machine-independent key (its path relative to the input that found
 * it), which `--shard` hashes (shard.ts).
 * With no input at all, the agents' own folders are walked (locations.ts; `--agent` narrows
 * them) and stderr says how many sessions each held; an input that names no file but looks like a
 * session id is looked up in those folders (located.ts).
 */
import { fstatSync, statSync } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import type { Entry } from '@nodelib/fs.walk';
import { UsageError } from '../errors.js';
import type { SubagentLabel } from '../formats/index.js';
import { namedSubagentParent, sniffWalkedFile, storedSessions } from '../formats/index.js';
import { SessionFolders } from '../formats/companions.js';
import { isStdin } from '../formats/json/input-source.js';
import { isOpencodeDatabaseName, opencodeStorageSession } from '../formats/opencode-location.js';
import { parseStoreAddress } from '../formats/store-address.js';
import type { SniffedFormat } from '../formats/sniffed.js';
import type { SessionInput } from '../read/input.js';
import { isSidecarPath } from '../sidecar/store.js';
import type { Shard } from './shard.js';
import { selectShard } from './shard.js';
import { logMessage } from './log.js';
import type { AgentFolder, AgentName } from './locations.js';
import { AGENT_NAMES, agentFolders } from './locations.js';
import { looksLikeSessionId, readableFolders, sessionById } from './located.js';

/**
 * Whether stdin brings data a command should read when no path is named: a pipe
 * (`cat s.jsonl | compactor estimate`) or a redirected file (`< s.jsonl`), as jq and wc read it.
 * Not a terminal, and not a socket or /dev/null a harness may leave open with nothing to say.
 */
export function stdinIsPiped(): boolean {
  try {
    const info = fstatSync(0);
    return info.isFIFO() || info.isFile();
  } catch {
    return false;
  }
}

/** Claude Code keeps large tool outputs under `<session>/tool-results/`: never sessions. */
const IGNORED_DIRECTORIES = new Set(['node_modules', '.git', 'tool-results']);
const IGNORED = [...IGNORED_DIRECTORIES].map((name) => `**/${name}/**`);

/**
 * What a directory walk reads: JSON lines (plain or gzipped), Gemini CLI's chat files, and
 * opencode's stores: its database (`opencode.db`) and its JSON storage's session files.
 */
function isSessionName(path: string): boolean {
  const name = basename(path);
  if (/\.jsonl(\.gz)?$/i.test(name)) return true;
  if (isOpencodeDatabaseName(name) || opencodeStorageSession(path) !== null) return true;
  return /^session-.*\.json$/s.test(name) && basename(path.slice(0, -name.length - 1)) === 'chats';
}

/** opencode's JSON storage keeps messages and parts one file each, thousands: a walk skips them (its session files lead to them). */
function isOpencodeRecordFolder(path: string): boolean {
  return /\/storage\/(message|part)$/.test(path);
}
/** Files sniffed between turns of the event loop (sniffing is synchronous: a few reads a file). */
const SNIFF_BETWEEN_TURNS = 256;

async function kindOf(path: string): Promise<'file' | 'directory' | 'missing'> {
  if (isStdin(path) || parseStoreAddress(path) !== null) return 'file';
  try {
    const info = await stat(path);
    return info.isDirectory() ? 'directory' : 'file';
  } catch {
    // A named link that leads nowhere (say from a shell's `*.jsonl`) fails as a session, not the run.
    return lstat(path).then(
      () => 'file' as const,
      () => 'missing' as const,
    );
  }
}

export interface InputFile extends SessionInput {
  /** The path relative to the directory or glob base it was found under; a file's own name. */
  readonly key: string;
}

const GLOB_CHARACTERS = /[*?[\]{}()!]/;

/** The leading directories of a glob with no pattern in them: `logs/2025/*.jsonl` → `logs/2025`. */
function globBase(pattern: string): string {
  const parts = pattern.split('/');
  const fixed: string[] = [];
  for (const part of parts.slice(0, -1)) {
    if (GLOB_CHARACTERS.test(part)) break;
    fixed.push(part);
  }
  return fixed.join('/');
}

function relativeKey(path: string, base: string): string {
  const prefix = base === '' ? '' : `${base.replace(/\/+$/, '')}/`;
  return prefix !== '' && path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/**
 * Regular files, and symlinks to them or leading nowhere (reported when read); not a symlink to a
 * FIFO, a device or a directory, which a walk skips as it skips them (see the header).
 */
function isFileEntry(entry: { path: string; dirent: Entry['dirent'] }): boolean {
  if (entry.dirent.isFile()) return true;
  if (!entry.dirent.isSymbolicLink()) return false;
  try {
    return statSync(entry.path, { throwIfNoEntry: false })?.isFile() ?? true;
  } catch {
    return true;
  }
}

/** The files a glob matches, without following symlinked directories. */
async function globbed(pattern: string): Promise<string[]> {
  // Loaded when first needed: worker threads import this module with their command's task but
  // never walk, and fast-glob costs each of them about 50 ms of CPU to load.
  const { default: fg } = await import('fast-glob');
  const entries = await fg(pattern, { ignore: IGNORED, dot: true, onlyFiles: false, objectMode: true, suppressErrors: true, followSymbolicLinks: false });
  return entries.filter(isFileEntry).map((entry) => entry.path);
}

/**
 * The session files under a directory (isSessionName). Walked with fs.walk rather than a glob:
 * fast-glob does not descend into a directory whose name holds a newline. Symlinked directories
 * are not followed (lstat entries: a link is never a directory); unreadable directories are skipped.
 */
async function walkedDirectory(directory: string): Promise<string[]> {
  const { walk } = await import('@nodelib/fs.walk');
  const root = directory.replace(/(.)\/+$/, '$1');
  const entries = await new Promise<Entry[]>((done, fail) =>
    walk(
      root,
      {
        followSymbolicLinks: false,
        deepFilter: (entry) => !IGNORED_DIRECTORIES.has(entry.name) && !isOpencodeRecordFolder(entry.path),
        entryFilter: (entry) => isFileEntry(entry) && isSessionName(entry.path),
        errorFilter: () => true,
      },
      (error, found) => (error ? fail(error) : done(found)),
    ),
  );
  return entries.map((entry) => entry.path);
}

function warn(message: string): void {
  logMessage('warning', message);
}

/** A subagent's file met among the inputs (WalkedFile), and the session file it belongs to. */
interface Subagent {
  readonly path: string;
  readonly parent: string | null;
  readonly label: SubagentLabel;
}

/** What one directory or glob found: its sessions and the subagent transcripts beside them. */
interface Found {
  readonly input: string;
  readonly candidates: number;
  /** Session paths, each with the format its sniff found (null: detected when read). */
  readonly sessions: ReadonlyMap<string, SniffedFormat | null>;
  readonly subagents: readonly Subagent[];
}

/** The session files among what a walk or glob found; unknown and empty files are reported on stderr. */
async function sessionsAmong(input: string, paths: readonly string[], folders: SessionFolders): Promise<Found> {
  const subagents: Subagent[] = [];
  const sessions = new Map<string, SniffedFormat | null>();
  for (const [index, path] of paths.entries()) {
    if (index > 0 && index % SNIFF_BETWEEN_TURNS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const found = sniffWalkedFile(path, folders);
    if (found.kind === 'session') sessions.set(path, found.sniffed ?? null);
    else if (found.kind === 'sessions') for (const address of found.addresses) sessions.set(address, null);
    else if (found.kind === 'subagent') subagents.push({ path, parent: found.parent, label: found.label });
    else warn(`${path}: ${found.kind === 'empty' ? 'empty file' : 'not a session file (no known format)'}; skipped`);
  }
  return { input, candidates: paths.length, sessions, subagents };
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** How many of each kind of subagent file, in the order the kinds were first met. */
function countByLabel(subagents: readonly { readonly label: SubagentLabel }[]): Map<SubagentLabel, number> {
  const counts = new Map<SubagentLabel, number>();
  for (const { label } of subagents) counts.set(label, (counts.get(label) ?? 0) + 1);
  return counts;
}

/**
 * The sessions a named file stands for when it is a store of many (an opencode database, a
 * JSON storage session file), else null. A store that cannot be read is kept as the input, so
 * reading it fails with its one-line error, not the run.
 */
function storeAddresses(input: string): readonly string[] | null {
  try {
    return storedSessions(input);
  } catch {
    return null;
  }
}

/**
 * opencode 1.2 to 1.17 copied the JSON storage into the database and left the files: a session
 * found in both, in one data folder, is read once, from the database (a note says how many).
 */
function dropMigratedCopies(found: Map<string, unknown>): void {
  const inDatabase = new Set<string>();
  const inStorage: { readonly path: string; readonly key: string; readonly storage: string }[] = [];
  for (const path of found.keys()) {
    const address = parseStoreAddress(path);
    if (!address) continue;
    const key = `${resolve(dirname(address.store))}#${address.session}`;
    if (basename(address.store) === 'storage') inStorage.push({ path, key, storage: address.store });
    else inDatabase.add(key);
  }
  const dropped = new Map<string, number>();
  for (const { path, key, storage } of inStorage) {
    if (!inDatabase.has(key)) continue;
    found.delete(path);
    dropped.set(storage, (dropped.get(storage) ?? 0) + 1);
  }
  for (const [storage, count] of dropped) warn(`${storage}: ${plural(count, 'opencode session')} also in opencode's database beside it, read from the database`);
}

/**
 * The inputs' session files. Claude Code subagent transcripts are read with their session (their
 * calls are its spend: formats/claude-code.ts), so one whose session is among the inputs is not
 * read again as a session of its own, whether it was walked or named; a named one whose session is
 * not among the inputs is read as its own session, a walked one is skipped. `onWalked` hears how
 * many candidate files each directory or glob found, before they are sniffed (a command may start
 * its workers meanwhile).
 */
export async function expandInputFiles(given: readonly string[], onWalked?: (candidates: number) => void, agents: readonly AgentName[] = AGENT_NAMES): Promise<InputFile[]> {
  /** Each session path's key (shard.ts) and sniffed format. */
  const found = new Map<string, { readonly key: string; readonly sniffed: SniffedFormat | null }>();
  /** What the walk reads of each folder, once: the subagents' files beside the sessions. */
  const beside = new SessionFolders();
  const named: Subagent[] = [];
  const walked: Found[] = [];
  const folders = agentFolders(process.env, homedir(), agents);
  const located = given.length === 0 ? await readableFolders(folders) : null;
  if (located?.length === 0) {
    throw new UsageError(`no session named, and none of the agents' folders exists (${folders.map((entry) => entry.folder).join(', ')}): name a session file, directory or glob`);
  }
  const inputs = located ? located.map((entry) => entry.folder) : given;
  for (const entry of inputs) {
    const input = await namedSession(entry, folders);
    const kind = await kindOf(input);
    if (kind === 'file') {
      const addresses = storeAddresses(input);
      if (addresses) {
        for (const address of addresses) if (!found.has(address)) found.set(address, { key: basename(address), sniffed: null });
        continue;
      }
      if (!found.has(input)) found.set(input, { key: basename(input), sniffed: null });
      const subagent = namedSubagentParent(input, beside);
      if (subagent !== null) named.push({ path: input, ...subagent });
      continue;
    }
    const matches = kind === 'directory' ? await walkedDirectory(input) : await globbed(input);
    const candidates = matches.filter((path) => !isSidecarPath(path)).sort();
    // An agent's folder may hold no session yet: it counts 0 (reported below), not an error.
    if (candidates.length === 0 && located) continue;
    if (candidates.length === 0) {
      throw new UsageError(
        kind === 'directory' ? `${input}: no session files in this directory (*.jsonl, *.jsonl.gz, or Gemini CLI's chats/session-*.json)` : `${input}: no such file, and no file matches it as a glob`,
      );
    }
    onWalked?.(candidates.length);
    const among = await sessionsAmong(input, candidates, beside);
    const base = kind === 'directory' ? input : globBase(input);
    for (const [path, sniffed] of among.sessions) if (!found.has(path)) found.set(path, { key: relativeKey(path, base), sniffed });
    walked.push(among);
  }
  const sessions = new Set([...found.keys()].map((path) => resolve(path)));
  const withItsSession = (subagent: Subagent) => subagent.parent !== null && sessions.has(resolve(subagent.parent));
  const counted = new Map<string, SubagentLabel>();
  for (const subagent of named.filter(withItsSession)) {
    found.delete(subagent.path);
    counted.set(resolve(subagent.path), subagent.label);
  }
  for (const among of walked) {
    const beside = among.subagents.filter(withItsSession);
    for (const subagent of beside) counted.set(resolve(subagent.path), subagent.label);
    for (const [label, alone] of countByLabel(among.subagents.filter((subagent) => !withItsSession(subagent)))) {
      warn(`${among.input}: skipped ${plural(alone, label)} whose session is not among the inputs (name a file to read it)`);
    }
    if (among.sessions.size === 0 && beside.length === 0 && !located) throw new UsageError(`${among.input}: none of its ${among.candidates} candidate files is a session`);
  }
  dropMigratedCopies(found);
  for (const [label, count] of countByLabel([...counted.values()].map((label) => ({ label })))) {
    warn(`${plural(count, label)} counted in ${count === 1 ? 'its' : 'their'} session's spend, not read as a session of ${count === 1 ? 'its' : 'their'} own`);
  }
  if (located) reportLocated(located, [...found.keys()]);
  // Each session goes with what the walk found beside it (formats/companions.ts), as with its sniffed format.
  return [...found.keys()].sort().map((path) => {
    const { key, sniffed } = found.get(path)!;
    const companions = beside.companionsOf(path);
    return { path, key, ...(sniffed ? { sniffed } : {}), ...(companions ? { companions } : {}) };
  });
}

/**
 * The input itself, or, when it names no file and looks like a session id, the one session in
 * the agents' folders whose id starts with it (located.ts; ambiguous or none: an error).
 */
async function namedSession(input: string, folders: readonly AgentFolder[]): Promise<string> {
  if (!looksLikeSessionId(input) || (await kindOf(input)) !== 'missing') return input;
  return sessionById(input, folders, walkedDirectory);
}

/** A single session's name (`context`): a path, `-`, or a session id found in the agents' folders. */
export function resolveSessionName(input: string, agents: readonly AgentName[] = AGENT_NAMES): Promise<string> {
  return namedSession(input, agentFolders(process.env, homedir(), agents));
}

/**
 * Says on stderr which of the agents' folders were read and how many sessions each held (never on
 * stdout: `--json` stays the records alone); none at all is a usage error.
 */
function reportLocated(folders: readonly AgentFolder[], sessions: readonly string[]): void {
  for (const { agent, folder } of folders) {
    const inside = `${folder.replace(/\/+$/, '')}/`;
    const count = sessions.filter((path) => path.startsWith(inside)).length;
    logMessage('info', `read ${folder} (${agent}): ${plural(count, 'session')}`);
  }
  if (sessions.length === 0) throw new UsageError(`no session named, and no session in the agents' folders read above: name a session file, directory or glob`);
}

/** The sessions of this run: the inputs expanded, then only this shard's (all without --shard). */
export async function selectInputs(inputs: readonly string[], shard: Shard | null, onWalked?: (candidates: number) => void, agents?: readonly AgentName[]): Promise<SessionInput[]> {
  return selectShard(await expandInputFiles(inputs, onWalked, agents), shard).map(({ key: _key, ...input }) => input);
}
