#!/usr/bin/env node
/**
 * `npm run demo`: what compactor is for, in a screen or two, on the bundled fixtures (in a
 * scratch copy, so the repository is never written): where one long session's tokens went,
 * what compaction policies would have saved, one compaction and its view, then a sweep over
 * every fixture. Each command's output is the CLI's own; a long one is cut after its first
 * lines and says how many it left out, and warnings on stderr are counted, not shown (the
 * fixtures include odd files on purpose).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'compactor.js');
const scratch = mkdtempSync(join(tmpdir(), 'compactor-demo-'));
cpSync(join(root, 'fixtures'), scratch, { recursive: true });

/** Runs the CLI in the scratch copy; fails the demo on an unexpected exit. */
function compactor(args) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: scratch, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (result.status !== 0) throw new Error(`compactor ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return result;
}

const plural = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`;

function warningsNote(stderr) {
  const warnings = stderr.split('\n').filter((line) => line.startsWith('compactor: warning:')).length;
  return warnings === 0 ? '' : `  (${plural(warnings, 'warning')} on stderr about the fixtures' odd lines, not shown)\n`;
}

/**
 * The command and the parts of its output named by `keep` (line ranges, from and to, 0-based,
 * end excluded), with a note for each part left out; lines cut to `width` columns (with `…`).
 */
function show(title, args, { keep = [[0, Infinity]], width = Infinity, display = `compactor ${args.join(' ')}` } = {}) {
  const { stdout, stderr } = compactor(args);
  const out = stdout.trimEnd().split('\n');
  const fit = (line) => (line.length > width ? `${line.slice(0, width - 1)}…` : line);
  const left = (count) => `  … ${plural(count, 'line')} left out (run it to see them)`;
  const shown = [];
  let at = 0;
  for (const [from, to] of keep) {
    if (from > at) shown.push(left(from - at));
    shown.push(...out.slice(from, Math.min(to, out.length)).map(fit));
    at = Math.min(to, out.length);
  }
  if (out.length > at) shown.push(left(out.length - at));
  process.stdout.write(`\n# ${title}\n$ ${display}\n${shown.join('\n')}\n${warningsNote(stderr)}`);
}

try {
  process.stdout.write(
    "compactor reads coding agents' session files (Claude Code, Codex, pi, opencode,\n" +
      'Gemini CLI…), counts the tokens and dollars each call re-sent, and compacts long\n' +
      'sessions offline into a sidecar file beside them (the session is never changed).\n',
  );
  show("Where one long session's tokens went: each turn re-sends the context", ['inspect', 'bug.jsonl'], { keep: [[0, 19]] });
  show('What compaction policies would have saved, replayed over its 58 calls', ['replay', '--policy', 'custom,pi,codex', '--context-limit', '80000', 'bug.jsonl'], {
    keep: [[0, 3], [18, 25], [31, 36]],
  });
  show('Compact it (truncate: offline, no model needed)', ['compact', '--strategy', 'truncate', '--context-limit', '80000', 'bug.jsonl'], { keep: [[0, 1]] });
  show('The view an agent now sends: the summary first, then the kept messages', ['context', 'bug.jsonl'], {
    keep: [[0, 2]],
    width: 78,
    display: 'compactor context bug.jsonl   (lines cut to 78 columns)',
  });

  // Every fixture at once: the records, summed up (`compactor compact .` prints one line each).
  const sweep = ['compact', '--strategy', 'truncate', '--context-limit', '80000', '--json', '.'];
  const { stdout, stderr } = compactor(sweep);
  const records = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)).filter((record) => 'status' in record);
  const counts = new Map();
  for (const record of records) counts.set(record.status, (counts.get(record.status) ?? 0) + 1);
  process.stdout.write(`\n# Every fixture at once\n$ compactor ${sweep.filter((arg) => arg !== '--json').join(' ')}\n`);
  process.stdout.write(`${plural(records.length, 'session')}: ${[...counts].map(([status, count]) => `${count} ${status}`).join(', ')}\n`);
  for (const record of records.filter((entry) => entry.status === 'compacted')) {
    process.stdout.write(`  compacted  ${record.session.length > 38 ? `…${record.session.slice(-37)}` : record.session}: ${record.tokens_before.toLocaleString('en-US')} -> ${record.tokens_after.toLocaleString('en-US')} tokens\n`);
  }
  process.stdout.write(warningsNote(stderr));
  process.stdout.write('\nMore: compactor --help, README.md.\n');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
