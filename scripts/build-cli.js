#!/usr/bin/env node
/**
 * The second half of `npm run build`: bundles the command line (tsc's dist/cli.js and what it
 * imports) into dist/cli-bundle.js and a few chunks under dist/cli-chunks/, so a command loads a
 * handful of files instead of about 75 ES modules (Node 20 resolves, reads and links each one;
 * docs/performance.md "Start-up"). Each command's module stays a chunk of its own, loaded when it
 * runs. The worker thread's entry is bundled beside it (dist/worker-bundle.js, sharing the
 * chunks), and the command line's pool starts that one. tsc's output stays as it is for the
 * library (dist/index.js, package exports; its pool starts tsc's dist/worker.js). npm packages stay external (loaded from
 * node_modules as before) except yargs, which every command but `--version` loads: its CommonJS
 * build and the 16 small packages it requires become one file, dist/cli-chunks/yargs.cjs, that
 * the bundle requires where src/cli.ts requires 'yargs/yargs' (the factory, without the
 * singleton `yargs` builds; half of yargs' loading time was finding and compiling those 18
 * files). Type checking is tsc's; this only reads its JavaScript.
 *
 * Paths the code finds relative to its own file keep working because the layout keeps their
 * depth: the entry sits in dist/ as dist/cli.js does (`../package.json` is the package's), and
 * every chunk sits one folder down as dist/workers/pool.js does (`../worker.js` is tsc's worker,
 * `../worker-bundle.js` the bundled one). The build fails if the pool ends up anywhere else.
 *
 * Writes dist/cli-meta.json, esbuild's account of which source module (or package file) went
 * into which output file: test/startup-modules.test.ts reads it to tell what a command loaded.
 */
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const CHUNKS = join(DIST, 'cli-chunks');

// Chunk names carry a content hash: old ones would pile up.
rmSync(CHUNKS, { recursive: true, force: true });

/**
 * yargs reads its messages from its locales folder, found from its own file (`__dirname` +
 * `../locales`): in the bundle that is the installed yargs' folder still, so the messages are
 * the very ones it printed before.
 */
const yargsBuild = await build({
  absWorkingDir: ROOT,
  entryPoints: [createRequire(join(ROOT, 'package.json')).resolve('yargs/yargs')],
  outfile: 'dist/cli-chunks/yargs.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  define: { __dirname: 'yargsBuildDirectory' },
  metafile: true,
  banner: { js: "'use strict';\nconst yargsBuildDirectory = require('node:path').join(require('node:path').dirname(require.resolve('yargs')), 'build');" },
  logLevel: 'warning',
});

/** src/cli.ts requires yargs' CommonJS build by name: the bundle requires the one-file build instead. */
const requireBundledYargs = {
  name: 'require-bundled-yargs',
  setup(esbuild) {
    esbuild.onLoad({ filter: /[\\/]dist[\\/]cli\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const call = "require('yargs/yargs')";
      if (source.split(call).length !== 2) throw new Error(`build-cli: expected one ${call} in dist/cli.js`);
      return { contents: source.replace(call, "require('./cli-chunks/yargs.cjs')"), loader: 'js' };
    });
  },
};

const result = await build({
  absWorkingDir: ROOT,
  // The worker thread's entry is bundled with the command line, sharing its chunks: a worker
  // started from tsc's dist/worker.js compiled about 80 modules of its own before its first task.
  entryPoints: { 'cli-bundle': 'dist/cli.js', 'worker-bundle': 'dist/worker.js' },
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
  plugins: [requireBundledYargs],
  logLevel: 'warning',
});

// The pool starts its workers from `new URL('../worker.js', import.meta.url)`: right only one
// folder below dist/. Not finding it at all means the pool changed how it names the file. In the
// bundle's chunks it is pointed at the bundled worker (dist/worker-bundle.js); the library's
// pool (tsc's dist/workers/pool.js) keeps tsc's worker.
const WORKER_START = 'new URL("../worker.js", import.meta.url)';
const withWorker = Object.keys(result.metafile.outputs).filter((output) => output.endsWith('.js') && readFileSync(join(ROOT, output), 'utf8').includes(WORKER_START));
if (withWorker.length === 0) throw new Error('build-cli: no output starts the worker from ../worker.js: check workers/pool.ts against this script');
for (const output of withWorker) {
  if (dirname(output) !== 'dist/cli-chunks') throw new Error(`build-cli: the worker pool landed in ${output}, where ../worker.js is not dist/worker.js`);
  const file = join(ROOT, output);
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll(WORKER_START, 'new URL("../worker-bundle.js", import.meta.url)'));
}

const outputs = { ...result.metafile.outputs, ...yargsBuild.metafile.outputs };
writeFileSync(join(DIST, 'cli-meta.json'), `${JSON.stringify({ outputs })}\n`);
const files = readdirSync(CHUNKS).filter((name) => name.endsWith('.js')).length;
process.stdout.write(`build-cli: dist/cli-bundle.js, dist/worker-bundle.js, ${files} chunks and yargs.cjs in ${relative(ROOT, CHUNKS)}/\n`);
