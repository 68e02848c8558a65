/**
 * Expands the paths users give (files, directories, globs) into session files, sorted and
 * without duplicates. Directories are walked for `.jsonl` files; our own sidecars are skipped.
 * Each file also gets a machine-independent key (its path relative to the input that found
 * it), which `--shard` hashes (shard.ts).
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import fg from 'fast-glob';
import { UsageError } from '../errors.js';
import { isSidecarPath } from '../sidecar/store.js';
import type { Shard } from './shard.js';
import { selectShard } from './shard.js';

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
        ? await fg(SESSION_GLOB, { cwd: input, ignore: IGNORED, dot: true, onlyFiles: true, suppressErrors: true }).then((names) =>
            names.map((name) => `${input.replace(/\/+$/, '')}/${name}`),
          )
        : await fg(input, { ignore: IGNORED, dot: true, onlyFiles: true, suppressErrors: true });
    const sessions = matches.filter((path) => !isSidecarPath(path));
    if (sessions.length === 0) {
      throw new UsageError(kind === 'directory' ? `${input}: no .jsonl session files in this directory` : `${input}: no such file, and no file matches it as a glob`);
    }
    const base = kind === 'directory' ? input : globBase(input);
    for (const path of sessions) if (!found.has(path)) found.set(path, relativeKey(path, base));
  }
  return [...found.keys()].sort().map((path) => ({ path, key: found.get(path)! }));
}

/** The sessions of this run: the inputs expanded, then only this shard's (all without --shard). */
export async function selectInputs(inputs: readonly string[], shard: Shard | null): Promise<string[]> {
  return selectShard(await expandInputFiles(inputs), shard).map((file) => file.path);
}
