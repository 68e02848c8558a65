/**
 * Expands the paths users give (files, directories, globs) into session files, sorted and
 * without duplicates. Directories are walked for `.jsonl` files; our own sidecars are skipped.
 */
import { stat } from 'node:fs/promises';
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
    return 'missing';
  }
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
        ? await fg(SESSION_GLOB, { cwd: input, ignore: IGNORED, dot: true, onlyFiles: true, suppressErrors: true }).then((names) =>
            names.map((name) => `${input.replace(/\/+$/, '')}/${name}`),
          )
        : await fg(input, { ignore: IGNORED, dot: true, onlyFiles: true, suppressErrors: true });
    const sessions = matches.filter((path) => !isSidecarPath(path));
    if (sessions.length === 0) {
      throw new UsageError(kind === 'directory' ? `${input}: no .jsonl session files in this directory` : `${input}: no such file, and no file matches it as a glob`);
    }
    for (const path of sessions) found.add(path);
  }
  return [...found].sort();
}
