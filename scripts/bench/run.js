#!/usr/bin/env node
/**
 * `npm run bench`: generates the synthetic corpora (corpus.js) outside the repository, then
 * times compactor against a bare parse loop over the same files, in one run, and prints a
 * Markdown table (README "Performance"). Each row is a separate process: wall time is the
 * median of --runs runs, peak RSS the largest of them (GNU time's %M, which counts worker
 * threads, as they share the process). This is not a test: nothing here passes or fails.
 *
 *   node scripts/bench/run.js [--sizes 200M,1G|none] [--runs 3] [--small 10000|none] [--single 1G|none]
 *                             [--tokenizer-size 50M] [--kinds claude,canonical] [--no-ccusage]
 *                             [--startup-runs 21] [--no-llm] [--cache DIR] [--out results.json]
 *                             [--write-doc docs/performance.md]
 *
 * Without --cache, corpora go to a fresh temporary directory that is removed at the end; with
 * it (or COMPACTOR_BENCH_CACHE) they are kept and reused. --write-doc puts the table, the command
 * line that made it and the machine's line between the `<!-- bench:start -->` and
 * `<!-- bench:end -->` markers of that Markdown file (written to a temporary file, then renamed),
 * so the published table is the run's own output, not a copy by hand. ccusage (both releases) comes from
 * tools/agents/install.js, which installs it once into the tools cache outside the project.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentTools } from '../../tools/agents/install.js';
import { cachedCorpus, generateCorpus, generateSmallSessions, listSessions } from './corpus.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'bin', 'compactor.js');
const HERE = dirname(fileURLToPath(import.meta.url));

// ---- flags -------------------------------------------------------------------------------

function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)([KMG]?)B?$/i.exec(text.trim());
  if (!match) throw new Error(`not a size: ${text} (e.g. 20M, 1G)`);
  return Math.round(Number(match[1]) * { '': 1, K: 1e3, M: 1e6, G: 1e9 }[match[2].toUpperCase()]);
}

function parseFlags(argv) {
  const flags = {
    sizes: '200M,1G',
    runs: '3',
    small: '10000',
    single: '1G',
    'tokenizer-size': '50M',
    'startup-runs': '21',
    kinds: 'claude,canonical',
    ccusage: true,
    llm: true,
    cache: process.env['COMPACTOR_BENCH_CACHE'],
    out: undefined,
    'write-doc': undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--no-ccusage') flags.ccusage = false;
    else if (arg === '--no-llm') flags.llm = false;
    else if (arg.startsWith('--') && argv[i + 1] !== undefined) flags[arg.slice(2)] = argv[++i];
    else throw new Error(`unknown argument ${arg} (see the header of scripts/bench/run.js)`);
  }
  return {
    sizes: flags.sizes === 'none' ? [] : flags.sizes.split(',').filter(Boolean).map(parseSize),
    runs: Math.max(1, Number(flags.runs)),
    small: flags.small === 'none' ? 0 : Number(flags.small),
    single: flags.single === 'none' ? 0 : parseSize(flags.single),
    tokenizerSize: flags['tokenizer-size'] === 'none' ? 0 : parseSize(flags['tokenizer-size']),
    startupRuns: Number(flags['startup-runs']),
    kinds: flags.kinds.split(',').filter(Boolean),
    ccusage: flags.ccusage,
    llm: flags.llm,
    cache: flags.cache,
    out: flags.out,
    writeDoc: flags['write-doc'],
  };
}

const label = (bytes) => (bytes >= 1e9 ? `${+(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`);

// ---- measuring ---------------------------------------------------------------------------

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * Runs a command `runs` times under GNU time. Returns {wall (median s), rss (max MB), stdout of
 * the last run} or {error} with the first line the command printed on stderr.
 */
function measure(command, args, { runs, env = {}, before, scratch }) {
  const walls = [];
  let rss = 0;
  let stdout = '';
  const timing = join(scratch, 'time.txt');
  for (let run = 0; run < runs; run++) {
    before?.();
    const started = process.hrtime.bigint();
    const result = spawnSync('/usr/bin/time', ['-f', '%M', '-o', timing, command, ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    });
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    if (result.status !== 0) {
      const failed = result.stdout.split('\n').find((line) => line.includes('"status":"failed"'));
      const first = failed ? JSON.parse(failed).error : (result.stderr || `exit ${result.status}`).split('\n').find((line) => line.trim() && !line.startsWith('Command exited')) ?? '';
      return { error: `failed: ${first.replace(/^compactor: /, '').slice(0, 100)}` };
    }
    walls.push(wall);
    rss = Math.max(rss, Number(readFileSync(timing, 'utf8').trim().split('\n').pop()) / 1024);
    stdout = result.stdout;
  }
  return { wall: median(walls), rss, stdout };
}

