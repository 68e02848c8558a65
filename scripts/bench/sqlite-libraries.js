#!/usr/bin/env node
/**
 * Which SQLite library reads opencode's database (docs/formats.md "opencode"): a synthetic
 * database in opencode's shape (sessions, messages, parts with JSON `data`) is read by each
 * candidate the way the reader reads it, every part's `data` parsed, and timed against a
 * yardstick in the same run: the same rows as JSON lines, read and parsed by a bare loop. Each
 * library runs --runs times, each run just after a yardstick run; its ratio is the median of
 * the pairs' ratios. A second copy keeps its newest rows in `-wal`, as opencode leaves it, and
 * each library says how many of them it sees. Not a test: nothing passes or fails.
 *
 *   node scripts/bench/sqlite-libraries.js [--sessions 200] [--messages 40] [--runs 5]
 *
 * Run `npm run build` first (better-sqlite3 is opened as the reader opens it, from dist/).
 * better-sqlite3 is the package's optional dependency; sql.js and node-sqlite3-wasm (both
 * WebAssembly) are dev dependencies, here for this comparison only.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withReadOnlyDatabase } from '../../dist/formats/sqlite-read-only.js';

const require = createRequire(import.meta.url);
process.env.SQLITE_USE_URI = '1';
const BetterSqlite3 = require('better-sqlite3');

function flags(argv) {
  const out = { sessions: 200, messages: 40, runs: 5 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]?.replace(/^--/, '');
    if (!(name in out) || argv[i + 1] === undefined) throw new Error(`unknown argument ${argv[i]} (see the header of scripts/bench/sqlite-libraries.js)`);
    out[name] = Number(argv[i + 1]);
  }
  return out;
}

const SCHEMA = `
  CREATE TABLE session (id text PRIMARY KEY, directory text NOT NULL, time_created integer NOT NULL);
  CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, data text NOT NULL);
  CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, data text NOT NULL);
  CREATE INDEX part_session_idx ON part (session_id);`;

/** A part's data as opencode writes one: text, a tool call with its output, a step's tokens. */
function partData(index) {
  if (index % 4 === 0) return { type: 'text', text: `Some reply text ${'lorem ipsum '.repeat(20)}` };
  if (index % 4 === 1) return { type: 'tool', tool: 'read', callID: `call_${index}`, state: { status: 'completed', input: { filePath: '/p/a.ts' }, output: 'x'.repeat(1500) } };
  if (index % 4 === 2) return { type: 'step-start' };
  return { type: 'step-finish', reason: 'stop', tokens: { total: 1000, input: 900, output: 50, reasoning: 0, cache: { read: 50, write: 0 } }, cost: 0 };
}

/** Writes the database (WAL mode), the yardstick's JSON lines; returns how many parts. */
function build(dir, { sessions, messages }) {
  const db = new BetterSqlite3(join(dir, 'opencode.db'));
  db.pragma('journal_mode = WAL');
  db.exec(SCHEMA);
  const lines = [];
  let parts = 0;
  const insert = db.transaction(() => {
    for (let s = 0; s < sessions; s++) {
      const session = `ses_${String(s).padStart(6, '0')}`;
      db.prepare('INSERT INTO session VALUES (?, ?, ?)').run(session, '/p', s);
      for (let m = 0; m < messages; m++) {
        const message = `msg_${session}_${String(m).padStart(4, '0')}`;
        const info = JSON.stringify({ role: m % 2 ? 'assistant' : 'user', time: { created: m }, modelID: 'm' });
        db.prepare('INSERT INTO message VALUES (?, ?, ?, ?)').run(message, session, m, info);
        for (let p = 0; p < 4; p++) {
          const data = JSON.stringify(partData(p));
          db.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?)').run(`prt_${message}_${p}`, message, session, p, data);
          lines.push(data);
          parts++;
        }
      }
    }
  });
  insert();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  // The timed copy is a rollback-journal database: the only form both WebAssembly builds open.
  copyFileSync(join(dir, 'opencode.db'), join(dir, 'plain.db'));
  const plain = new BetterSqlite3(join(dir, 'plain.db'));
  plain.pragma('journal_mode = DELETE');
  plain.close();
  writeFileSync(join(dir, 'parts.jsonl'), `${lines.join('\n')}\n`);
  return parts;
}

