/**
 * Session files for tests that go over every fixture: the session files under a folder, and the
 * fixtures copied with and without the sidecars truncate writes.
 */
import { readdirSync } from 'node:fs';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { FIXTURES, runCli } from './cli.js';

/**
 * The session files under a folder, sorted: every `.jsonl` or `.json` file but sidecars and agent
 * manifests (`manifest.json`, `*.meta.json`), in subfolders too.
 */
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

/**
 * A new temp folder holding the fixtures twice: as they are (`none/`), and compacted by truncate
 * with a sidecar each (`truncate/`). The caller removes it.
 */
export async function fixturesWithTruncateSidecars(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  for (const variant of ['none', 'truncate']) await cp(FIXTURES, join(dir, variant), { recursive: true });
  const result = await runCli(['compact', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '300', '--jobs', '1', join(dir, 'truncate')]);
  expect(result.stderr).not.toContain('failed');
  return dir;
}