const compactor = (args) => [process.execPath, [BIN, ...args]];

/**
 * NDJSON records on stdout, and how many of them failed. A summary record (inspect's `rollup`
 * line across sessions) is no session: not counted.
 */
function records(stdout) {
  const lines = stdout.split('\n').filter((line) => line.trim() !== '');
  let count = 0;
  let failed = 0;
  for (const line of lines) {
    const record = JSON.parse(line);
    if (record !== null && typeof record === 'object' && 'rollup' in record) continue;
    count++;
    if (record.status === 'failed') failed++;
  }
  return { count, failed };
}

// ---- ccusage -----------------------------------------------------------------------------

/**
 * Both ccusage releases, from the agent tools install (tools/agents/install.js, a cache outside
 * the project shared with the agent tests); how to run each, or why not.
 */
async function ccusageTools() {
  try {
    const tools = await agentTools({ log: (message) => log(message) });
    return {
      native: [tools.ccusage, []],
      js: [process.execPath, [tools.ccusageJs]],
      nativeVersion: tools.packages.ccusage,
      jsVersion: tools.packages['ccusage-js'].replace(/^npm:ccusage@/, ''),
    };
  } catch (error) {
    return { error: String(error.message ?? error).split('\n')[0] };
  }
}

// ---- the table ---------------------------------------------------------------------------

const rows = [];

function addRow(corpus, name, result, base, extra = '') {
  if (result.error) {
    rows.push({ corpus, name, wall: null, ratio: null, rss: null, note: result.error });
    return;
  }
  const ratio = base?.wall ? result.wall / base.wall : null;
  rows.push({ corpus, name, wall: result.wall, ratio, rss: result.rss, note: extra });
}

function tableText(machine) {
  const lines = [
    '| corpus | row | wall s | × yardstick | peak RSS MB | note |',
    '|---|---|---:|---:|---:|---|',
    ...rows.map((row) =>
      `| ${row.corpus} | ${row.name} | ${row.wall === null ? 'n/a' : row.wall.toFixed(2)} | ${row.ratio === null ? '' : `${row.ratio.toFixed(2)}×`} | ${row.rss === null ? '' : Math.round(row.rss)} | ${row.note} |`,
    ),
  ];
  return `${machine}\n\n${lines.join('\n')}\n`;
}

const DOC_START = '<!-- bench:start -->';
const DOC_END = '<!-- bench:end -->';

/** Replaces what lies between the doc's bench markers with this run's table (temp file + rename). */
function writeDoc(path, table) {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(DOC_START);
  const end = text.indexOf(DOC_END);
  if (start < 0 || end < start) throw new Error(`${path}: no ${DOC_START} … ${DOC_END} block to write the table into`);
  // Where the corpora and the JSON went is this machine's business, not the figures'.
  const local = new Set(['--write-doc', '--cache', '--out']);
  const command = `npm run bench -- ${process.argv.slice(2).filter((arg, i, all) => !local.has(arg) && !local.has(all[i - 1])).join(' ')}`.trim();
  const block = `${DOC_START}\nFrom \`${command}\` on ${new Date().toISOString().slice(0, 10)}.\n${table}`;
  const temporary = `${path}.bench-${process.pid}`;
  writeFileSync(temporary, text.slice(0, start) + block + text.slice(end));
  renameSync(temporary, path);
}

// ---- main --------------------------------------------------------------------------------

const flags = parseFlags(process.argv.slice(2));
const keep = Boolean(flags.cache);
const work = flags.cache ? resolve(flags.cache) : mkdtempSync(join(tmpdir(), 'compactor-bench-'));
mkdirSync(work, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), 'compactor-bench-scratch-'));
const loadBefore = loadavg()[0];
const log = (message) => process.stderr.write(`bench: ${message}\n`);

