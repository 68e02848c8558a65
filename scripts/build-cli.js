#!/usr/bin/env node
/**
 * The second half of `npm run build`: bundles the command line (tsc's dist/cli.js and what it
 * imports, yargs, uuid and zod included) into one CommonJS module, dist/cli-bundle.cjs, which
 * bin/compactor.js compiles with a V8 code cache (bin/code-cache.js): a command then neither
 * resolves and links ES modules nor parses most of the code it runs (docs/performance.md
 * "Start-up"). Each command's module is still evaluated only when that command runs: esbuild
 * wraps a module reached by `import()` in a function the import calls. The worker thread's entry
 * is bundled beside it as ES modules (dist/worker-bundle.js and chunks under dist/worker-chunks/,
 * each task's command a chunk of its own), and the command line's pool starts that one. tsc's
 * output stays as it is for the library (dist/index.js, package exports; its pool starts tsc's
 * dist/worker.js). Other npm packages stay external, loaded from node_modules on first use.
 *
 * yargs reads its messages from its locales folder, found from its own file (`__dirname` +
 * `../locales`): in the bundle that is the installed yargs' folder still, so the messages are the
 * very ones it printed before. Paths the code finds from `import.meta.url` keep working because
 * the bundle sits in dist/ as dist/cli.js does (`../package.json` is the package's); the pool's
 * `../worker.js` is pointed at the bundled worker, and the build fails if it cannot find it.
 *
 * Writes dist/cli-meta.json, esbuild's account of which source module (or package file) went
 * into which output file: test/startup-modules.test.ts reads it to tell what a command loaded.
 */
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const CHUNKS = join(DIST, 'worker-chunks');

// Chunk names carry a content hash: old ones would pile up (cli-chunks/ is the former layout's).
rmSync(CHUNKS, { recursive: true, force: true });
rmSync(join(DIST, 'cli-chunks'), { recursive: true, force: true });
rmSync(join(DIST, 'cli-bundle.js'), { force: true });
rmSync(join(DIST, 'cli-bundle.js.map'), { force: true });

/** yargs' CommonJS build, the factory alone (requiring `yargs` also builds a singleton on process.argv). */
const YARGS_FACTORY = createRequire(join(ROOT, 'package.json')).resolve('yargs/yargs');

/**
 * src/cli.ts requires yargs' CommonJS build through createRequire, which esbuild does not
 * follow (in main(), after `--version`): the call becomes an import() of that file, which esbuild
 * bundles, so yargs is bundled too.
 */
const bundleYargs = {
  name: 'bundle-yargs',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^bundled-yargs-factory$/ }, () => ({ path: YARGS_FACTORY }));
    esbuild.onLoad({ filter: /[\\/]dist[\\/]cli\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const call = "require('yargs/yargs')";
      if (source.split(call).length !== 2) throw new Error(`build-cli: expected one ${call} in dist/cli.js`);
      // An import() of a module in the bundle: yargs' code runs on that call, not at start-up (`--version`).
      return { contents: source.replace(call, "(await import('bundled-yargs-factory')).default"), loader: 'js' };
    });
  },
};

/**
 * Packages our code imports stay in node_modules (most load on first use), except the one it
 * imports statically that is published only as ES modules, which Node 20 before 20.19 cannot
 * require: uuid (fork/);
 * and zod, which every reader's schema is declared with and so runs on every read: in the bundle
 * it is tree-shaken to what the schemas use (about 0.2 MB, English messages only) and compiled
 * from the code cache, which keeps `estimate` of a small session under 2x `node -e 0` (zod from
 * node_modules measured 2.4x; docs/performance.md "Start-up"). What bundled packages import is
 * bundled.
 */
const IN_BUNDLE = new Set(['uuid', 'zod']);
const externalPackages = {
  name: 'external-packages',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || args.path === 'bundled-yargs-factory' || args.importer.includes(`${join('node_modules', '')}`)) return undefined;
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
      return IN_BUNDLE.has(name) ? undefined : { path: args.path, external: true };
    });
  },
};

