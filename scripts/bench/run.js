#!/usr/bin/env node
/**
 * `npm run bench`: generates the synthetic corpora (corpus.js) outside the repository, then
 * times compactor against yardsticks over the same files, in one run, and prints a Markdown
 * table (docs/performance.md) and a summary of the targets (README "Performance"). Each row is a
 * separate process, run --runs times, each run just after a run of its yardstick (a bare parse
 * loop on one core or on two, ccusage's native binary, `node -e 0`): its ratio is the median of
 * the pairs' ratios, wall and CPU seconds are medians, peak RSS the largest (GNU time's %M, which
 * counts worker threads, as they share the process). This is not a test: nothing here passes or
 * fails.
 *
 *   node scripts/bench/run.js [--sizes 200M,1G|none] [--runs 3] [--small 10000|none] [--single 1G|none]
 *                             [--archive 100000|none]
 *                             [--real 300M|none] [--real-codex 200M|none] [--tokenizer-size 50M] [--kinds claude,canonical] [--no-ccusage]
 *                             [--startup-runs 21] [--no-llm] [--cache DIR] [--out results.json]
 *                             [--write-doc docs/performance.md] [--compare earlier-results.json] [--no-build] [--help]
 *
 * Without --cache, corpora go to a fresh temporary directory that is removed at the end; with
 * it (or COMPACTOR_BENCH_CACHE) they are kept and reused. --write-doc puts the table, the command
 * line that made it and the machine's line between the `<!-- bench:start -->` and
 * `<!-- bench:end -->` markers of that Markdown file, and the targets' summary between
 * `<!-- bench-summary:start -->` and `<!-- bench-summary:end -->` (each file takes the blocks it
 * has; several files, comma-separated; written to a temporary file, then renamed),
 * so the published table is the run's own output, not a copy by hand. --compare names the --out
 * file of an earlier run: every row whose ratio (or, for a yardstick, wall time) moved by more
 * than 20% is listed after the table, the issue's test of a reproducible figure. ccusage (both releases) comes from
 * tools/agents/install.js, which installs it once into the tools cache outside the project.
 * --real sizes the second Claude Code corpus, the repository's real sessions copied under fresh
 * ids (real-corpus.js): the rows that set us against ccusage run on it as on the synthetic one.
 * --real-codex sizes the Codex corpus, the repository's real rollouts copied so
 * (real-codex-corpus.js), timed against the bare loop.
 * On each Claude Code corpus, `inspect` with no session's report and inspect-parts.js's rows say
 * what inspect's per-session extras cost (issue 33 item 3).
 * --archive N (off by default: 100,000 sessions take minutes a run) times the archive view,
 * `inspect` over N small sessions, paired with `estimate` over the same tree, with its peak RSS.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentTools } from '../../tools/agents/install.js';
import { cachedCorpus, generateCorpus, generateSmallSessions, listSessions } from './corpus.js';
import { generateRealCodexCorpus } from './real-codex-corpus.js';
import { generateRealCorpus } from './real-corpus.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'bin', 'compactor.js');
const HERE = dirname(fileURLToPath(import.meta.url));

// ---- flags -------------------------------------------------------------------------------

function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)([KMG]?)B?$/i.exec(text.trim());
  if (!match) throw new Error(`not a size: ${text} (e.g. 20M, 1G)`);
  return Math.round(Number(match[1]) * { '': 1, K: 1e3, M: 1e6, G: 1e9 }[match[2].toUpperCase()]);
}

const HELP = `Usage: npm run bench -- [flags]   (or node scripts/bench/run.js [flags])

Builds compactor (npm run build), generates the synthetic corpora outside the repository, and times
compactor against its yardsticks (a bare parse loop, ccusage, node -e 0) over the same files; prints
a Markdown table and the targets' summary. Not a test: nothing passes or fails.

  --sizes 200M,1G|none     Claude Code and canonical corpora to time          [200M,1G]
  --runs N                 runs of each row, each paired with its yardstick   [3]
  --small N|none           many small sessions                                [10000]
  --single SIZE|none       one large session                                  [1G]
  --real SIZE|none         the repository's real sessions copied to this size [300M]
  --real-codex SIZE|none   the repository's real Codex rollouts copied so     [200M]
  --tokenizer-size SIZE    corpus for the exact tokenizers' rows              [50M]
  --kinds claude,canonical corpora kinds                                      [claude,canonical]
  --startup-runs N         runs of the start-up rows                          [21]
  --no-ccusage             leave out the ccusage rows
  --no-llm                 leave out the summarizer rows
  --cache DIR              keep and reuse corpora there (or COMPACTOR_BENCH_CACHE)
  --out FILE               the results as JSON
  --write-doc FILES        write the table between the bench markers of these Markdown files
  --compare FILE           list rows that moved by more than 20% against an earlier --out
  --no-build               time the build already in dist/
  -h, --help               this help

Sizes take K, M or G (20M, 1G). More in the header of scripts/bench/run.js and docs/performance.md.
`;

/** Thrown for a flag the bench does not know: one line and the usage, exit 2. */
class UsageError extends Error {}

