/**
 * Shared set-up for the LLM tests: a scratch directory with an empty config home (so a
 * developer's own config never leaks in), and the flags that point `compactor` at a fake.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeProvider } from './fake-provider.js';

export interface Scratch {
  readonly dir: string;
  /** XDG_CONFIG_HOME for the run: empty unless a test writes a config there. */
  readonly configHome: string;
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function llmScratch(): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-llm-'));
  const configHome = join(dir, 'config-home');
  await mkdir(join(dir, 'sessions'));
  await mkdir(configHome);
  return {
    dir: join(dir, 'sessions'),
    configHome,
    env: { XDG_CONFIG_HOME: configHome, OPENAI_API_KEY: '' },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** `--base-url` and `--model` for the fake, plus any extra flags. */
export function fakeFlags(fake: FakeProvider, ...extra: string[]): string[] {
  return ['--base-url', fake.url, '--model', 'fake-model', ...extra];
}

/** File names in a directory, sorted: proves no temporary or partial sidecar was left behind. */
export async function listDir(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}