const cli = await build({
  absWorkingDir: ROOT,
  entryPoints: { 'cli-bundle': 'dist/cli.js' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // A CommonJS file has no import.meta: the bundle's own URL stands in (it sits where dist/cli.js does).
  define: { 'import.meta.url': 'bundleUrl', __dirname: 'yargsBuildDirectory' },
  // The file is the body of a CommonJS module already wrapped as Node wraps one: the loader
  // (bin/code-cache.js) compiles it as it is, where wrapping it there copied its 0.8 MB of text.
  banner: {
    js: [
      "(function (exports, require, module, __filename, __dirname) { 'use strict';",
      "const bundleUrl = require('node:url').pathToFileURL(__filename).href;",
      "const yargsBuildDirectory = require('node:path').join(require('node:path').dirname(require.resolve('yargs')), 'build');",
      "const importPackage = require('./cli-import.cjs');",
    ].join('\n'),
  },
  footer: { js: '})' },
  sourcemap: 'linked',
  metafile: true,
  plugins: [bundleYargs, externalPackages],
  logLevel: 'warning',
});

/**
 * The bundle is compiled as a vm.Script (bin/code-cache.js), where Node 20 cannot run `import()`
 * (it asks for --experimental-vm-modules, or a flag that prints a warning, and a script from the
 * cache loses even that): the packages it imports on first use are imported by a one-line module
 * Node loads itself, dist/cli-import.cjs, from the same folder.
 */
const CLI_BUNDLE = join(DIST, 'cli-bundle.cjs');
const dynamicImports = cli.metafile.outputs['dist/cli-bundle.cjs'].imports.filter((entry) => entry.kind === 'dynamic-import');
if (dynamicImports.some((entry) => !entry.external)) throw new Error('build-cli: the bundle imports one of its own modules with import(): esbuild should have inlined it');
const bundled = readFileSync(CLI_BUNDLE, 'utf8');
const withoutImport = bundled.replace(/\bimport\((?="[^"]+"\))/g, 'importPackage(');
const replaced = withoutImport.split('importPackage("').length - 1;
// A line comment may name import() (zod's does): only code counts.
if (replaced !== dynamicImports.length || /^(?![ \t]*\/\/).*\bimport\(/m.test(withoutImport)) throw new Error(`build-cli: ${dynamicImports.length} import() of packages in the bundle, ${replaced} replaced: check the bundle for other forms`);
writeFileSync(CLI_BUNDLE, withoutImport);
writeFileSync(join(DIST, 'cli-import.cjs'), "'use strict';\n// The command line bundle's import() (scripts/build-cli.js): a package, from dist/.\nmodule.exports = (specifier) => import(specifier);\n");

const worker = await build({
  absWorkingDir: ROOT,
  entryPoints: { 'worker-bundle': 'dist/worker.js' },
  outdir: 'dist',
  chunkNames: 'worker-chunks/[name]-[hash]',
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

/**
 * The pool starts its workers from `new URL('../worker.js', import.meta.url)`, tsc's worker one
 * folder below dist/: each output that holds the pool is pointed at the bundled worker, from
 * where that output sits. Not finding it at all means the pool changed how it names the file.
 */
const WORKER_STARTS = [
  { start: 'new URL("../worker.js", bundleUrl)', outputs: cli, folder: 'dist', bundled: 'new URL("./worker-bundle.js", bundleUrl)' },
  { start: 'new URL("../worker.js", import.meta.url)', outputs: worker, folder: 'dist/worker-chunks', bundled: 'new URL("../worker-bundle.js", import.meta.url)' },
];
for (const { start, outputs, folder, bundled } of WORKER_STARTS) {
  const withWorker = Object.keys(outputs.metafile.outputs).filter((output) => output.endsWith('js') && readFileSync(join(ROOT, output), 'utf8').includes(start));
  if (withWorker.length === 0 && outputs === cli) throw new Error('build-cli: the command line does not start the worker from ../worker.js: check workers/pool.ts against this script');
  for (const output of withWorker) {
    if (dirname(output) !== folder) throw new Error(`build-cli: the worker pool landed in ${output}, not in ${folder}`);
    const file = join(ROOT, output);
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(start, bundled));
  }
}

/**
 * The WebAssembly scanner (src/scan/scanner.ts) is loaded from `../scan/scanner.wasm`, tsc's
 * dist/scan/ seen from tsc's own output one folder below dist/: each output that holds the
 * scanner's loader is pointed at dist/scan/scanner.wasm from where that output sits.
 */
const SCANNER_PATH = '"../scan/scanner.wasm"';
let scannerLoaders = 0;
for (const outputs of [cli, worker]) {
  for (const output of Object.keys(outputs.metafile.outputs).filter((name) => /\.c?js$/.test(name))) {
    const file = join(ROOT, output);
    const text = readFileSync(file, 'utf8');
    if (!text.includes(SCANNER_PATH)) continue;
    const path = relative(dirname(file), join(DIST, 'scan', 'scanner.wasm')).split('\\').join('/');
    writeFileSync(file, text.replaceAll(SCANNER_PATH, JSON.stringify(path.startsWith('.') ? path : `./${path}`)));
    scannerLoaders++;
  }
}
if (scannerLoaders === 0) throw new Error('build-cli: no output loads the scanner from ../scan/scanner.wasm: check src/scan/scanner.ts against this script');

// The bundle's last line names its build by a hash of the rest: bin/code-cache.js uses a cache
// only with the build that made it (V8 itself checks no more than the text's length).
const finished = readFileSync(CLI_BUNDLE, 'utf8');
writeFileSync(CLI_BUNDLE, `${finished}\n// build ${createHash('sha256').update(finished).digest('hex').slice(0, 16)}\n`);

/**
 * The code caches (bin/code-cache.js), made here so that no user's run ever writes one: each
 * command run once on a bundled fixture, in a run that writes nothing else, and its cache
 * written at its exit with the functions that run compiled. `fork` writes a file and has none:
 * it compiles from the text. Without the fixtures (an installed package) no cache is made.
 */
const CACHES = join(DIST, 'code-cache');
rmSync(CACHES, { recursive: true, force: true });
const SAMPLE = join(ROOT, 'fixtures', 'formats', 'claude-code.jsonl');
const CACHE_RUNS = [
  ['estimate', SAMPLE],
  ['inspect', SAMPLE],
  ['compact', '--dry-run', '--strategy', 'truncate', SAMPLE],
  ['replay', '--strategy', 'truncate', SAMPLE],
  ['context', SAMPLE],
  ['audit', SAMPLE],
  ['--help'],
];
if (existsSync(SAMPLE)) {
  const home = mkdtempSync(join(tmpdir(), 'build-cli-'));
  try {
    for (const args of CACHE_RUNS) {
      const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'compactor.js'), ...args], {
        cwd: home,
        // No user's settings: an empty home and config folder.
        env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, CI: 'true', NO_COLOR: '1', COMPACTOR_MAKE_CODE_CACHE: '1' },
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(`build-cli: making the code cache, compactor ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const outputs = { ...cli.metafile.outputs, ...worker.metafile.outputs };
writeFileSync(join(DIST, 'cli-meta.json'), `${JSON.stringify({ outputs })}\n`);
const files = readdirSync(CHUNKS).filter((name) => name.endsWith('.js')).length;
const caches = existsSync(CACHES) ? readdirSync(CACHES).length : 0;
process.stdout.write(`build-cli: dist/cli-bundle.cjs, dist/worker-bundle.js, ${files} chunks in ${relative(ROOT, CHUNKS)}/ and ${caches} code caches\n`);
