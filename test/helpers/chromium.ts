/**
 * Headless Chromium for tests that look at a page as a person would. Debian's `chromium` is
 * installed with apt-get when missing (as .ci/run does), and every run gets a fresh profile
 * and no background network.
 */
import { execa } from 'execa';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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

/**
 * What a script measures on a page as Chromium lays it out: a copy of the page with `script`
 * added at the end of its body (the page itself has none), whose result (any JSON value) is
 * read back from the DOM. The script runs in the page; `measure(…)` is its body, returning it.
 */
export async function measurePage<T>(page: string, body: string, extra: readonly string[] = ['--window-size=1000,1400']): Promise<T> {
  const html = await readFile(page, 'utf8');
  const dir = await mkdtemp(join(tmpdir(), 'compactor-measure-'));
  try {
    const copy = join(dir, 'measured.html');
    const script = `<script>(() => { let out; try { out = { ok: (() => { ${body} })() }; } catch (error) { out = { error: String(error && error.stack || error) }; } const pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre); })();</script>`;
    await writeFile(copy, html.replace('</body>', `${script}\n</body>`));
    const dom = await runChromium(pathToFileURL(copy).href, [...extra, '--virtual-time-budget=5000', '--dump-dom']);
    const match = /<pre id="measured">([^<]*)<\/pre>/.exec(dom);
    if (!match) throw new Error('the page did not run the measuring script');
    const text = match[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    const out = JSON.parse(text) as { ok?: T; error?: string };
    if (out.error !== undefined) throw new Error(`the measuring script failed: ${out.error}`);
    return out.ok as T;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
