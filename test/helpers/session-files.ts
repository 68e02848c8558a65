/**
 * The session files under a folder, sorted: every `.jsonl` or `.json` file but sidecars and agent
 * manifests (`manifest.json`, `*.meta.json`), in subfolders too.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function sessionFilesUnder(dir: string): string[] {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.jsonl?$/.test(entry.name) && !/_compaction\.json$|manifest\.json$|\.meta\.json$/.test(entry.name)) files.push(path);
    }
  };
  walk(dir);
  return files.sort();
}