/** A copy whose last 1,000 parts are only in its WAL (a writer kept open, never checkpointing). */
function walHeldCopy(dir) {
  const wal = join(dir, 'wal');
  rmSync(wal, { recursive: true, force: true });
  require('node:fs').mkdirSync(wal);
  copyFileSync(join(dir, 'opencode.db'), join(wal, 'opencode.db'));
  const writer = new BetterSqlite3(join(wal, 'opencode.db'));
  writer.pragma('wal_autocheckpoint = 0');
  writer.transaction(() => {
    for (let i = 0; i < 1000; i++) writer.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?)').run(`prt_wal_${i}`, 'msg_wal', 'ses_wal', i, '{"type":"step-start"}');
  })();
  return { path: join(wal, 'opencode.db'), writer };
}

const SQL = 'SELECT data FROM part ORDER BY session_id, message_id, id';

/** Each reader: parses every part's data, returns how many rows it read. */
const READERS = {
  yardstick: async (dir) => {
    let rows = 0;
    for (const line of readFileSync(join(dir, 'parts.jsonl'), 'utf8').split('\n')) if (line) (JSON.parse(line), rows++);
    return rows;
  },
  // As the reader opens it (src/formats/sqlite-read-only.ts: read-only, read-only WAL index).
  'better-sqlite3': async (_dir, path) =>
    withReadOnlyDatabase(path, (db) => {
      let rows = 0;
      for (const row of db.prepare(SQL).iterate()) (JSON.parse(row.data), rows++);
      return rows;
    }),
  'sql.js': async (_dir, path) => {
    const SqlJs = await require('sql.js')();
    const db = new SqlJs.Database(readFileSync(path));
    let rows = 0;
    try {
      const statement = db.prepare(SQL);
      while (statement.step()) (JSON.parse(statement.get()[0]), rows++);
      statement.free();
    } catch {
      // an image without the WAL's rows: no part table at all
    }
    db.close();
    return rows;
  },
  'node-sqlite3-wasm': async (_dir, path) => {
    const { Database } = require('node-sqlite3-wasm');
    let db;
    try {
      db = new Database(path, { readOnly: true });
    } catch (error) {
      return `cannot open (${error.message})`;
    }
    try {
      let rows = 0;
      for (const row of db.all(SQL)) (JSON.parse(row.data), rows++);
      return rows;
    } catch (error) {
      return `cannot read (${error.message})`;
    } finally {
      db.close();
    }
  },
};

async function timed(read, dir, path) {
  const start = process.hrtime.bigint();
  const rows = await read(dir, path);
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, rows };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const options = flags(process.argv.slice(2));
const dir = mkdtempSync(join(tmpdir(), 'compactor-sqlite-bench-'));
try {
  const parts = build(dir, options);
  const db = join(dir, 'plain.db');
  const held = walHeldCopy(dir);
  const rows = [];
  for (const [name, read] of Object.entries(READERS)) {
    if (name === 'yardstick') continue;
    const ratios = [];
    const times = [];
    for (let run = 0; run < options.runs; run++) {
      const yard = await timed(READERS.yardstick, dir, db);
      const ours = await timed(read, dir, db);
      ratios.push(ours.ms / yard.ms);
      times.push(ours.ms);
    }
    const walRows = await read(dir, held.path).catch((error) => `cannot read (${error.message})`);
    rows.push(`| ${name} | ${median(times).toFixed(0)} | ${median(ratios).toFixed(2)}× | ${typeof walRows === 'number' ? `${walRows.toLocaleString('en-US')} of ${(parts + 1000).toLocaleString('en-US')}` : walRows} |`);
  }
  held.writer.close();
  const size = (statSync(db).size / 1e6).toFixed(1);
  process.stdout.write(
    [
      `${options.sessions} sessions, ${(options.sessions * options.messages).toLocaleString('en-US')} messages, ${parts.toLocaleString('en-US')} parts, ${size} MB; median of ${options.runs} runs; load ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
      '',
      '| library | ms (rollback-journal copy) | / yardstick | parts read from the WAL-mode copy with 1,000 in -wal |',
      '|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