function parseFlags(argv) {
  const flags = {
    sizes: '200M,1G',
    runs: '3',
    small: '10000',
    archive: 'none',
    single: '1G',
    real: '300M',
    'real-codex': '200M',
    'tokenizer-size': '50M',
    'startup-runs': '21',
    kinds: 'claude,canonical',
    ccusage: true,
    llm: true,
    build: true,
    cache: process.env['COMPACTOR_BENCH_CACHE'],
    out: undefined,
    'write-doc': undefined,
    compare: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--no-ccusage') flags.ccusage = false;
    else if (arg === '--no-llm') flags.llm = false;
    else if (arg === '--no-build') flags.build = false;
    else if (arg.startsWith('--') && arg.slice(2) in flags && argv[i + 1] !== undefined) flags[arg.slice(2)] = argv[++i];
    else throw new UsageError(`unknown argument ${arg}`);
  }
  return {
    sizes: flags.sizes === 'none' ? [] : flags.sizes.split(',').filter(Boolean).map(parseSize),
    runs: Math.max(1, Number(flags.runs)),
    small: flags.small === 'none' ? 0 : Number(flags.small),
    archive: flags.archive === 'none' ? 0 : Number(flags.archive),
    single: flags.single === 'none' ? 0 : parseSize(flags.single),
    real: flags.real === 'none' ? 0 : parseSize(flags.real),
    realCodex: flags['real-codex'] === 'none' ? 0 : parseSize(flags['real-codex']),
    tokenizerSize: flags['tokenizer-size'] === 'none' ? 0 : parseSize(flags['tokenizer-size']),
    startupRuns: Number(flags['startup-runs']),
    kinds: flags.kinds.split(',').filter(Boolean),
    ccusage: flags.ccusage,
    llm: flags.llm,
    build: flags.build,
    cache: flags.cache,
    out: flags.out,
    writeDoc: flags['write-doc'],
    compare: flags.compare,
  };
}

const label = (bytes) => (bytes >= 1e9 ? `${+(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`);

// ---- measuring ---------------------------------------------------------------------------

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The third quartile over the first: the spread of many runs, where max over min is one outlier's. */
const quartileSpread = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
  return at(0.75) / at(0.25);
};