function fileList(dir) {
  const { files, bytes } = listSessions(dir);
  const path = join(scratch, `list-${rows.length}-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(path, `${files.join('\n')}\n`);
  return { files, bytes, path };
}

/** Is the format of this corpus readable by this build? (The Claude Code reader may not be merged yet.) */
function readable(file) {
  const result = spawnSync(process.execPath, [BIN, 'estimate', file], { encoding: 'utf8' });
  return !/unknown session format/.test(result.stderr);
}

function commandRows(corpus, dir, list, base, runs) {
  const notReadable = !readable(list.files[0]);
  const sessions = list.files.length;
  const commands = [
    ['estimate --json', ['estimate', '--json', dir]],
    ['inspect --json', ['inspect', '--json', dir]],
    ['replay --json (truncate)', ['replay', '--json', '--strategy', 'truncate', dir]],
    ['compact --dry-run --json (truncate)', ['compact', '--json', '--strategy', 'truncate', '--dry-run', dir]],
  ];
  for (const [name, args] of commands) {
    if (notReadable) {
      addRow(corpus, name, { error: 'n/a (format not readable by this build)' });
      continue;
    }
    log(`${corpus}: ${name}`);
    const result = measure(...compactor(args), { runs, scratch });
    const out = result.error ? null : records(result.stdout);
    addRow(corpus, name, result, base, out ? `${out.count} sessions${out.failed ? `, ${out.failed} failed` : ''}` : '');
  }
  return sessions;
}

const results = { machine: null, rows };
try {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const machine =
    `Machine: ${cpu}, ${availableParallelism()} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
    `load average ${loadBefore.toFixed(2)} at the start.`;
  results.machine = machine;
  const tools = flags.ccusage ? await ccusageTools() : { error: 'skipped (--no-ccusage)' };
  if (tools.error) log(`ccusage: ${tools.error}`);

  // Start-up: a run that does almost nothing, against Node starting and doing nothing.
  if (flags.startupRuns > 0) {
    const corpus = 'start-up';
    const small = join(ROOT, 'fixtures', 'formats', 'claude-code.jsonl');
    log(`${corpus}: node -e 0, --version, estimate of a 19-line session (${flags.startupRuns} runs each, in turn)`);
    const commands = [
      [process.execPath, ['-e', '0']],
      compactor(['--version']),
      compactor(['estimate', small]),
      compactor(['estimate', '--json', small]),
    ];
    // In turn (A B C D A B C D …), so a change in the machine's load falls on all of them alike.
    const walls = commands.map(() => []);
    const rss = commands.map(() => 0);
    for (let run = 0; run < flags.startupRuns; run++) {
      commands.forEach(([command, args], index) => {
        const result = measure(command, args, { runs: 1, scratch });
        if (result.error) throw new Error(`start-up: ${result.error}`);
        walls[index].push(result.wall);
        rss[index] = Math.max(rss[index], result.rss);
      });
    }
    const base = { wall: median(walls[0]), rss: rss[0] };
    addRow(corpus, 'node -e 0', base, null, `the yardstick; median of ${flags.startupRuns}`);
    addRow(corpus, 'compactor --version', { wall: median(walls[1]), rss: rss[1] }, base, 'target ≤ 1.5×');
    addRow(corpus, 'compactor estimate (19 lines, text)', { wall: median(walls[2]), rss: rss[2] }, base, 'target ≤ 2×');
    addRow(corpus, 'compactor estimate --json (19 lines)', { wall: median(walls[3]), rss: rss[3] }, base, 'target ≤ 2×');
  }

  for (const size of flags.sizes) {
    for (const kind of flags.kinds) {
      const dir = join(work, `${kind}-${size}`);
      log(`corpus ${kind} ${label(size)} in ${dir}`);
      await cachedCorpus(dir, `${kind} ${size} seed 1`, (target) => generateCorpus(target, kind, size));
      const list = fileList(dir);
      const corpus = `${kind} ${label(list.bytes)}, ${list.files.length} files`;
      log(`${corpus}: bare loop`);
      const base = measure(process.execPath, [join(HERE, 'bare-loop.js'), list.path], { runs: flags.runs, scratch });
      addRow(corpus, 'bare loop: read, indexOf, JSON.parse (1 core)', base, null, 'the yardstick');
      commandRows(corpus, dir, list, base, flags.runs);
      addRow(corpus, 'estimate --json --jobs 1', readable(list.files[0]) ? measure(...compactor(['estimate', '--json', '--jobs', '1', dir]), { runs: flags.runs, scratch }) : { error: 'n/a (format not readable by this build)' }, base, 'one core');
      if (kind === 'claude') {
        for (const [name, tool] of [[`ccusage session --json --offline (native ${tools.nativeVersion ?? ''})`, tools.native], [`ccusage session --json --offline (JS ${tools.jsVersion ?? ''})`, tools.js]]) {
          if (!tool) {
            addRow(corpus, name, { error: tools.error ?? 'n/a (not installable here)' });
            continue;
          }
          log(`${corpus}: ${name}`);
          const result = measure(tool[0], [...tool[1], 'session', '--json', '--offline'], { runs: flags.runs, scratch, env: { CLAUDE_CONFIG_DIR: dir } });
          addRow(corpus, name, result, base);
          // Our reading commands against the native binary, the strongest yardstick on this corpus.
          if (name.includes('native') && result.wall) {
            for (const row of rows) {
              if (row.corpus === corpus && /^(estimate|inspect) --json$/.test(row.name) && row.wall) row.note += `, ${(row.wall / result.wall).toFixed(2)}× ccusage native`;
            }
          }
        }
      }
      if (kind === 'canonical' && size === flags.sizes[0]) {
        for (const reader of ['ndjson', 'ours']) {
          log(`${corpus}: line reader ${reader}`);
          const result = measure(process.execPath, [join(HERE, 'line-readers.js'), reader, list.path], { runs: flags.runs, scratch });
          addRow(corpus, reader === 'ndjson' ? 'line reader: ndjson.parse() stream' : 'line reader: ours (jsonl-lines.ts)', result, base, 'read + JSON.parse only');
        }
      }
    }
  }

  if (flags.tokenizerSize > 0) {
    const dir = join(work, `canonical-${flags.tokenizerSize}`);
    await cachedCorpus(dir, `canonical ${flags.tokenizerSize} seed 1`, (target) => generateCorpus(target, 'canonical', flags.tokenizerSize));
    const list = fileList(dir);
    const corpus = `canonical ${label(list.bytes)}, ${list.files.length} files`;
    log(`${corpus}: tokenizer rows`);
    const bare = measure(process.execPath, [join(HERE, 'bare-tokenizer.js'), 'o200k', list.path], { runs: flags.runs, scratch });
    addRow(corpus, 'bare: parse loop + gpt-tokenizer o200k countTokens (1 core)', bare, null, 'the tokenizer yardstick');
    addRow(corpus, 'estimate --json --tokenizer o200k --jobs 1', measure(...compactor(['estimate', '--json', '--tokenizer', 'o200k', '--jobs', '1', dir]), { runs: flags.runs, scratch }), bare, '× the tokenizer yardstick');
    addRow(corpus, 'estimate --json --tokenizer o200k', measure(...compactor(['estimate', '--json', '--tokenizer', 'o200k', dir]), { runs: flags.runs, scratch }), bare, '× the tokenizer yardstick, both cores');
  }

  if (flags.small > 0) {
    const dir = join(work, `small-${flags.small}`);
    log(`corpus: ${flags.small} small sessions`);
    await cachedCorpus(dir, `small ${flags.small} seed 7`, (target) => generateSmallSessions(target, flags.small));
    const list = listSessions(dir);
    const corpus = `${flags.small} small canonical sessions, ${label(list.bytes)}`;
    const removeSidecars = () => {
      for (const folder of readdirSync(dir, { withFileTypes: true })) {
        if (!folder.isDirectory()) continue;
        for (const name of readdirSync(join(dir, folder.name))) if (name.endsWith('_compaction.json')) rmSync(join(dir, folder.name, name));
      }
    };
    const args = ['compact', '--json', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '300', dir];
    removeSidecars();
    const smallList = fileList(dir);
    log(`${corpus}: bare loop`);
    const bare = measure(process.execPath, [join(HERE, 'bare-loop.js'), smallList.path], { runs: flags.runs, scratch });
    addRow(corpus, 'bare loop: read, indexOf, JSON.parse (1 core)', bare, null, 'the yardstick');
    log(`${corpus}: compact`);
    const result = measure(...compactor(args), { runs: flags.runs, scratch, before: removeSidecars });
    const out = result.error ? null : records(result.stdout);
    addRow(corpus, 'compact --strategy truncate --force (writes sidecars)', result, bare, out ? `${Math.round(flags.small / result.wall)} sessions/s, ${out.count} records, ${out.failed} failed` : '');
    removeSidecars();
  }

  if (flags.single > 0) {
    for (const kind of flags.kinds) {
      const dir = join(work, `single-${kind}-${flags.single}`);
      log(`corpus: one ${kind} session of ${label(flags.single)}`);
      await cachedCorpus(dir, `single ${kind} ${flags.single} seed 3`, (target) => generateCorpus(target, kind, flags.single, { seed: 3, single: true }));
      const list = fileList(dir);
      const corpus = `one ${kind} session of ${label(list.bytes)}`;
      const base = measure(process.execPath, [join(HERE, 'bare-loop.js'), list.path], { runs: 1, scratch });
      addRow(corpus, 'bare loop (1 core, whole file in a Buffer)', base, null, 'the yardstick');
      const notReadable = !readable(list.files[0]);
      const rowsForOne = [
        ['estimate --json', ['estimate', '--json', list.files[0]]],
        ['inspect --json', ['inspect', '--json', list.files[0]]],
        ['compact --dry-run --json (truncate)', ['compact', '--json', '--strategy', 'truncate', '--dry-run', list.files[0]]],
        ['replay --json (truncate)', ['replay', '--json', '--strategy', 'truncate', list.files[0]]],
      ];
      for (const [name, args] of rowsForOne) {
        if (notReadable) addRow(corpus, name, { error: 'n/a (format not readable by this build)' });
        else {
          log(`${corpus}: ${name}`);
          addRow(corpus, name, measure(...compactor(args), { runs: 1, scratch }), base, 'one run');
        }
      }
    }
  }

  // LLM path: 200 sessions at --concurrency 16 against a local server delaying each reply 1 s.
  // Each session needs exactly one summarizer call (a short session, forced, no split turn).
  if (flags.llm) {
    const sessions = 200;
    const concurrency = 16;
    const delayMs = 1000;
    const dir = join(work, 'llm-sessions');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < sessions; i++) {
      const lines = [
        { id: 'u1', role: 'user', content: `Session ${i}: please read the config and summarize what it does.` },
        { id: 'a1', role: 'assistant', content: 'The config sets the port and the log level; nothing else stands out.' },
        { id: 'u2', role: 'user', content: 'Thanks. Now list what is left to do.' },
        { id: 'a2', role: 'assistant', content: 'Nothing is left: the change is done and tested.' },
      ];
      writeFileSync(join(dir, `s${String(i).padStart(3, '0')}.jsonl`), `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    }
    const server = spawn(process.execPath, [join(HERE, 'llm-server.js'), String(delayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise((resolve) => server.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
    const removeLlmSidecars = () => {
      for (const name of readdirSync(dir)) if (name.endsWith('_compaction.json')) rmSync(join(dir, name));
    };
    const args = ['compact', '--json', '--strategy', 'summarize', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'bench'];
    args.push('--concurrency', String(concurrency), '--force', '--allow-no-gain', '--keep-recent', '1', dir);
    log(`llm: ${sessions} sessions, concurrency ${concurrency}, replies after ${delayMs} ms`);
    const result = measure(...compactor(args), { runs: flags.runs, scratch, before: removeLlmSidecars, env: { OPENAI_API_KEY: 'bench-key' } });
    server.kill();
    // The issue's ideal: sessions / concurrency × delay (12.5 s), not rounded up to whole waves.
    const ideal = ((sessions / concurrency) * delayMs) / 1000;
    const out = result.error ? null : records(result.stdout);
    const note = out ? `${(result.wall / ideal).toFixed(2)}× the ideal ${ideal} s (${sessions} / ${concurrency} × 1 s), ${out.count} records, ${out.failed} failed` : '';
    addRow(`${sessions} sessions, server delays 1 s`, `compact --strategy summarize --concurrency ${concurrency}`, result, null, note);
  }

  results.machine += ` Load average ${loadavg()[0].toFixed(2)} at the end.`;
  const table = tableText(results.machine);
  process.stdout.write(`\n${table}`);
  if (flags.writeDoc) writeDoc(resolve(flags.writeDoc), table);
  if (flags.out) writeFileSync(flags.out, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  if (!keep) rmSync(work, { recursive: true, force: true });
  else log(`corpora kept in ${work}`);
}
