#!/usr/bin/env node
/**
 * `npm run demo`: the main job on the bundled fixtures, in a scratch copy so the repository is
 * never written: inspect the token growth, replay policies side by side, audit what two offline
 * strategies keep, compact everything, and compact again (now up-to-date).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'compactor.js');
const scratch = mkdtempSync(join(tmpdir(), 'compactor-demo-'));
cpSync(join(root, 'fixtures'), scratch, { recursive: true });

const run = (...args) => {
  process.stdout.write(`\n$ compactor ${args.join(' ')}\n`);
  execFileSync(process.execPath, [bin, ...args], { cwd: scratch, stdio: 'inherit' });
};
try {
  run('inspect', 'bug.jsonl');
  run('replay', '--policy', 'custom,pi,codex,coop', '--context-limit', '80000', 'bug.jsonl');
  run('audit', '--strategy', 'extract,truncate', '--context-limit', '80000', 'bug.jsonl');
  run('compact', '--strategy', 'truncate', '--context-limit', '80000', '.');
  run('compact', '--strategy', 'truncate', '--context-limit', '80000', '.');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