/** One run under GNU time: {wall s, cpu s (user + system), rss MB, stdout} or {error}. */
function runOnce(command, args, { env = {}, before, scratch }) {
  const timing = join(scratch, 'time.txt');
  before?.();
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M %U %S', '-o', timing, command, ...args], {
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
  const [rss, user, system] = readFileSync(timing, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { wall, cpu: user + system, rss: rss / 1024, stdout: result.stdout };
}

/**
 * Runs a command `runs` times. With `pairs` (the row's yardsticks, each {label, command, args,
 * env}), the yardsticks run before each run of the command, in turn, and each ratio is the median
 * of the ratios of the pairs: a machine whose speed drifts from one minute to the next moves both
 * runs of a pair alike, where a yardstick measured once for the whole group would not. Returns
 * {wall and cpu (medians), rss (the largest), ratios [{label, ratio, spread}] (spread: the largest
 * pair's ratio over the smallest), stdout of the last run} or {error}.
 */
function measure(command, args, { runs, env = {}, before, scratch, pairs = [] }) {
  const walls = [];
  const cpus = [];
  const paired = pairs.map(() => []);
  let rss = 0;
  let stdout = '';
  for (let run = 0; run < runs; run++) {
    const bases = [];
    for (const pair of pairs) {
      const base = runOnce(pair.command, pair.args, { env: pair.env, scratch });
      if (base.error) return { error: `${pair.label}: ${base.error}` };
      pair.samples?.push(base);
      bases.push(base);
    }
    const result = runOnce(command, args, { env, before, scratch });
    if (result.error) return result;
    walls.push(result.wall);
    cpus.push(result.cpu);
    bases.forEach((base, index) => paired[index].push(result.wall / base.wall));
    rss = Math.max(rss, result.rss);
    stdout = result.stdout;
  }
  const ratios = pairs.map((pair, index) => ({
    label: pair.label,
    ratio: median(paired[index]),
    spread: runs > 1 ? Math.max(...paired[index]) / Math.min(...paired[index]) : null,
  }));
  return { wall: median(walls), cpu: median(cpus), rss, stdout, ratios };
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

/**
 * A row of the table. Its ratio is against its first paired yardstick (result.ratios); other
 * paired yardsticks go into the note. A yardstick's own row has no ratio.
 */
function addRow(corpus, name, result, extra = '') {
  if (result.error) {
    rows.push({ corpus, name, wall: null, cpu: null, ratio: null, yardstick: '', spread: null, rss: null, note: result.error, others: [] });
    return;
  }
  const [first, ...others] = result.ratios ?? [];
  const ratio = first ? first.ratio : null;
  const more = others.map((other) => `${fixed(other.ratio)}× ${other.label} (paired${other.spread === null ? '' : `, spread ${fixed(other.spread)}`})`);
  const note = [extra, ...more].filter(Boolean).join(', ');
  rows.push({ corpus, name, wall: result.wall, cpu: result.cpu ?? null, ratio, yardstick: first?.label ?? '', spread: first?.spread ?? null, rss: result.rss, note, others });
}

/**
 * A yardstick's own row, placed first in its group. Its figures are the runs it made paired with
 * the group's rows (their medians; RSS the largest), filled in by settleYardsticks at the end; a
 * yardstick no row was paired with is measured alone then.
 */
const yardsticks = [];
function addYardstick(corpus, name, pair, note) {
  const row = { corpus, name, wall: null, cpu: null, ratio: null, yardstick: '', spread: null, rss: null, note, others: [] };
  rows.push(row);
  pair.samples = [];
  yardsticks.push({ row, pair });
}

function settleYardsticks() {
  for (const { row, pair } of yardsticks) {
    if (pair.samples.length === 0) {
      const alone = measure(pair.command, pair.args, { runs: flags.runs, env: pair.env, scratch });
      if (alone.error) Object.assign(row, { wall: null, note: alone.error });
      else Object.assign(row, { wall: alone.wall, cpu: alone.cpu, rss: alone.rss });
      continue;
    }
    const runs = pair.samples.length;
    Object.assign(row, {
      wall: median(pair.samples.map((sample) => sample.wall)),
      cpu: median(pair.samples.map((sample) => sample.cpu)),
      rss: Math.max(...pair.samples.map((sample) => sample.rss)),
      note: `${row.note}; median of its ${runs} runs paired with the rows`,
    });
  }
}

const fixed = (value, digits = 2) => (value === null || value === undefined ? '' : value.toFixed(digits));

function tableText(machine) {
  const lines = [
    '| corpus | row | wall s | CPU s | × yardstick | yardstick | spread | peak RSS MB | note |',
    '|---|---|---:|---:|---:|---|---:|---:|---|',
    ...rows.map((row) =>
      `| ${row.corpus} | ${row.name} | ${row.wall === null ? 'n/a' : fixed(row.wall)} | ${fixed(row.cpu)} | ${row.ratio === null ? '' : `${fixed(row.ratio)}×`} | ${row.yardstick} | ${fixed(row.spread)} | ${row.rss === null ? '' : Math.round(row.rss)} | ${row.note} |`,
    ),
  ];
  return `${machine}\n\n${lines.join('\n')}\n`;
}

/**
 * Rows of this run set against the same rows of an earlier run's results: each row's ratio to its
 * yardstick, and which moved by more than 20% either way (a bug, by the issue's rule). The
 * yardsticks' own wall times are listed when they moved as much: that is the machine's speed,
 * which the pairing is there to cancel, not a row of ours.
 */
function comparison(path) {
  const earlier = JSON.parse(readFileSync(path, 'utf8'));
  const before = new Map(earlier.rows.map((row) => [`${row.corpus}\u0000${row.name}`, row]));
  const moved = [];
  const machine = [];
  let compared = 0;
  for (const row of rows) {
    const old = before.get(`${row.corpus}\u0000${row.name}`);
    if (!old) continue;
    const yardstick = row.ratio === null;
    const [was, now] = yardstick ? [old.wall, row.wall] : [old.ratio, row.ratio];
    if (was === null || now === null || was === undefined) continue;
    if (!yardstick) compared++;
    const change = now / was;
    if (change > 1.2 || change < 1 / 1.2) (yardstick ? machine : moved).push(`| ${row.corpus} | ${row.name} | ${fixed(was)} | ${fixed(now)} | ${fixed(change)} |`);
  }
  const when = earlier.date ? `${earlier.date.slice(0, 16).replace('T', ' ')} UTC` : 'an earlier date';
  const head = `Against the run of ${when}: ${compared} rows compared by their ratio to the yardstick, ${moved.length} moved by more than 20%.`;
  const table = (list) => `| corpus | row | before | now | now / before |\n|---|---|---:|---:|---:|\n${list.join('\n')}\n`;
  let text = moved.length ? `${head}\n\n${table(moved)}` : `${head}\n`;
  if (machine.length) text += `\nYardsticks whose own wall time moved by more than 20% (the machine's speed):\n\n${table(machine)}`;
  return { text, count: compared, moved: moved.length };
}

/**
 * The targets, one line each, read from this run's rows: what the README shows. A target whose
 * rows this run did not measure (a flag left them out) says so.
 */
function targetSummary(compared) {
  const find = (test) => rows.filter((row) => row.wall !== null && test(row));
  const verdict = (ok) => (ok ? 'met' : '**missed**');
  const lines = [];
  const line = (target, measured, ok) => lines.push(`| ${target} | ${measured} | ${ok === null ? 'not measured' : verdict(ok)} |`);
  const startup = (name) => find((row) => row.corpus === 'start-up' && row.name === name)[0];
  const version = startup('compactor --version');
  line('`compactor --version` ≤ 1.5× `node -e 0`', version ? `${fixed(version.ratio)}×` : '', version ? version.ratio <= 1.5 : null);
  const small = ['compactor estimate (19 lines, text)', 'compactor estimate --json (19 lines)'].map(startup).filter(Boolean);
  line('`estimate` of a small session ≤ 2× `node -e 0`', small.map((row) => `${fixed(row.ratio)}×`).join(', '), small.length ? small.every((row) => row.ratio <= 2) : null);
  const compact = find((row) => row.name.startsWith('compact --strategy truncate --force'))[0];
  const rate = compact ? Number(/^(\d+) sessions\/s/.exec(compact.note)?.[1]) : 0;
  const dry = find((row) => row.name === DRY_SMALL)[0];
  const durable = find((row) => row.name === DURABLE_FLOOR)[0];
  const smallParts = [dry ? `${fixed(dry.ratio)}× with \`--dry-run\` (no sidecar written)` : '', durable ? `its floor, the durable writes alone: ${fixed(durable.ratio)}×` : ''].filter(Boolean);
  line('small-session `compact --strategy truncate` ≥ 1,000 sessions/s and ≤ 3× the bare loop', compact ? `${rate} sessions/s, ${fixed(compact.ratio)}×${smallParts.map((part) => `; ${part}`).join('')}` : '', compact ? rate >= 1000 && compact.ratio <= 3 : null);
  // Issue 29 item 7: the per-session fixed cost, apart from the durable write. Both rows are
  // paired with the same bare loop, so their ratios' quotient is the real run over its dry run.
  const overDry = compact && dry ? compact.ratio / dry.ratio : null;
  line(
    'small-session `compact --strategy truncate` ≤ 1.3× its `--dry-run`, the dry run ≤ 3× the bare loop',
    overDry === null ? '' : `${fixed(overDry)}× its dry run; the dry run ${fixed(dry.ratio)}×${durable ? `; the durable writes alone ${fixed(durable.ratio / dry.ratio)}× the dry run` : ''}`,
    overDry === null ? null : overDry <= 1.3 && dry.ratio <= 3,
  );
  // Against ccusage native, on both Claude Code corpora: `estimate` ≤ 1.5×, `inspect` ≤ 2.5× (issue 33).
  const CLAUDE_CORPORA = [
    ['claude 1 GB', 'synthetic'],
    ['claude real', 'real sessions'],
  ];
  const nativeRatio = (row) => row.others.find((other) => other.label === NATIVE)?.ratio;
  const limits = { estimate: 1.5, inspect: 2.5 };
  const native = CLAUDE_CORPORA.flatMap(([prefix, name]) =>
    find((row) => row.corpus.startsWith(prefix) && /^(estimate|inspect) --json$/.test(row.name)).map((row) => ({ row, name, command: row.name.split(' ')[0], ratio: nativeRatio(row) })),
  );
  const nativeKnown = native.length > 0 && native.every((entry) => entry.ratio !== undefined);
  const floors = CLAUDE_CORPORA.flatMap(([prefix, name]) => {
    const ratio = find((row) => row.corpus.startsWith(prefix) && row.name === COUNTED_FLOOR)[0];
    return ratio && nativeRatio(ratio) !== undefined ? [`${name} ${fixed(nativeRatio(ratio))}×`] : [];
  });
  const floorText = floors.length ? `; the floor with every other character counted: ${floors.join(', ')}` : '';
  line('Claude Code corpora (synthetic 1 GB, real sessions): `estimate` ≤ 1.5×, `inspect` ≤ 2.5× ccusage native (paired)', native.map((entry) => `${entry.command} ${fixed(entry.ratio)}× (${entry.name})`).join(', ') + floorText, nativeKnown ? native.every((entry) => entry.ratio <= limits[entry.command]) : null);
  const memory = find((row) => (/ 1 GB, /.test(row.corpus) || row.corpus.startsWith('one ')) && /^(estimate|inspect|replay|compact --dry-run) --json/.test(row.name));
  const over = memory.filter((row) => row.rss > 200);
  line('peak RSS ≤ 200 MB (1 GB corpora and single ~1 GB sessions, four commands)', over.length ? `over on ${over.map((row) => `${row.corpus.replace(/, \d+ files$/, '')} ${row.name.split(' ')[0]} ${Math.round(row.rss)}`).join('; ')}; largest of the rest ${Math.round(Math.max(0, ...memory.filter((row) => row.rss <= 200).map((row) => row.rss)))}` : `largest ${Math.round(Math.max(0, ...memory.map((row) => row.rss)))} MB of ${memory.length} rows`, memory.length ? over.length === 0 : null);
  const archive = find((row) => row.name.endsWith('(archive view)'));
  line('archive view of 100,000 small sessions: peak RSS ≤ 300 MB, ≤ 1.5× `estimate` (paired)', archive.map((row) => `${row.name.split(' (')[0]}: ${Math.round(row.rss)} MB, ${fixed(row.ratio)}× (${row.corpus.split(' ')[0]} sessions)`).join('; '), archive.length ? archive.every((row) => row.rss <= 300 && row.ratio <= 1.5) : null);
  if (compared) line('every row within 20% of the earlier run (`--compare`)', `${compared.moved} of ${compared.count} rows moved more`, compared.moved === 0);
  return `| target | this run | status |\n|---|---|---|\n${lines.join('\n')}\n`;
}

// Marked blocks of a Markdown file that a run writes: the whole table, and the targets' summary.
const BLOCKS = [
  { start: '<!-- bench:start -->', end: '<!-- bench:end -->', key: 'table' },
  { start: '<!-- bench-summary:start -->', end: '<!-- bench-summary:end -->', key: 'summary' },
];

/** Replaces each marked block the file has with this run's text (temp file + rename). */
function writeDoc(path, texts) {
  let text = readFileSync(path, 'utf8');
  // Where the corpora and the JSON went is this machine's business, not the figures'.
  const local = new Set(['--write-doc', '--cache', '--out', '--compare']);
  const command = `npm run bench -- ${process.argv.slice(2).filter((arg, i, all) => !local.has(arg) && !local.has(all[i - 1])).join(' ')}`.trim();
  let written = 0;
  for (const block of BLOCKS) {
    const start = text.indexOf(block.start);
    const end = text.indexOf(block.end);
    if (start < 0 || end < start) continue;
    text = `${text.slice(0, start)}${block.start}\nFrom \`${command}\` on ${new Date().toISOString().slice(0, 10)}.\n${texts[block.key]}${text.slice(end)}`;
    written++;
  }
  if (written === 0) throw new Error(`${path}: no ${BLOCKS.map((block) => `${block.start} … ${block.end}`).join(' or ')} block to write into`);
  const temporary = `${path}.bench-${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

// ---- main --------------------------------------------------------------------------------

/** The flags, or the help and exit 0 (`--help`), or one line and exit 2: before anything is built or generated. */
function flagsOrExit(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  try {
    return parseFlags(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench: ${error.message}\n\n${HELP}`);
    process.exit(2);
  }
}

