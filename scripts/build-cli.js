#!/usr/bin/env node
/**
 * The second half of `npm run build`: bundles the command line (tsc's dist/cli.js and what it
 * imports) into dist/cli-bundle.js and a few chunks under dist/cli-chunks/, so a command loads a
 * handful of files instead of about 75 ES modules (Node 20 resolves, reads and links each one;
 * docs/performance.md "Start-up"). Each command's module stays a chunk of its own, loaded when it
 * runs. tsc's output stays as it is: the library (dist/index.js, package exports) and the worker
 * thread's entry (dist/worker.js) are not bundled. npm packages stay external (loaded from
 * node_modules as before). Type checking is tsc's; this only reads its JavaScript.
 *
 * Paths the code finds relative to its own file keep working because the layout keeps their
 * depth: the entry sits in dist/ as dist/cli.js does (`../package.json` is the package's), and
 * every chunk sits one folder down as dist/workers/pool.js does (`../worker.js` is tsc's worker).
 * The build fails if the worker's path ends up anywhere else.
 *
 * Writes dist/cli-meta.json, esbuild's account of which source module went into which output
 * file: test/startup-modules.test.ts reads it to tell which of our modules a command loaded.
 */
import { build } from 'esbuild';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const CHUNKS = join(DIST, 'cli-chunks');

// Chunk names carry a content hash: old ones would pile up.
rmSync(CHUNKS, { recursive: true, force: true });

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { 'cli-bundle': 'dist/cli.js' },
  outdir: 'dist',
  chunkNames: 'cli-chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});

// The pool starts its workers from `new URL('../worker.js', import.meta.url)`: right only one
// folder below dist/. Not finding it at all means the pool changed how it names the file.
const withWorker = Object.keys(result.metafile.outputs).filter((output) => output.endsWith('.js') && readFileSync(join(ROOT, output), 'utf8').includes('new URL("../worker.js", import.meta.url)'));
if (withWorker.length === 0) throw new Error('build-cli: no output starts the worker from ../worker.js: check workers/pool.ts against this script');
for (const output of withWorker) {
  if (dirname(output) !== 'dist/cli-chunks') throw new Error(`build-cli: the worker pool landed in ${output}, where ../worker.js is not dist/worker.js`);
}

writeFileSync(join(DIST, 'cli-meta.json'), `${JSON.stringify(result.metafile)}\n`);
const files = readdirSync(CHUNKS).filter((name) => name.endsWith('.js')).length;
process.stdout.write(`build-cli: dist/cli-bundle.js and ${files} chunks in ${relative(ROOT, CHUNKS)}/\n`);
