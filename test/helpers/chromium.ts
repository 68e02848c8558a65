/**
 * Headless Chromium for tests that look at a page as a person would. Debian's `chromium` is
 * installed with apt-get when missing (as .ci/run does), and every run gets a fresh profile
 * and no background network.
 */
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function which(command: string): Promise<boolean> {
  const found = await execa('sh', ['-c', `command -v ${command}`], { reject: false });
  return found.exitCode === 0;
}

/** Installs Debian's chromium if it is not there (root, as on CI); about 20 s. */
export async function ensureChromium(): Promise<string> {
  if (await which('chromium')) return 'chromium';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await execa('apt-get', ['update', '-qq'], { env });
  await execa('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { env });
  if (!(await which('chromium'))) throw new Error('chromium is still missing after apt-get install');
  return 'chromium';
}

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Runs chromium on a URL with extra flags; returns stdout (e.g. --dump-dom). */
export async function runChromium(url: string, extra: readonly string[]): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), 'compactor-chromium-'));
  try {
    const result = await execa('chromium', [...FLAGS, `--user-data-dir=${profile}`, ...extra, url], { stdin: 'ignore', timeout: 120_000 });
    return String(result.stdout);
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