const flags = flagsOrExit(process.argv.slice(2));
// The build the rows time (package.json's bench script used to run it before the flags were read).
if (flags.build && spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) {
  process.stderr.write('bench: npm run build failed\n');
  process.exit(1);
}
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

/** The label of ccusage's native binary as a paired yardstick (the Claude Code target's). */
const NATIVE = 'ccusage native';

/** ccusage's `session` report over a Claude config directory, as a command to run or pair with. */
const ccusageRun = (tool, dir, label) => ({ label, command: tool[0], args: [...tool[1], 'session', '--json', '--offline'], env: { CLAUDE_CONFIG_DIR: dir } });

/** A yardstick to pair rows with: {label, command, args, env}. `pieces` reads 1 MiB at a time. */
const bareLoop = (list, threads, label, pieces = false) => ({
  label,
  command: process.execPath,
  args: [join(HERE, 'bare-loop.js'), list.path, String(threads), ...(pieces ? ['pieces'] : [])],
});

/**
 * The floor under the Claude Code target (bare-loop.js `usage-lines`): less work than the rows
 * the target names must do, measured as a row, paired with the same yardsticks.
 */
const floorLoop = (list, threads, mode) => [process.execPath, [join(HERE, 'bare-loop.js'), list.path, String(threads), mode]];
const USAGE_FLOOR = 'floor: read, indexOf, JSON.parse of the lines with "usage" only (2 cores)';
/** The same, with every other line's characters counted (bare-lines.js utf16Units): the floor of an exact size. */
const COUNTED_FLOOR = 'floor: JSON.parse of the lines with "usage", the other lines\' characters counted (2 cores)';
const DRY_SMALL = 'compact --strategy truncate --force --dry-run (no sidecar written)';
/**
 * The floor under the small-session target (durable-writes.js): each session's sidecar written
 * atomically and durably, and nothing else; no row that writes its sidecars as we promise
 * (docs/guarantees.md) can come nearer to the bare loop.
 */
