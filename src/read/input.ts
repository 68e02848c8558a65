/**
 * A session as the inputs name it: its path, with the format its walk sniffed
 * (formats/sniffed.ts) and the files beside it that its read counts (formats/companions.ts). Plain data, so what the main thread learned while walking goes with the
 * path to a worker (workers/pool.ts) and to the read (read/index.ts), not through a table.
 */
import type { Companions } from '../formats/reader.js';
import type { SniffedFormat } from '../formats/sniffed.js';

export interface SessionInput {
  readonly path: string;
  readonly sniffed?: SniffedFormat | null;
  /** The files beside it whose calls are its spend, as the walk found them (formats/companions.ts). */
  readonly companions?: Companions;
}

/** A path alone, or a path with what its walk found. */
export type SessionSource = string | SessionInput;

/** The input a source stands for. */
export function sessionInput(source: SessionSource): SessionInput {
  return typeof source === 'string' ? { path: source } : source;
}

/** The path a source names. */
export function sourcePath(source: SessionSource): string {
  return typeof source === 'string' ? source : source.path;
}
