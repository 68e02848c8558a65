'use strict';
/**
 * Runs a CommonJS module (the command line's bundle, scripts/build-cli.js), whose file holds its
 * body already wrapped as Node wraps one (`(function (exports, require, module, __filename,
 * __dirname) {…})`: no copy of the text is made here), compiled with a V8 code cache.
 * Node 20 parses and compiles the whole bundle at every start otherwise (ES modules, its
 * earlier form, cannot be given a cache at all before Node 22's module.enableCompileCache).
 *
 * The caches are made by the build, never by a user's run: a run writes nothing outside the
 * tree it was given, not even a cache. They sit beside the bundle (dist/code-cache/<command>.bin),
 * one per command, each made by a run of that command at its exit, so it holds the functions
 * that run compiled. A cache is only ever a shortcut: one that is missing, unreadable, made by
 * another Node or for another build of the bundle, damaged, or that V8 rejects is ignored and
 * the bundle compiled from its text.
 */
const { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

/** Set by scripts/build-cli.js alone, for the runs that make the caches. */
const MAKING = process.env.COMPACTOR_MAKE_CODE_CACHE === '1';

/**
 * What a cache was made for: the Node that made it and the build of the bundle, whose last line
 * the build writes as `// build <hash of the rest>`. V8 checks its own version and flags, and the
 * source's length, and rejects a cache that fails them; a bundle of the same length is another
 * build all the same.
 */
function cacheKey(source) {
  const build = /\/\/ build ([0-9a-f]+)\n?$/.exec(source.slice(-200));
  return build === null ? null : JSON.stringify([process.version, process.arch, build[1]]);
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

/** Writes a cache through a temporary name and a rename, so that no run reads half of one. */
function writeCache(path, key, data) {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temporary, Buffer.concat([header(key, data), data]));
    renameSync(temporary, path);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Nothing was written.
    }
    throw error;
  }
}

/**
 * Runs `file` as a CommonJS module and returns its exports; `label` names the cache (one per
 * command: what a run compiles depends on the command). In the build's cache-making runs, the
 * cache is written at exit if `keep(exports)` says so (not for a mistyped command, say).
 */
function requireCached(file, label, keep = () => true) {
  const source = readFileSync(file, 'utf8');
  const key = cacheKey(source);
  const cachePath = join(dirname(file), 'code-cache', `${label}.bin`);
  const cachedData = key === null || MAKING ? undefined : readCache(cachePath, key);
  const script = new Script(source, { filename: file, cachedData });
  lastCache = cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
  if (MAKING && key !== null) {
    // At exit the script holds every function this run compiled, not only its top level.
    process.once('exit', () => {
      if (keep(module.exports)) writeCache(cachePath, key, script.createCachedData());
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

/** What the last requireCached did with its cache: 'used', 'rejected' (by V8) or 'none' (none fit). */
let lastCache = 'none';

module.exports = { requireCached, lastCache: () => lastCache };
