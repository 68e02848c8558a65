/**
 * Start-up loads only what the command line needs (README "Performance"): `--version` loads
 * not even the bundle; a command loads its own module, not the others'; text output loads no
 * NDJSON writer and no progress bar in a pipe; zod (every schema's validator) is part of the bundle
 * and its code cache, never read from node_modules. Checked by what a child process has loaded (the
 * CommonJS cache and the ES modules a loader hook saw), never by timing. The command line is one
 * CommonJS bundle (scripts/build-cli.js) in which esbuild wraps each module in a function run
 * on its first import: a module of the bundle counts as loaded when V8's coverage of the child
 * saw that function run.
 */
import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN, FIXTURES, ROOT } from '../helpers/cli.js';

const CLI_BUNDLE = 'dist/cli-bundle.cjs';

/** esbuild's account of the CLI bundle (scripts/build-cli.js): which modules each output file holds. */
function bundleInputs(): Map<string, string[]> {
  const meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'cli-meta.json'), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  return new Map(Object.entries(meta.outputs).map(([output, { inputs }]) => [output, Object.keys(inputs)]));
}

/** The bundle's modules that esbuild wrapped in a function named by the module's path (`"dist/x.js"() {…}`). */
function wrappedModules(): Set<string> {
  const source = readFileSync(join(ROOT, CLI_BUNDLE), 'utf8');
  return new Set([...source.matchAll(/^ {2}"((?:dist|node_modules)\/[^"]+)"\(/gm)].map((match) => match[1]!));
}

/** The names of the bundle's functions that ran, from the V8 coverage Node wrote into `folder`. */
function bundleFunctionsRun(folder: string): Set<string> {
  const url = pathToFileURL(join(ROOT, CLI_BUNDLE)).href;
  const run = new Set<string>();
  for (const file of readdirSync(folder)) {
    const coverage = JSON.parse(readFileSync(join(folder, file), 'utf8')) as { result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[] };
    for (const script of coverage.result.filter((entry) => entry.url === url)) {
      for (const fn of script.functions) if (fn.ranges[0]!.count > 0) run.add(fn.functionName);
    }
  }
  return run;
}

/**
 * Runs bin/compactor.js in a child and returns the files it loaded, relative to the repo: each
 * file (bin/, dist/, node_modules/), and after the bundle the modules in it whose code ran.
 */
async function loadedBy(argv: readonly string[]): Promise<string[]> {
  // The hook runs on the loaders' thread: it reports each ES module on stderr as it loads; the
  // CommonJS cache is reported at exit.
  const hook = `data:text/javascript,${encodeURIComponent(
    "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('MODULE ' + url + '\\n'); return next(url, context); }",
  )}`;
  const setup = `
    import { register, createRequire } from 'node:module';
    register(${JSON.stringify(hook)});
    process.on('exit', () => { for (const path of Object.keys(createRequire(${JSON.stringify(BIN)}).cache)) process.stderr.write('MODULE file://' + path + '\\n'); });
  `;
  const coverage = mkdtempSync(join(tmpdir(), 'startup-coverage-'));
  try {
    const result = await execa('node', ['--import', `data:text/javascript,${encodeURIComponent(setup)}`, BIN, ...argv], {
      cwd: ROOT,
      env: { CI: 'true', NO_COLOR: '1', NODE_V8_COVERAGE: coverage },
      reject: false,
    });
    const urls = String(result.stderr)
      .split('\n')
      .filter((line) => line.startsWith('MODULE '))
      .map((line) => line.slice('MODULE '.length));
    const root = pathToFileURL(ROOT).href + '/';
    const inputs = bundleInputs();
    const wrapped = wrappedModules();
    const run = bundleFunctionsRun(coverage);
    return urls.map((url) => url.replace(root, '')).flatMap((file) => {
      // A file of tsc's own output loaded directly means the command line is not the bundle.
      if (file.startsWith('dist/') && !inputs.has(file) && file !== 'dist/cli-import.cjs') throw new Error(`${file} is not part of the CLI bundle`);
      const modules = inputs.get(file) ?? [];
      return [file, ...(file === CLI_BUNDLE ? modules.filter((module) => !wrapped.has(module) || run.has(module)) : modules)];
    });
  } finally {
    rmSync(coverage, { recursive: true, force: true });
  }
}

const matching = (files: readonly string[], pattern: RegExp) => files.filter((file) => pattern.test(file));

describe('start-up loads what the command needs', () => {
  it('--version: not the bundle, so no command module and no yargs', async () => {
    const files = await loadedBy(['--version']);
    expect(files).toContain('bin/compactor.js');
    expect(files).not.toContain(CLI_BUNDLE);
    expect(matching(files, /dist\/commands\/(estimate|inspect|compact|replay|context|audit)\.js$/)).toEqual([]);
    expect(matching(files, /node_modules\/(yargs|zod|cli-progress|ndjson)\//)).toEqual([]);
  }, 60_000);

  it('estimate in text: its own command, no other command, no NDJSON writer, no progress bar, no sidecar schema, no glob matcher', async () => {
    const files = await loadedBy(['estimate', join(FIXTURES, 'formats', 'codex.jsonl')]);
    expect(files).toContain('dist/commands/estimate.js');
    expect(files.some((file) => file.includes('node_modules/yargs/'))).toBe(true);
    expect(matching(files, /dist\/commands\/(inspect|compact|replay|context|audit)\.js$/)).toEqual([]);
    expect(matching(files, /node_modules\/(cli-progress|ndjson|write-file-atomic|openai|picomatch)\//)).toEqual([]);
    expect(matching(files, /dist\/sidecar\/schema\.js$/)).toEqual([]);
  }, 60_000);

  it('estimate of valid sessions, text and --json: no stream stack for the JSON lines, zod from the bundle', async () => {
    for (const argv of [
      ['estimate', join(FIXTURES, 'formats', 'claude-code.jsonl')],
      ['estimate', '--json', join(FIXTURES, 'formats', 'claude-code.jsonl')],
      ['estimate', join(FIXTURES, 'bug.jsonl'), join(FIXTURES, 'formats', 'codex.jsonl'), join(FIXTURES, 'formats', 'pi-branch.jsonl'), join(FIXTURES, 'formats', 'openai-chat.jsonl')],
    ]) {
      const files = await loadedBy(argv);
      expect(files, argv.join(' ')).toContain('dist/commands/estimate.js');
      expect(matching(files, /node_modules\/(ndjson|through2|readable-stream)\//), argv.join(' ')).toEqual([]);
    }
    // zod is bundled (scripts/build-cli.js IN_BUNDLE): its modules are inputs of the bundle, and none is a file of its own.
    expect(matching(bundleInputs().get(CLI_BUNDLE) ?? [], /node_modules\/zod\//).length).toBeGreaterThan(0);
    expect([...bundleInputs().keys()].filter((output) => output.includes('zod'))).toEqual([]);
  }, 60_000);

  it('the command line starts its worker threads from the bundled worker, not tsc\'s', () => {
    const inputs = bundleInputs();
    expect(inputs.get('dist/worker-bundle.js')).toContain('dist/worker.js');
    const pools = [...inputs].filter(([, modules]) => modules.includes('dist/workers/pool.js')).map(([output]) => output);
    expect(pools).toContain(CLI_BUNDLE);
    const source = readFileSync(join(ROOT, CLI_BUNDLE), 'utf8');
    expect(source).toContain('new URL("./worker-bundle.js", bundleUrl)');
    expect(source).not.toContain('new URL("../worker.js"');
  });
});
