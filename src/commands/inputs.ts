/**
 * Expands the paths users give (files, directories, globs) into session files, sorted and
 * without duplicates. Directories are walked for `.jsonl` files and for Gemini CLI chat files
 * (`chats/session-*.json`, where Gemini writes them; no other `.json` file is a session); our
 * own sidecars are skipped.
 * What cannot be read (a dangling symlink, a file without read permission), named or walked, is
 * kept so its session fails with a one-line error instead of vanishing or stopping the run. A
 * walk skips directories named *.jsonl (it walks into them) and FIFOs, sockets and devices
 * (reading them could block forever).
 * What a walk or a glob finds is sniffed first (its first lines): files no reader knows are
 * skipped with a warning, so a whole `~/.claude/projects` or `~/.codex/sessions` reads without
 * failing. The format a sniff finds is remembered for the read (formats/sniffed.ts). A file named
 * explicitly is always read (and fails clearly if it is not a session), except a subagent's file
 * (a Claude Code subagent transcript, a Codex review rollout) whose session is among the inputs:
 * the session's read counts its calls (one note says so). Walked subagent transcripts are never
 * read as sessions of their own.
 * Each file also gets a machine-independent key (its path relative to the input that found
 * it), which `--shard` hashes (shard.ts).
 */
import { lstat, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import type { SubagentLabel } from '../formats/index.js';
import { namedSubagentParent, sniffWalkedFile } from '../formats/index.js';
import { isSidecarPath } from '../sidecar/store.js';
import type { Shard } from './shard.js';
import { selectShard } from './shard.js';
import { logMessage } from './log.js';

const SESSION_GLOBS = ['**/*.jsonl', '**/chats/session-*.json'];
/** Claude Code keeps large tool outputs under `<session>/tool-results/`: never sessions. */
const IGNORED = ['**/node_modules/**', '**/.git/**', '**/tool-results/**'];
/** Files sniffed between turns of the event loop (sniffing is synchronous: a few reads a file). */
const SNIFF_BETWEEN_TURNS = 256;

async function kindOf(path: string): Promise<'file' | 'directory' | 'missing'> {
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

export interface InputFile {
  readonly path: string;
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

/** Regular files, and symlinks that lead nowhere (reported when read); see the header. */
async function walk(pattern: string | readonly string[], cwd?: string): Promise<string[]> {
  // Loaded when first needed: worker threads import this module with their command's task but
  // never walk, and fast-glob costs each of them about 50 ms of CPU to load.
  const { default: fg } = await import('fast-glob');
  const entries = await fg(pattern as string | string[], { ...(cwd ? { cwd } : {}), ignore: IGNORED, dot: true, onlyFiles: false, objectMode: true, suppressErrors: true });
  return entries.filter((entry) => entry.dirent.isFile() || entry.dirent.isSymbolicLink()).map((entry) => entry.path);
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
  readonly sessions: readonly string[];
  readonly subagents: readonly Subagent[];
}

/** The session files among what a walk or glob found; unknown and empty files are reported on stderr. */
async function sessionsAmong(input: string, paths: readonly string[]): Promise<Found> {
  const subagents: Subagent[] = [];
  const sessions: string[] = [];
  for (const [index, path] of paths.entries()) {
    if (index > 0 && index % SNIFF_BETWEEN_TURNS === 0) await nextTurn();
    const found = sniffWalkedFile(path);
    if (found.kind === 'session') sessions.push(path);
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

export async function expandInputs(inputs: readonly string[]): Promise<string[]> {
  return (await expandInputFiles(inputs)).map((file) => file.path);
}

/**
 * The inputs' session files. Claude Code subagent transcripts are read with their session (their
 * calls are its spend: formats/claude-code.ts), so one whose session is among the inputs is not
 * read again as a session of its own, whether it was walked or named; a named one whose session is
 * not among the inputs is read as its own session, a walked one is skipped.
 */
export async function expandInputFiles(inputs: readonly string[]): Promise<InputFile[]> {
  const found = new Map<string, string>();
  const named: Subagent[] = [];
  const walked: Found[] = [];
  for (const input of inputs) {
    const kind = await kindOf(input);
    if (kind === 'file') {
      if (!found.has(input)) found.set(input, basename(input));
      const subagent = namedSubagentParent(input);
      if (subagent !== null) named.push({ path: input, ...subagent });
      continue;
    }
    const matches =
      kind === 'directory'
        ? (await walk(SESSION_GLOBS, input)).map((name) => `${input.replace(/\/+$/, '')}/${name}`)
        : await walk(input);
    const candidates = matches.filter((path) => !isSidecarPath(path)).sort();
    if (candidates.length === 0) {
      throw new UsageError(
        kind === 'directory' ? `${input}: no session files in this directory (*.jsonl, or Gemini CLI's chats/session-*.json)` : `${input}: no such file, and no file matches it as a glob`,
      );
    }
    const among = await sessionsAmong(input, candidates);
    const base = kind === 'directory' ? input : globBase(input);
    for (const path of among.sessions) if (!found.has(path)) found.set(path, relativeKey(path, base));
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
    if (among.sessions.length === 0 && beside.length === 0) throw new UsageError(`${among.input}: none of its ${among.candidates} candidate files is a session`);
  }
  for (const [label, count] of countByLabel([...counted.values()].map((label) => ({ label })))) {
    warn(`${plural(count, label)} counted in ${count === 1 ? 'its' : 'their'} session's spend, not read as a session of ${count === 1 ? 'its' : 'their'} own`);
  }
  return [...found.keys()].sort().map((path) => ({ path, key: found.get(path)! }));
}

/** The sessions of this run: the inputs expanded, then only this shard's (all without --shard). */
export async function selectInputs(inputs: readonly string[], shard: Shard | null): Promise<string[]> {
  return selectShard(await expandInputFiles(inputs), shard).map((file) => file.path);
}