const DURABLE_FLOOR = 'floor: a file a session written durably (temp, fsync, rename, directory fsync), nothing read';

function commandRows(corpus, dir, list, pairs, runs) {
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
    const result = measure(...compactor(args), { runs, scratch, pairs: name.startsWith('estimate') || name.startsWith('inspect') ? pairs : pairs.slice(0, 1) });
    const out = result.error ? null : records(result.stdout);
    addRow(corpus, name, result, out ? `${out.count} sessions${out.failed ? `, ${out.failed} failed` : ''}` : '');
  }
  return sessions;
}

const ARCHIVE_ROW = 'inspect (archive view: no session\'s report)';
/** inspect-parts.js's parts, as rows: each against the lean read of the same sessions in the same rounds. */
const INSPECT_PARTS = [
  ['growth facts', 'growth facts gathered while reading'],
  ['growth attribution', 'growth attribution, largest outputs, repeated reads'],
  ['recorded compactions', "recorded compactions' effects, prompt overhead"],
  ['json record', 'the --json record made'],
  ['the report', "the session's report: the four above, summed"],
  ['calls and turns', 'calls and turns (any inspect)'],
  ['pricing and ledgers', 'pricing and both ledgers (any inspect)'],
];

/**
 * What `inspect`'s per-session extras cost (issue 33: paid only when shown): `inspect` over the
 * corpus with no session's report (the archive view in text: no growth facts, no record), paired
 * as `inspect --json` is; and each part of the task timed in one process (inspect-parts.js)
 * against the lean read of the same sessions in the same rounds.
 */
