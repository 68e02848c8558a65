/**
 * Homes laid out as the agents keep their sessions, for the tests of the default locations, ids
 * and filters: fixtures copied where each agent writes, with the agents' own variables cleared
 * so the machine's never leak into a test.
 */
import { cp, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FIXTURES } from './cli.js';

/** The variables that move the agents' folders, cleared (an empty value counts as unset). */
export const CLEAN_AGENT_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CONFIG_DIR: '',
  CODEX_HOME: '',
  PI_CODING_AGENT_DIR: '',
  PI_CODING_AGENT_SESSION_DIR: '',
  XDG_DATA_HOME: '',
};

/** Copies a fixture (a file or a folder, under fixtures/) to `to`, its parent made first. */
export async function placeFixture(fixture: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await cp(join(FIXTURES, fixture), to, { recursive: true });
}

/** opencode's database (with its journal files) from the agents' fixtures, into `dataDir`. */
export async function placeOpencode(dataDir: string): Promise<void> {
  for (const name of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) await placeFixture(`agents/opencode/tools-compact/${name}`, join(dataDir, name));
}
