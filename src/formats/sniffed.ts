/**
 * A format detected while sniffing a walked file (formats/index.ts sniffWalkedFile), carried as
 * data with the file's path (pipeline/inputs.ts → the worker's payload → read/), so `--format
 * auto` does not read and parse the file's first lines a second time when the session is read.
 * It holds only while the file keeps the size and mtime it was sniffed with: a file rewritten or
 * appended to since is detected again. Which reader a name means is left to formats/index.ts.
 * A format its first value alone settled (`seen: 'first value'`) comes from lines detection
 * never checked: a read that fails with it runs detection, whose error (a bad line among the
 * first) comes first, as it would have.
 */
import { statSync } from 'node:fs';

export interface SniffedFormat {
  /** A reader's name (READERS). */
  readonly format: string;
  /** What the sniff parsed: every line detection parses, or the first value, which settled it (formats/index.ts). */
  readonly seen: 'head' | 'first value';
  readonly size: number;
  readonly mtimeMs: number;
}

/** The format sniffed for `path` if the file is unchanged since, else null. */
export function formatIfUnchanged(path: string, sniffed: SniffedFormat | null | undefined): string | null {
  if (!sniffed) return null;
  try {
    const info = statSync(path);
    return info.size === sniffed.size && info.mtimeMs === sniffed.mtimeMs ? sniffed.format : null;
  } catch {
    // Gone or unreadable: detection (or the read) reports it.
    return null;
  }
}
