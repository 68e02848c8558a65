/**
 * Formats already detected while sniffing walked files (formats/index.ts), so `--format auto`
 * does not read and parse a file's first lines a second time when the session is read, in this
 * thread or in a worker (the pool carries the entries of a task's paths, workers/pool.ts).
 * An entry is used once, and only while the file keeps the size and mtime it was sniffed with:
 * a file rewritten or appended to since is detected again. Which reader a name means is left
 * to formats/index.ts.
 */
import { statSync } from 'node:fs';

export interface SniffedFormat {
  readonly path: string;
  /** A reader's name (READERS). */
  readonly format: string;
  readonly size: number;
  readonly mtimeMs: number;
}

const sniffed = new Map<string, SniffedFormat>();

export function rememberSniffed(entry: SniffedFormat): void {
  sniffed.set(entry.path, entry);
}

/** The entries for these paths, removed from this thread (they go with the paths to a worker). */
export function takeSniffed(paths: readonly string[]): SniffedFormat[] {
  const taken: SniffedFormat[] = [];
  for (const path of paths) {
    const entry = sniffed.get(path);
    if (!entry) continue;
    sniffed.delete(path);
    taken.push(entry);
  }
  return taken;
}

/** The format sniffed for a path if the file is unchanged since; the entry is used up either way. */
export function takeSniffedFormat(path: string): string | null {
  const [entry] = takeSniffed([path]);
  if (!entry) return null;
  try {
    const info = statSync(path);
    return info.size === entry.size && info.mtimeMs === entry.mtimeMs ? entry.format : null;
  } catch {
    // Gone or unreadable: detection (or the read) reports it.
    return null;
  }
}
