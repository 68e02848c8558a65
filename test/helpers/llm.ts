/**
 * Shared set-up for the LLM tests: a scratch directory with an empty config home (so a
 * developer's own config never leaks in), and the flags that point `compactor` at a fake.
 */
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { FakeProvider, FakeProviderOptions } from './fake-provider.js';
import { startFakeProvider } from './fake-provider.js';

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

/** Every file under `root` and its text: where a leaked key would be found. */
export async function everyFileText(root: string): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) texts.set(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return texts;
}

export interface LlmTest {
  /** A fresh scratch directory for each test. */
  readonly scratch: Scratch;
  /** The fake provider started by `start`, or null. */
  readonly fake: FakeProvider | null;
  /** Starts the fake provider for this test; it is closed after the test. */
  start(options?: FakeProviderOptions): Promise<FakeProvider>;
  /** Closes the fake and replaces the scratch directory, for a second scenario in one test. */
  renew(): Promise<void>;
}

/** Registers per-test set-up and clean-up of a scratch directory and a fake provider. */
export function useLlmTest(): LlmTest {
  let scratch: Scratch | null = null;
  let fake: FakeProvider | null = null;
  const teardown = async () => {
    await fake?.close();
    fake = null;
    await scratch?.cleanup();
  };
  beforeEach(async () => {
    scratch = await llmScratch();
  });
  afterEach(teardown);
  return {
    get scratch() {
      if (!scratch) throw new Error('useLlmTest: scratch is only available inside a test');
      return scratch;
    },
    get fake() {
      return fake;
    },
    async start(options = {}) {
      fake = await startFakeProvider(options);
      return fake;
    },
    async renew() {
      await teardown();
      scratch = await llmScratch();
    },
  };
}
