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
 * skipped with a warning, and Claude Code subagent transcripts are skipped with one note per
 * input, so a whole `~/.claude/projects` or `~/.codex/sessions` reads without failing. The
 * format a sniff finds is remembered for the read (formats/sniffed.ts). A file named explicitly
 * is always read (and fails clearly if it is not a session).
 * Each file also gets a machine-independent key (its path relative to the input that found
 * it), which `--shard` hashes (shard.ts).
 */
import { lstat, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { sniffWalkedFile } from '../formats/index.js';
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

/** The session files among what a walk or glob found; the rest is reported on stderr. */
async function sessionsAmong(input: string, paths: readonly string[]): Promise<string[]> {
  let subagents = 0;
  const sessions: string[] = [];
  for (const [index, path] of paths.entries()) {
    if (index > 0 && index % SNIFF_BETWEEN_TURNS === 0) await nextTurn();
    const kind = sniffWalkedFile(path);
    if (kind === 'session') sessions.push(path);
    else if (kind === 'subagent') subagents++;
    else warn(`${path}: ${kind === 'empty' ? 'empty file' : 'not a session file (no known format)'}; skipped`);
  }
  if (subagents > 0) {
    warn(`${input}: skipped ${subagents} Claude Code subagent transcript${subagents === 1 ? '' : 's'} (name a file to read it)`);
  }
  return sessions;
}

export async function expandInputs(inputs: readonly string[]): Promise<string[]> {
  return (await expandInputFiles(inputs)).map((file) => file.path);
}

export async function expandInputFiles(inputs: readonly string[]): Promise<InputFile[]> {
  const found = new Map<string, string>();
  for (const input of inputs) {
    const kind = await kindOf(input);
    if (kind === 'file') {
      if (!found.has(input)) found.set(input, basename(input));
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
    const sessions = await sessionsAmong(input, candidates);
    if (sessions.length === 0) throw new UsageError(`${input}: none of its ${candidates.length} candidate files is a session`);
    const base = kind === 'directory' ? input : globBase(input);
    for (const path of sessions) if (!found.has(path)) found.set(path, relativeKey(path, base));
  }
  return [...found.keys()].sort().map((path) => ({ path, key: found.get(path)! }));
}

/** The sessions of this run: the inputs expanded, then only this shard's (all without --shard). */
export async function selectInputs(inputs: readonly string[], shard: Shard | null): Promise<string[]> {
  return selectShard(await expandInputFiles(inputs), shard).map((file) => file.path);
}