function inspectPartRows(corpus, dir, pairs) {
  log(`${corpus}: ${ARCHIVE_ROW}`);
  addRow(corpus, ARCHIVE_ROW, measure(...compactor(['inspect', dir]), { runs: flags.runs, scratch, pairs }), 'the ranked table and roll-ups only; `inspect --json` less this is what the reports cost');
  log(`${corpus}: inspect's parts, in one process`);
  const run = spawnSync(process.execPath, [join(HERE, 'inspect-parts.js'), join(ROOT, 'dist'), dir, String(flags.runs)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const yardstick = "lean read of every session, in process (1 core)";
  if (run.status !== 0) {
    addRow(corpus, `inspect's parts: ${yardstick}`, { error: `failed: ${(run.stderr || `exit ${run.status}`).split('\n')[0].slice(0, 100)}` });
    return;
  }
  const { seconds, rounds } = JSON.parse(run.stdout.trim().split('\n').pop());
  const read = seconds['lean read'];
  rows.push({ corpus, name: `inspect's parts: ${yardstick}`, wall: read, cpu: null, ratio: null, yardstick: '', spread: null, rss: null, note: `the yardstick of the parts; median of ${rounds} rounds after one to warm up`, others: [] });
  for (const [key, name] of INSPECT_PARTS) {
    rows.push({ corpus, name: `inspect's part: ${name}`, wall: seconds[key], cpu: null, ratio: seconds[key] / read, yardstick: 'lean read, same rounds', spread: null, rss: null, note: '', others: [] });
  }
}

/**
 * The rows of a Claude Code corpus (the synthetic one, the real sessions): the commands, each
 * `estimate` and `inspect` run paired with a run of ccusage's native binary (the yardstick the
 * target names) as well as the two-core loop; the floors; one core; both ccusage releases.
 */
function claudeRows(corpus, dir, list, one, two, tools) {
  const native = tools.native ? ccusageRun(tools.native, dir, NATIVE) : null;
  commandRows(corpus, dir, list, native ? [two, native] : [two], flags.runs);
  if (readable(list.files[0])) inspectPartRows(corpus, dir, native ? [two, native] : [two]);
  log(`${corpus}: ${USAGE_FLOOR}`);
  addRow(corpus, USAGE_FLOOR, measure(...floorLoop(list, 2, 'usage-lines'), { runs: flags.runs, scratch, pairs: native ? [two, native] : [two] }), 'what a usage report must parse, nothing measured');
  log(`${corpus}: ${COUNTED_FLOOR}`);
  addRow(corpus, COUNTED_FLOOR, measure(...floorLoop(list, 2, 'usage-lines-counted'), { runs: flags.runs, scratch, pairs: native ? [two, native] : [two] }), 'the least an exact size costs, nothing else');
  addRow(corpus, 'estimate --json --jobs 1', readable(list.files[0]) ? measure(...compactor(['estimate', '--json', '--jobs', '1', dir]), { runs: flags.runs, scratch, pairs: [one] }) : { error: 'n/a (format not readable by this build)' }, 'one core');
  for (const [name, tool] of [[`ccusage session --json --offline (native ${tools.nativeVersion ?? ''})`, tools.native], [`ccusage session --json --offline (JS ${tools.jsVersion ?? ''})`, tools.js]]) {
    if (!tool) {
      addRow(corpus, name, { error: tools.error ?? 'n/a (not installable here)' });
      continue;
    }
    log(`${corpus}: ${name}`);
    const run = ccusageRun(tool, dir, name);
    const result = measure(run.command, run.args, { runs: flags.runs, scratch, env: run.env, pairs: [two] });
    addRow(corpus, name, result);
  }
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
    const cpuSeconds = commands.map(() => []);
    const rss = commands.map(() => 0);
    for (let run = 0; run < flags.startupRuns; run++) {
      commands.forEach(([command, args], index) => {
        const result = measure(command, args, { runs: 1, scratch });
        if (result.error) throw new Error(`start-up: ${result.error}`);
        walls[index].push(result.wall);
        cpuSeconds[index].push(result.cpu);
        rss[index] = Math.max(rss[index], result.rss);
      });
    }
    // Each run's ratio to the `node -e 0` just before it; the row's ratio is their median.
    const startup = (index) => {
      const ratios = walls[index].map((wall, run) => wall / walls[0][run]);
      return { wall: median(walls[index]), cpu: median(cpuSeconds[index]), rss: rss[index], ratios: [{ label: 'node -e 0', ratio: median(ratios), spread: quartileSpread(ratios) }] };
    };
    addRow(corpus, 'node -e 0', { wall: median(walls[0]), cpu: median(cpuSeconds[0]), rss: rss[0] }, `the yardstick; median of ${flags.startupRuns}`);
    addRow(corpus, 'compactor --version', startup(1), 'target ≤ 1.5×');
    addRow(corpus, 'compactor estimate (19 lines, text)', startup(2), 'target ≤ 2×');
    addRow(corpus, 'compactor estimate --json (19 lines)', startup(3), 'target ≤ 2×');
  }

  for (const size of flags.sizes) {
    for (const kind of flags.kinds) {
      const dir = join(work, `${kind}-${size}`);
      log(`corpus ${kind} ${label(size)} in ${dir}`);
      await cachedCorpus(dir, `${kind} ${size} seed 1`, (target) => generateCorpus(target, kind, size));
      const list = fileList(dir);
      const corpus = `${kind} ${label(list.bytes)}, ${list.files.length} files`;
      const one = bareLoop(list, 1, 'bare loop, 1 core');
      const two = bareLoop(list, 2, 'bare loop, 2 cores');
      addYardstick(corpus, 'bare loop: read, indexOf, JSON.parse (1 core)', one, 'the yardstick of one-core rows');
      addYardstick(corpus, 'bare loop on 2 cores (main thread + 1 worker)', two, 'the yardstick of two-core rows');
      if (kind === 'claude') claudeRows(corpus, dir, list, one, two, tools);
      else {
        commandRows(corpus, dir, list, [two], flags.runs);
        addRow(corpus, 'estimate --json --jobs 1', readable(list.files[0]) ? measure(...compactor(['estimate', '--json', '--jobs', '1', dir]), { runs: flags.runs, scratch, pairs: [one] }) : { error: 'n/a (format not readable by this build)' }, 'one core');
      }
      if (kind === 'canonical' && size === flags.sizes[0]) {
        for (const reader of ['ndjson', 'ours']) {
          log(`${corpus}: line reader ${reader}`);
          const result = measure(process.execPath, [join(HERE, 'line-readers.js'), reader, list.path], { runs: flags.runs, scratch, pairs: [one] });
          addRow(corpus, reader === 'ndjson' ? 'line reader: ndjson.parse() stream' : 'line reader: ours (jsonl-lines.ts)', result, 'read + JSON.parse only');
        }
      }
    }
  }

  // The second Claude Code corpus: real sessions, not generated ones (real-corpus.js).
  if (flags.real > 0) {
    const dir = join(work, `claude-real-${flags.real}`);
    log(`corpus: the real Claude Code sessions copied to ${label(flags.real)} in ${dir}`);
    await cachedCorpus(dir, `claude real ${flags.real} seed 11`, (target) => generateRealCorpus(target, flags.real));
    const list = fileList(dir);
    const corpus = `claude real sessions ${label(list.bytes)}, ${list.files.length} files`;
    const one = bareLoop(list, 1, 'bare loop, 1 core');
    const two = bareLoop(list, 2, 'bare loop, 2 cores');
    addYardstick(corpus, 'bare loop: read, indexOf, JSON.parse (1 core)', one, 'the yardstick of one-core rows');
    addYardstick(corpus, 'bare loop on 2 cores (main thread + 1 worker)', two, 'the yardstick of two-core rows');
    claudeRows(corpus, dir, list, one, two, tools);
  }

  // The Codex corpus: the real rollouts copied under fresh ids (real-codex-corpus.js). No Codex
  // counterpart of ccusage is installed with the agent tools: the bare loop is its yardstick.
  if (flags.realCodex > 0) {
    const dir = join(work, `codex-real-${flags.realCodex}`);
    log(`corpus: the real Codex rollouts copied to ${label(flags.realCodex)} in ${dir}`);
    await cachedCorpus(dir, `codex real ${flags.realCodex} seed 13`, (target) => generateRealCodexCorpus(target, flags.realCodex));
    const list = fileList(dir);
    const corpus = `codex real rollouts ${label(list.bytes)}, ${list.files.length} files`;
    const one = bareLoop(list, 1, 'bare loop, 1 core');
    const two = bareLoop(list, 2, 'bare loop, 2 cores');
    addYardstick(corpus, 'bare loop: read, indexOf, JSON.parse (1 core)', one, 'the yardstick of one-core rows');
    addYardstick(corpus, 'bare loop on 2 cores (main thread + 1 worker)', two, 'the yardstick of two-core rows');
    commandRows(corpus, dir, list, [two], flags.runs);
    addRow(corpus, 'estimate --json --jobs 1', measure(...compactor(['estimate', '--json', '--jobs', '1', dir]), { runs: flags.runs, scratch, pairs: [one] }), 'one core');
  }

  if (flags.tokenizerSize > 0) {
    const dir = join(work, `canonical-${flags.tokenizerSize}`);
    await cachedCorpus(dir, `canonical ${flags.tokenizerSize} seed 1`, (target) => generateCorpus(target, 'canonical', flags.tokenizerSize));
    const list = fileList(dir);
    const corpus = `canonical ${label(list.bytes)}, ${list.files.length} files`;
    log(`${corpus}: tokenizer rows`);
    const bare = { label: 'bare tokenizer loop, 1 core', command: process.execPath, args: [join(HERE, 'bare-tokenizer.js'), 'o200k', list.path] };
    addYardstick(corpus, 'bare: parse loop + gpt-tokenizer o200k countTokens (1 core)', bare, 'the tokenizer yardstick');
    addRow(corpus, 'estimate --json --tokenizer o200k --jobs 1', measure(...compactor(['estimate', '--json', '--tokenizer', 'o200k', '--jobs', '1', dir]), { runs: flags.runs, scratch, pairs: [bare] }));
    addRow(corpus, 'estimate --json --tokenizer o200k', measure(...compactor(['estimate', '--json', '--tokenizer', 'o200k', dir]), { runs: flags.runs, scratch, pairs: [bare] }), 'both cores');
  }

  if (flags.small > 0) {
    const dir = join(work, `small-${flags.small}`);
    log(`corpus: ${flags.small} small sessions`);
    await cachedCorpus(dir, `small ${flags.small} seed 7`, (target) => generateSmallSessions(target, flags.small));
    const list = listSessions(dir);
    const corpus = `${flags.small} small canonical sessions, ${label(list.bytes)}`;
    /** Files the runs wrote beside the sessions (`suffix`): each path and its size. */
    const written = (suffix) =>
      readdirSync(dir, { withFileTypes: true })
        .filter((folder) => folder.isDirectory())
        .flatMap((folder) => readdirSync(join(dir, folder.name)).filter((name) => name.endsWith(suffix)).map((name) => join(dir, folder.name, name)));
    const removeWritten = (suffix) => () => written(suffix).forEach((path) => rmSync(path));
    const removeSidecars = removeWritten('_compaction.json');
    const args = ['compact', '--json', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '300', dir];
    removeSidecars();
    const smallList = fileList(dir);
    const one = bareLoop(smallList, 1, 'bare loop, 1 core');
    addYardstick(corpus, 'bare loop: read, indexOf, JSON.parse (1 core)', one, 'the yardstick');
    log(`${corpus}: compact`);
    const result = measure(...compactor(args), { runs: flags.runs, scratch, before: removeSidecars, pairs: [one] });
    const out = result.error ? null : records(result.stdout);
    addRow(corpus, 'compact --strategy truncate --force (writes sidecars)', result, out ? `${Math.round(flags.small / result.wall)} sessions/s, ${out.count} records, ${out.failed} failed` : '');
    // The same run without the durable writes: how much of the row the sidecars' commit takes.
    log(`${corpus}: ${DRY_SMALL}`);
    const dry = measure(...compactor([...args.slice(0, -1), '--dry-run', dir]), { runs: flags.runs, scratch, pairs: [one] });
    const dryOut = dry.error ? null : records(dry.stdout);
    addRow(corpus, DRY_SMALL, dry, dryOut ? `${Math.round(flags.small / dry.wall)} sessions/s, ${dryOut.count} records, ${dryOut.failed} failed` : '');
    // What the sidecars' durability costs alone, at the size the compact row's sidecars have.
    const sidecars = written('_compaction.json');
    const size = sidecars.length ? Math.round(sidecars.reduce((sum, path) => sum + statSync(path).size, 0) / sidecars.length) : 0;
    removeSidecars();
    if (size > 0) {
      log(`${corpus}: ${DURABLE_FLOOR}`);
      const removeFloor = removeWritten('.durable-floor');
      // More runs than a row's: the disk's share moves from run to run (4.98× and 6.29× in two
      // quiet runs of 3).
      const runs = Math.max(flags.runs, 9);
      addRow(corpus, DURABLE_FLOOR, measure(process.execPath, [join(HERE, 'durable-writes.js'), smallList.path, String(size)], { runs, scratch, before: removeFloor, pairs: [one] }), `${size} bytes a file, the sidecars' mean; median of ${runs} pairs`);
      removeFloor();
    }
  }

  if (flags.archive > 0) {
    // The archive view over many small sessions (issue 29 item 7): its memory must stay flat in
    // their number, its time near a bare estimate's over the same tree.
    const dir = join(work, `small-${flags.archive}`);
    log(`corpus: ${flags.archive} small sessions`);
    await cachedCorpus(dir, `small ${flags.archive} seed 7`, (target) => generateSmallSessions(target, flags.archive));
    const list = listSessions(dir);
    const corpus = `${flags.archive} small canonical sessions, ${label(list.bytes)}`;
    const estimate = { label: 'estimate, same tree', command: process.execPath, args: [BIN, 'estimate', dir] };
    addYardstick(corpus, 'estimate (text)', estimate, 'the archive yardstick');
    for (const json of [false, true]) {
      const name = `inspect${json ? ' --json' : ''} (archive view)`;
      log(`${corpus}: ${name}`);
      addRow(corpus, name, measure(...compactor(['inspect', ...(json ? ['--json'] : []), dir]), { runs: flags.runs, scratch, pairs: [estimate] }), 'the ranked table and roll-ups, no per-session report');
    }
  }

  if (flags.single > 0) {
    for (const kind of flags.kinds) {
      const dir = join(work, `single-${kind}-${flags.single}`);
      log(`corpus: one ${kind} session of ${label(flags.single)}`);
      await cachedCorpus(dir, `single ${kind} ${flags.single} seed 3`, (target) => generateCorpus(target, kind, flags.single, { seed: 3, single: true }));
      const list = fileList(dir);
      const corpus = `one ${kind} session of ${label(list.bytes)}`;
      // Read in pieces, as the rows read: a whole-file Buffer of 1 GB moved the yardstick by
      // a third from run to run while the rows held still.
      const one = bareLoop(list, 1, 'bare loop, 1 core, 1 MiB pieces', true);
      addYardstick(corpus, 'bare loop (1 core, 1 MiB pieces)', one, 'the yardstick');
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
          // As many runs as any other row: a single pair took its ratio from one run of the
          // yardstick, whose wall over a 1 GB Buffer varied by a quarter from run to run.
          addRow(corpus, name, measure(...compactor(args), { runs: flags.runs, scratch, pairs: [one] }), `median of ${flags.runs} pairs`);
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
    addRow(`${sessions} sessions, server delays 1 s`, `compact --strategy summarize --concurrency ${concurrency}`, result, note);
  }

  settleYardsticks();
  results.machine += ` Load average ${loadavg()[0].toFixed(2)} at the end.`;
  results.date = new Date().toISOString();
  const compared = flags.compare ? comparison(resolve(flags.compare)) : null;
  const table = tableText(results.machine) + (compared ? `\n${compared.text}` : '');
  const summary = `${results.machine}\n\n${targetSummary(compared)}`;
  process.stdout.write(`\n${table}`);
  process.stdout.write(`\n${summary}`);
  for (const path of flags.writeDoc?.split(',') ?? []) writeDoc(resolve(path), { table, summary });
  if (flags.out) writeFileSync(flags.out, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  if (!keep) rmSync(work, { recursive: true, force: true });
  else log(`corpora kept in ${work}`);
}
