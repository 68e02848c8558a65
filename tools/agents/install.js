/**
 * Installs the real agents and ccusage on demand, outside the repository, and says where their
 * binaries are. `npm ci` from this folder's lock file runs once per lock (the cache folder is
 * named after the lock's hash, so a new lock installs anew) into a temporary folder that is
 * renamed into place only when complete: an interrupted install never leaves a half-installed
 * cache. A lock file serialises processes that ask at the same time (two test files, say).
 * A failed install throws an error saying what failed; nothing here skips.
 *
 *   COMPACTOR_TOOLS_CACHE   the cache folder (default ${XDG_CACHE_HOME:-~/.cache}/session-compactor)
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const READY = 'installed.json';
const LOCK_WAIT_MS = 15 * 60_000;

/** The cache folder every tool install lives under. */
export function toolsCacheRoot(env = process.env) {
  if (env.COMPACTOR_TOOLS_CACHE) return env.COMPACTOR_TOOLS_CACHE;
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(base, 'session-compactor');
}

/** The folder the current lock file installs into: named after the hash of package.json and the lock. */
export function installDir(env = process.env) {
  const hash = createHash('sha256');
  for (const name of ['package.json', 'package-lock.json']) hash.update(readFileSync(join(HERE, name)));
  return join(toolsCacheRoot(env), `agents-${hash.digest('hex').slice(0, 16)}`);
}

/** The pinned packages, as package.json names them. */
function pinned() {
  return JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8')).dependencies;
}

/** Binaries inside an install folder; the native ones come from the platform package npm chose. */
function binaries(dir) {
  const modules = join(dir, 'node_modules');
  const platform = `${process.platform}-${process.arch}`;
  const firstExisting = (candidates, what) => {
    const found = candidates.find((path) => existsSync(path));
    if (!found) throw new Error(`agent tools in ${dir}: no ${what} for ${platform} (looked for ${candidates.join(', ')})`);
    return found;
  };
  return {
    // The wrapper package's bin/claude.exe is a stub until its install script links the
    // platform binary; we install without scripts and run the platform binary itself.
    claude: firstExisting(
      [join(modules, '@anthropic-ai', `claude-code-${platform}`, 'claude'), join(modules, '@anthropic-ai', `claude-code-${platform}-musl`, 'claude')],
      'Claude Code binary',
    ),
    // Codex's launcher finds its native binary in the optional platform package and forwards signals.
    codex: firstExisting([join(modules, '@openai', 'codex', 'bin', 'codex.js')], 'Codex launcher'),
    // An older Codex under an alias (its platform package nests under it): the last release that
    // writes a call's usage only after the call's tool results, and forks by copying the parent.
    codex0142: firstExisting([join(modules, 'codex-0142', 'bin', 'codex.js')], 'Codex 0.142 launcher'),
    pi: firstExisting([join(modules, '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js')], 'pi CLI'),
    ccusage: firstExisting([join(modules, '@ccusage', `ccusage-${platform}`, 'bin', 'ccusage')], 'native ccusage binary'),
    // The last JavaScript release of ccusage, for the benchmark's second ccusage row.
    ccusageJs: firstExisting([join(modules, 'ccusage-js', 'dist', 'index.js')], 'ccusage JavaScript CLI'),
  };
}

/** The package.json name of each binary's package. */
const PACKAGE_OF = {
  claude: '@anthropic-ai/claude-code',
  codex: '@openai/codex',
  codex0142: 'codex-0142',
  pi: '@mariozechner/pi-coding-agent',
  ccusage: 'ccusage',
  ccusageJs: 'ccusage-js',
};

/** The package and version a binary comes from, as `name@version` (an alias gives the package it stands for). */
export function packageOf(packages, bin) {
  const name = PACKAGE_OF[bin];
  const spec = name === undefined ? undefined : packages[name];
  if (spec === undefined) throw new Error(`agent tools: no pinned package for the binary ${bin}`);
  return spec.startsWith('npm:') ? spec.slice('npm:'.length) : `${name}@${spec}`;
}

/** Every package npm installed has the version and integrity the lock file names. */
function assertLocked(staging) {
  const locked = JSON.parse(readFileSync(join(HERE, 'package-lock.json'), 'utf8')).packages;
  const installed = JSON.parse(readFileSync(join(staging, 'node_modules', '.package-lock.json'), 'utf8')).packages;
  for (const [path, entry] of Object.entries(installed)) {
    const want = locked[path];
    if (!want || want.version !== entry.version || (want.integrity && entry.integrity && want.integrity !== entry.integrity)) {
      throw new Error(`agent tools: npm installed ${path}@${entry.version}, which the lock file does not name (${want ? want.version : 'absent'})`);
    }
  }
}

