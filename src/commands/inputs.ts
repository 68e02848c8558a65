/**
 * Expands the paths users give (files, directories, globs) into session files, sorted and
 * without duplicates. Directories are walked for `.jsonl` files; our own sidecars are skipped.
 * What cannot be read (a dangling symlink, a file without read permission), named or walked, is
 * kept so its session fails with a one-line error instead of vanishing or stopping the run. A
 * walk skips directories named *.jsonl (it walks into them) and FIFOs, sockets and devices
 * (reading them could block forever).
 */
import { lstat, stat } from 'node:fs/promises';
import fg from 'fast-glob';
import { UsageError } from '../errors.js';
import { isSidecarPath } from '../sidecar/store.js';

const SESSION_GLOB = '**/*.jsonl';
const IGNORED = ['**/node_modules/**', '**/.git/**'];

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

/** Regular files, and symlinks that lead nowhere (reported when read); see the header. */
async function walk(pattern: string, cwd?: string): Promise<string[]> {
  const entries = await fg(pattern, { ...(cwd ? { cwd } : {}), ignore: IGNORED, dot: true, onlyFiles: false, objectMode: true, suppressErrors: true });
  return entries.filter((entry) => entry.dirent.isFile() || entry.dirent.isSymbolicLink()).map((entry) => entry.path);
}

export async function expandInputs(inputs: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const input of inputs) {
    const kind = await kindOf(input);
    if (kind === 'file') {
      found.add(input);
      continue;
    }
    const matches =
      kind === 'directory'
        ? (await walk(SESSION_GLOB, input)).map((name) => `${input.replace(/\/+$/, '')}/${name}`)
        : await walk(input);
    const sessions = matches.filter((path) => !isSidecarPath(path));
    if (sessions.length === 0) {
      throw new UsageError(kind === 'directory' ? `${input}: no .jsonl session files in this directory` : `${input}: no such file, and no file matches it as a glob`);
    }
    for (const path of sessions) found.add(path);
  }
  return [...found].sort();
}
