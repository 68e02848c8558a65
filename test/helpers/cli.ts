/**
 * Runs the built CLI as a user would (node bin/compactor.js …) through execa, with CI-like
 * surroundings: no TTY, CI=true, no colour.
 */
import { execa } from 'execa';
import { readdirSync, statSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'compactor.js');
export const FIXTURES = join(ROOT, 'fixtures');

export interface CliResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `input`: what the CLI reads on stdin (none by default). `under`: a command the CLI runs under
 * (`[program, ...its arguments]`, then `node bin/compactor.js …`), such as asPermissionChecked.
 */
export async function runCli(args: readonly string[], options: { cwd?: string; env?: Record<string, string>; input?: string | Buffer; under?: readonly string[] } = {}): Promise<CliResult> {
  const [program, ...prefix] = [...(options.under ?? []), 'node'];
  const result = await execa(program!, [...prefix, BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { CI: 'true', NO_COLOR: '1', ...options.env },
    reject: false,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/**
 * Root reads any file whatever its mode, through two capabilities (reading past a mode, searching
 * past one). Run under this, root keeps its uid but loses both, so a mode-000 file is as
 * unreadable to it as to any user (util-linux's setpriv drops them from the bounding set, which
 * the exec of node then takes its capabilities from). Empty for any other user.
 */
export const asPermissionChecked: readonly string[] = process.getuid?.() === 0 ? ['setpriv', '--bounding-set', '-dac_override,-dac_read_search'] : [];

/** Parses NDJSON stdout into records. */
export function jsonLines(stdout: string): Record<string, any>[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** The per-session records of NDJSON stdout: without the roll-up `inspect` ends with over several sessions. */
export function sessionRecords(stdout: string): Record<string, any>[] {
  return jsonLines(stdout).filter((record) => !('rollup' in record));
}

/** A scratch directory with copies of the named fixtures; removed by the returned cleanup. */
export async function scratchCopy(...fixtureNames: string[]): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-test-'));
  for (const name of fixtureNames) await cp(join(FIXTURES, name), join(dir, name.split('/').pop()!), { recursive: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The session files under fixtures/, each named to inspect: Gemini CLI's `.json` ones too, and
 * opencode's stores (its database, and its JSON storage by the session files, not by the
 * message and part files a session is spread over).
 */
export function fixtureSessionFiles(dir: string = FIXTURES): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return /[\\/]storage$/.test(dir) && (name === 'message' || name === 'part') ? [] : fixtureSessionFiles(path);
      const session = name.endsWith('.jsonl') || /^opencode.*\.db$/.test(name) || (name.endsWith('.json') && name !== 'manifest.json' && !name.endsWith('.meta.json') && !name.endsWith('_compaction.json'));
      return session ? [path] : [];
    });
}
