'use strict';
/**
 * Runs a CommonJS module (the command line's bundle, scripts/build-cli.js), whose file holds its
 * body already wrapped as Node wraps one (`(function (exports, require, module, __filename,
 * __dirname) {…})`: no copy of the text is made here), compiled with a V8 code
 * cache kept outside the user's tree: ${XDG_CACHE_HOME:-~/.cache}/session-compactor/code-cache/.
 * Node 20 parses and compiles the whole bundle at every start otherwise (ES modules, its
 * earlier form, cannot be given a cache at all before Node 22's module.enableCompileCache).
 * Each command has a cache of its own, made by its first run once that run is over, so it holds
 * the functions that run compiled. The cache is only ever a shortcut: one that is missing,
 * unreadable, made by another Node or for another build of the file, or that V8 rejects, is
 * ignored (and rewritten); one that cannot be written is not written. A new cache is written to
 * a temporary name and renamed, so a run never reads half of one.
 */
const { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { homedir } = require('node:os');
const { dirname, isAbsolute, join } = require('node:path');
const { Script } = require('node:vm');

/** The cache folder; null when there is no home to put it in. XDG says a relative XDG_CACHE_HOME is ignored. */
function cacheFolder() {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'session-compactor', 'code-cache');
  let home = '';
  try {
    home = homedir();
  } catch {
    return null;
  }
  return isAbsolute(home) ? join(home, '.cache', 'session-compactor', 'code-cache') : null;
}

/** A short name for the file's path (FNV-1a), so that each install has its own caches. */
function pathHash(path) {
  let hash = 0x811c9dc5;
  for (let index = 0; index < path.length; index++) hash = Math.imul(hash ^ path.charCodeAt(index), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

/**
 * What a cache was made for: the Node that made it and the file's path, size and modification
 * time (a build rewrites the file). V8 checks its own version and flags, and the source's
 * length, and rejects a cache that fails them.
 */
function cacheKey(file) {
  const { size, mtimeMs } = statSync(file);
  return JSON.stringify([process.version, process.arch, file, size, mtimeMs]);
}

/**
 * A checksum of the cache's bytes, written beside its key: V8 release builds do not check their
 * own, and a cache with flipped bytes crashes Node where it should be rejected. Each step is a
 * bijection of the word, so a change in any one word always changes the sum. Words are read
 * from `bytes` at a multiple of 4 (the header is padded to one).
 */
function checksum(bytes) {
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  let sum = 0x811c9dc5;
  for (let index = 0; index < words.length; index++) sum = Math.imul(sum ^ words[index], 0x01000193);
  for (let index = words.length << 2; index < bytes.length; index++) sum = Math.imul(sum ^ bytes[index], 0x01000193);
  return (sum >>> 0).toString(16);
}

/** The first line: the key and the data's checksum, padded with spaces so that the data starts at a multiple of 4. */
function header(key, data) {
  const line = Buffer.from(`${key} ${checksum(data)}`);
  return Buffer.concat([line, Buffer.alloc(3 - (line.length % 4), ' '), Buffer.from('\n')]);
}

/** The cache made for `key`, checked whole, or undefined. */
function readCache(path, key) {
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const newline = bytes.indexOf(10);
  if (newline < 0 || (bytes.byteOffset + newline + 1) % 4 !== 0) return undefined;
  const line = bytes.toString('utf8', 0, newline).trimEnd();
  const space = line.lastIndexOf(' ');
  const data = bytes.subarray(newline + 1);
  return line.slice(0, space) === key && line.slice(space + 1) === checksum(data) ? data : undefined;
}

/** `made()` gives the cache's bytes: asked for only once its folder exists (making one takes a while). */
function writeCache(path, key, made) {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const data = made();
    writeFileSync(temporary, Buffer.concat([header(key, data), data]), { mode: 0o600 });
    renameSync(temporary, path);
  } catch {
    try {
      unlinkSync(temporary);
    } catch {
      // Nothing was written.
    }
  }
}

/**
 * Runs `file` as a CommonJS module and returns its exports; `label` names the cache (one per
 * command: what a run compiles depends on the command). A new cache is written at exit only if
 * `keep(exports)` says so (not for a mistyped command, say).
 */
function requireCached(file, label, keep = () => true) {
  const source = readFileSync(file, 'utf8');
  const folder = cacheFolder();
  const key = folder === null ? '' : cacheKey(file);
  const cachePath = folder === null ? null : join(folder, `${pathHash(file)}-${label}.bin`);
  const cachedData = cachePath === null ? undefined : readCache(cachePath, key);
  const script = new Script(source, { filename: file, cachedData });
  if (cachePath !== null && (cachedData === undefined || script.cachedDataRejected)) {
    // At exit the script holds every function this run compiled, not only its top level.
    process.once('exit', () => {
      if (keep(module.exports)) writeCache(cachePath, key, () => script.createCachedData());
    });
  }
  const module = new Module(file, null);
  module.filename = file;
  module.paths = Module._nodeModulePaths(dirname(file));
  Module._cache[file] = module;
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file));
  module.loaded = true;
  return module.exports;
}

module.exports = { requireCached };