function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, output }));
  });
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};

/** Takes `${dir}.lock` (O_EXCL), waiting while a live process holds it; a dead holder's lock is taken over. */
async function withLock(dir, work) {
  const lock = `${dir}.lock`;
  mkdirSync(dirname(dir), { recursive: true });
  const started = Date.now();
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lock, 'utf8').trim() || 0);
      if (holder && !alive(holder)) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() - started > LOCK_WAIT_MS) throw new Error(`agent tools: ${lock} is held by process ${holder} for more than ${LOCK_WAIT_MS / 60_000} minutes`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

const readyInfo = (dir) => {
  try {
    return JSON.parse(readFileSync(join(dir, READY), 'utf8'));
  } catch {
    return null;
  }
};

async function install(dir, log) {
  mkdirSync(dirname(dir), { recursive: true });
  // Under the lock nobody else installs: a partial folder is what an interrupted install left.
  // Removing it is best effort (an orphaned npm may still be writing there); ours is a new one.
  for (const name of readdirSync(dirname(dir))) {
    if (!name.startsWith(`${basename(dir)}.partial-`)) continue;
    try {
      rmSync(join(dirname(dir), name), { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // left for the next install
    }
  }
  const staging = mkdtempSync(`${dir}.partial-`);
  try {
    chmodSync(staging, 0o755);
    copyFileSync(join(HERE, 'package.json'), join(staging, 'package.json'));
    copyFileSync(join(HERE, 'package-lock.json'), join(staging, 'package-lock.json'));
    log(`installing ${Object.entries(pinned()).map(([name, version]) => `${name}@${version}`).join(', ')} into ${dir} (npm, about a minute)`);
    // `npm install` from the lock rather than `npm ci`: ccusage 20.0.24 names platform packages
    // the registry never published (only linux-x64 exists), which `npm ci` refuses as a lock
    // out of sync. The lock still decides every version; the check below proves it did.
    // No install scripts: the binaries come from the platform packages (see binaries()).
    const npm = await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: staging, env: process.env });
    if (npm.code !== 0) {
      const reason = npm.output.split('\n').filter((line) => /ERR|error/i.test(line)).slice(0, 6).join('\n') || npm.output.slice(-800);
      throw new Error(`agent tools: npm install failed (exit ${npm.code ?? npm.signal}) in ${staging}:\n${reason}`);
    }
    assertLocked(staging);
    const bins = binaries(staging);
    for (const path of Object.values(bins)) chmodSync(path, 0o755); // ccusage's native binary ships without the execute bit
    const versions = {};
    const scratchHome = mkdtempSync(join(tmpdir(), 'compactor-tools-home-'));
    try {
      for (const [name, path] of Object.entries(bins)) {
        const check = await run(path, ['--version'], { cwd: scratchHome, env: { PATH: process.env.PATH, HOME: scratchHome } });
        if (check.code !== 0) throw new Error(`agent tools: ${name} --version failed (exit ${check.code ?? check.signal}): ${check.output.slice(0, 400)}`);
        versions[name] = check.output.trim().split('\n').pop();
      }
    } finally {
      rmSync(scratchHome, { recursive: true, force: true });
    }
    writeFileSync(join(staging, READY), `${JSON.stringify({ packages: pinned(), versions }, null, 2)}\n`);
    rmSync(dir, { recursive: true, force: true }); // a folder without the ready file is a leftover
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The paths of the `claude`, `codex` (and `codex0142`), `pi` and native `ccusage` binaries (and
 * `ccusageJs`, the JavaScript ccusage 18 CLI), installing them first when this lock file has not been installed
 * yet. Also returns `dir`, the pinned `packages` ({name: version}) and each binary's
 * `--version` output (`versions`).
 */
export async function agentTools({ log = (message) => process.stderr.write(`agent tools: ${message}\n`), env = process.env } = {}) {
  const dir = installDir(env);
  if (!readyInfo(dir)) await withLock(dir, async () => (readyInfo(dir) ? undefined : install(dir, log)));
  const info = readyInfo(dir);
  if (!info) throw new Error(`agent tools: ${dir} has no ${READY} after installing`);
  return { dir, packages: info.packages, versions: info.versions, ...binaries(dir) };
}
