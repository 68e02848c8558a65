/**
 * opencode, read from what the real opencode wrote (tools/agents/make-fixtures.js): 1.18.33 in
 * its SQLite database (fixtures/agents/opencode/, the database as opencode left it: a 4 KB main
 * file with every row in `-wal`), 1.1.65 in its JSON storage (fixtures/agents/opencode-json/).
 * Each session's spend equals what the scripted provider billed while it ran (the manifest) and
 * a count by hand of the `step-finish` parts; the database is read without changing a byte of
 * it, its `-wal` or its `-shm` while another connection holds it open and writes, and what only
 * the WAL holds is read; a session is named `<store>#<id>`, its sidecar sits beside the store,
 * and `fork` says in one line that it does not write opencode's database.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { opencodeDataDir } from '../../src/formats/opencode-location.js';
import type { OpencodeMessageRows } from '../../src/formats/opencode-messages.js';
import { opencodeSession } from '../../src/formats/opencode-messages.js';
import { opencodeSessions, stepUsage } from '../../tools/agents/opencode-db.js';
import type { Manifest, Spend } from '../helpers/agent-fixtures.js';
import { AGENT_FIXTURES, expectedSpend } from '../helpers/agent-fixtures.js';
import { runCli, sessionRecords } from '../helpers/cli.js';

const DB_FIXTURE = join(AGENT_FIXTURES, 'opencode', 'tools-compact');
const JSON_FIXTURE = join(AGENT_FIXTURES, 'opencode-json', 'tools-compact');
const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;

const scratch: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-opencode-'));
  scratch.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

type Counted = Omit<Spend, 'prompt' | 'cacheWrite1h'>;

/** An `inspect --json` spend ledger as the manifest counts it (`input` without the cached parts). */
function fromLedger(ledger: Record<string, number>): Counted {
  const cacheRead = ledger['cache_read_input_tokens']!;
  const cacheWrite = ledger['cache_creation_input_tokens']!;
  return { requests: ledger['requests']!, input: ledger['input_tokens']! - cacheRead - cacheWrite, cacheRead, cacheWrite, output: ledger['output_tokens']! };
}

const counted = ({ prompt: _prompt, cacheWrite1h: _hour, ...rest }: Spend): Counted => rest;

/**
 * A count by hand, from opencode's rows (tools/agents/opencode-db.js, not our reader): one call
 * per `step-finish` part, its tokens as recorded, reasoning billed once as output (stepUsage).
 */
function spendByHand(dataDir: string): Map<string, Counted> {
  const out = new Map<string, Counted>();
  for (const session of opencodeSessions(dataDir)) {
    const total = { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
    for (const { tokens } of session.steps) {
      const usage = stepUsage(tokens);
      total.requests++;
      total.input += usage.input;
      total.cacheRead += usage.cacheRead;
      total.cacheWrite += usage.cacheWrite;
      total.output += usage.output;
    }
    out.set(session.address, total);
  }
  return out;
}

describe.each([
  ['the SQLite database (opencode 1.18.33)', DB_FIXTURE, 'opencode'],
  ['the JSON storage (opencode 1.1.65)', JSON_FIXTURE, 'opencode-json'],
])('%s', (_name, dir, format) => {
  const manifest = manifestOf(dir);

  it('was written by the real opencode, with several calls, tool calls and one compaction', () => {
    expect(manifest.package).toMatch(format === 'opencode' ? /^opencode-ai@1\.18\.33$/ : /^opencode-ai-json@npm:opencode-ai@1\.1\.65$/);
    const sessions = (manifest as Manifest & { sessions: { address: string; structures: string[] }[] }).sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.structures).toEqual(expect.arrayContaining(['compaction', 'parallel-tool-calls', 'several-turns']));
  });

  it("each session's spend, read by walking the fixture, is what the provider billed while it ran, and a count by hand", async () => {
    const result = await runCli(['inspect', '--json', dir]);
    expect(result.exitCode, result.stderr).toBe(0);
    const records = sessionRecords(result.stdout);
    const { perFile } = expectedSpend(manifest);
    expect(records.map((record) => relative(dir, record['session'] as string))).toEqual(Object.keys(perFile));
    const byHand = spendByHand(dir);
    for (const record of records) {
      expect(record['format']).toBe(format);
      const address = relative(dir, record['session'] as string);
      expect(fromLedger(record['spend']), address).toEqual(counted(perFile[address]!));
      expect(fromLedger(record['spend']), address).toEqual(byHand.get(address));
    }
  });

  it("reads opencode's compaction: its summary call is spend only, the model reads the summary after it", async () => {
    const [address] = Object.keys(expectedSpend(manifest).perFile);
    const session = await readSession(join(dir, address!));
    expect(session.offContext.map((call) => call.cause)).toEqual(['compaction']);
    expect(session.recordedCompactions).toHaveLength(1);
    const [compaction] = session.recordedCompactions;
    const prompt = session.messages[compaction!.atIndex]!;
    expect(prompt.content).toEqual([{ type: 'text', text: 'What did we do so far?' }]);
    const summary = session.messages[compaction!.atIndex + 1]!;
    expect([summary.role, summary.rendered]).toEqual(['assistant', true]);
    expect(compaction!.summary).toContain('Summary: listed the files');
    // Tool calls and their results pair up; the first call's two run at once.
    const first = session.messages.find((message) => message.role === 'assistant')!;
    expect(first.content.filter((block) => block.type === 'tool_request').map((block) => (block.type === 'tool_request' ? block.name : ''))).toEqual(['bash', 'read']);
    expect(session.warnings).toEqual([]);
  });
});

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const digests = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((name) => [name, sha(join(dir, name))]));

describe('the database is read without changing it, while it is open and written', () => {
  const address = () => Object.keys(expectedSpend(manifestOf(DB_FIXTURE)).perFile)[0]!;

  it('as opencode left it, its last prompt is only in the WAL, and read from there', async () => {
    // The main file alone (a copy without -wal) lacks the messages opencode wrote since its last checkpoint.
    const dir = tempDir();
    copyFileSync(join(DB_FIXTURE, 'opencode.db'), join(dir, 'opencode.db'));
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const alone = new Database(join(dir, 'opencode.db'), { readonly: true });
    const inMainFile = (alone.prepare('SELECT count(*) AS n FROM message').get() as { n: number }).n;
    alone.close();
    const session = await readSession(join(DB_FIXTURE, address()));
    const read = new Set(session.messages.map((message) => message.id.split(':')[0]));
    expect(read.size).toBeGreaterThan(inMainFile);
    expect(session.messages.at(-1)!.content).toEqual([{ type: 'text', text: 'Next, change app.py to print 2.' }]);
  });

  it('a writer holds it open and commits a call into the WAL: we read that call, and no byte of db, -wal or -shm changes', async () => {
    const dir = tempDir();
    for (const name of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) copyFileSync(join(DB_FIXTURE, name), join(dir, name));
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const writer = new Database(join(dir, 'opencode.db'));
    try {
      expect(writer.pragma('journal_mode', { simple: true })).toBe('wal');
      writer.pragma('wal_autocheckpoint = 0'); // the new rows stay in the WAL
      const session = address().split('#')[1]!;
      const last = writer.prepare('SELECT max(time_created) AS t FROM message WHERE session_id = ?').get(session) as { t: number };
      const time = last.t + 1000;
      writer.prepare('INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)').run('msg_zzzzzzzzzzzzwalonly', session, time, time,
        JSON.stringify({ role: 'assistant', parentID: 'x', modelID: 'claude-sonnet-4-5', providerID: 'scripted', time: { created: time }, tokens: { total: 7777 + 11, input: 7777, output: 11, reasoning: 0, cache: { read: 0, write: 0 } }, finish: 'stop' }));
      writer.prepare('INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)').run('prt_zzzzzzzzzzzzwalonly', 'msg_zzzzzzzzzzzzwalonly', session, time, time, JSON.stringify({ type: 'text', text: 'Written while the database was open.' }));
      const before = digests(dir);
      const result = await runCli(['inspect', '--json', join(dir, 'opencode.db')]);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(digests(dir)).toEqual(before);
      const [record] = sessionRecords(result.stdout);
      const expected = counted(expectedSpend(manifestOf(DB_FIXTURE)).perFile[address()]!);
      expect(fromLedger(record!['spend'])).toEqual({ ...expected, requests: expected.requests + 1, input: expected.input + 7777, output: expected.output + 11 });
    } finally {
      writer.close();
    }
  });

  it('a -wal without its -shm is read from a private copy: no -shm appears beside it', async () => {
    const dir = tempDir();
    for (const name of ['opencode.db', 'opencode.db-wal']) copyFileSync(join(DB_FIXTURE, name), join(dir, name));
    const before = digests(dir);
    const result = await runCli(['inspect', '--json', join(dir, 'opencode.db')]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(digests(dir)).toEqual(before);
    expect(fromLedger(sessionRecords(result.stdout)[0]!['spend'])).toEqual(counted(expectedSpend(manifestOf(DB_FIXTURE)).perFile[address()]!));
  });
});

describe('sessions named in a store', () => {
  it('one session by its address; an address of no session is one line naming it', async () => {
    const address = join(DB_FIXTURE, Object.keys(expectedSpend(manifestOf(DB_FIXTURE)).perFile)[0]!);
    const one = await runCli(['inspect', '--json', address]);
    expect(one.exitCode).toBe(0);
    expect(sessionRecords(one.stdout).map((record) => record['session'])).toEqual([address]);
    const missing = await runCli(['inspect', `${join(DB_FIXTURE, 'opencode.db')}#ses_none`]);
    expect(missing.stderr).toBe(`compactor: error: ${join(DB_FIXTURE, 'opencode.db')}#ses_none: no session ses_none in this opencode database`);
    expect(missing.exitCode).toBe(1);
  });

  it('a data folder whose JSON storage was copied into its database (opencode 1.2 to 1.17) reads each session once, from the database', async () => {
    const dir = tempDir();
    cpSync(join(JSON_FIXTURE, 'storage'), join(dir, 'storage'), { recursive: true });
    for (const name of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) copyFileSync(join(DB_FIXTURE, name), join(dir, name));
    const migrated = Object.keys(expectedSpend(manifestOf(JSON_FIXTURE)).perFile)[0]!.split('#')[1]!;
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const writer = new Database(join(dir, 'opencode.db'));
    writer.pragma('foreign_keys = OFF');
    const own = (writer.prepare('SELECT id FROM session').get() as { id: string }).id;
    for (const table of ['message', 'part']) writer.prepare(`UPDATE ${table} SET session_id = ? WHERE session_id = ?`).run(migrated, own);
    writer.prepare('UPDATE session SET id = ? WHERE id = ?').run(migrated, own);
    writer.close();
    const result = await runCli(['inspect', '--json', dir]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(sessionRecords(result.stdout).map((record) => record['session'])).toEqual([join(dir, `opencode.db#${migrated}`)]);
    expect(result.stderr).toContain(`${join(dir, 'storage')}: 1 opencode session also in opencode's database beside it, read from the database`);
  });

  it('a storage session file stands for its address', async () => {
    const files = readdirSync(join(JSON_FIXTURE, 'storage', 'session', 'global'));
    const result = await runCli(['inspect', '--json', join(JSON_FIXTURE, 'storage', 'session', 'global', files[0]!)]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(sessionRecords(result.stdout).map((record) => record['session'])).toEqual([join(JSON_FIXTURE, 'storage') + '#' + files[0]!.slice(0, -5)]);
  });

  it('compact writes the sidecar beside the database, which stays as it was; context reads it; fork refuses in one line', async () => {
    const dir = tempDir();
    cpSync(DB_FIXTURE, dir, { recursive: true });
    const before = digests(dir);
    const compact = await runCli(['compact', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '100', join(dir, 'opencode.db')]);
    expect(compact.exitCode, compact.stderr).toBe(0);
    const address = join(dir, Object.keys(expectedSpend(manifestOf(DB_FIXTURE)).perFile)[0]!);
    expect(existsSync(`${address}_compaction.json`)).toBe(true);
    const after = digests(dir);
    delete after[`${address.split('/').pop()}_compaction.json`];
    expect(after).toEqual(before);
    const context = await runCli(['context', address]);
    expect(context.exitCode, context.stderr).toBe(0);
    const fork = await runCli(['fork', '--strategy', 'truncate', address]);
    expect(fork.exitCode).toBe(1);
    expect(fork.stderr).toBe(`compactor: error: ${address}: cannot fork: opencode keeps its sessions in its own database, which compactor never writes; \`compactor context\` prints the compacted view`);
    expect(digests(dir)).toEqual({ ...before, [`${address.split('/').pop()}_compaction.json`]: sha(`${address}_compaction.json`) });
  });

  it("opencode's data folder: $XDG_DATA_HOME/opencode, else ~/.local/share/opencode", () => {
    expect(opencodeDataDir({ XDG_DATA_HOME: '/x/data' }, '/home/u')).toBe('/x/data/opencode');
    expect(opencodeDataDir({}, '/home/u')).toBe('/home/u/.local/share/opencode');
    expect(opencodeDataDir({ XDG_DATA_HOME: '' }, '/home/u')).toBe('/home/u/.local/share/opencode');
  });
});

describe('bad input', () => {
  it('a SQLite database that is not opencode’s is one line', async () => {
    const dir = tempDir();
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const other = new Database(join(dir, 'other.db'));
    other.exec('CREATE TABLE t (x)');
    other.close();
    const result = await runCli(['inspect', join(dir, 'other.db')]);
    expect(result.stderr).toBe(`compactor: error: ${join(dir, 'other.db')}: a SQLite database, but not opencode's: no session, message, part tables`);
    expect(result.exitCode).toBe(1);
  });

  it('a row whose data is no JSON names the row', async () => {
    const dir = tempDir();
    for (const name of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) copyFileSync(join(DB_FIXTURE, name), join(dir, name));
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const writer = new Database(join(dir, 'opencode.db'));
    const part = writer.prepare('SELECT id FROM part ORDER BY id LIMIT 1').get() as { id: string };
    writer.prepare("UPDATE part SET data = '{not json' WHERE id = ?").run(part.id);
    writer.close();
    const result = await runCli(['inspect', join(dir, 'opencode.db')]);
    expect(result.stderr).toMatch(new RegExp(`^compactor: error: .*opencode\\.db#ses_\\w+: part ${part.id}: data is not valid JSON \\(`));
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe("opencode's rows, as opencode sends them back (opencodeSession on rows made by hand)", () => {
  const tokens = (input: number, output: number, extra: Record<string, unknown> = {}) => ({ input, output, reasoning: 0, cache: { read: 0, write: 0 }, ...extra });
  const user = (id: string, parts: unknown[]) => ({ id, info: { role: 'user', time: { created: 1 } }, parts });
  const assistant = (id: string, parts: unknown[], info: Record<string, unknown> = {}) => ({ id, info: { role: 'assistant', time: { created: 2 }, modelID: 'm', finish: 'stop', ...info }, parts });
  const tool = (callID: string, state: Record<string, unknown>) => ({ type: 'tool', tool: 'bash', callID, state: { input: { command: 'ls' }, ...state } });
  const read = (rows: OpencodeMessageRows[]) => opencodeSession({ path: 's.db#ses_x', format: 'opencode' }, rows);

  it('a message of two steps is two calls, each with its step-finish tokens and its tool results', () => {
    const session = read([
      user('u1', [{ type: 'text', text: 'hi' }, { type: 'text', text: 'hidden', ignored: true }]),
      assistant('a1', [
        { type: 'step-start' },
        tool('c1', { status: 'completed', output: 'one' }),
        { type: 'step-finish', tokens: tokens(100, 10) },
        { type: 'step-start' },
        { type: 'text', text: 'done' },
        { type: 'step-finish', tokens: tokens(120, 5) },
      ]),
    ]);
    expect(session.messages.map((message) => [message.id, message.role, message.usage?.input ?? null])).toEqual([
      ['u1', 'user', null],
      ['a1', 'assistant', 100],
      ['a1:results', 'user', null],
      ['a1:1', 'assistant', 120],
    ]);
    expect(session.messages[0]!.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('tool results as opencode renders each state: pruned, failed, left pending', () => {
    const session = read([
      user('u1', [{ type: 'text', text: 'go' }]),
      assistant('a1', [
        tool('c1', { status: 'completed', output: 'long output', time: { start: 1, end: 2, compacted: 3 } }),
        tool('c2', { status: 'error', error: 'boom' }),
        tool('c3', { status: 'running' }),
        { type: 'step-finish', tokens: tokens(10, 1) },
      ]),
    ]);
    expect(session.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_request_id: 'c1', output: '[Old tool result content cleared]', is_error: false },
      { type: 'tool_result', tool_request_id: 'c2', output: 'boom', is_error: true },
      { type: 'tool_result', tool_request_id: 'c3', output: '[Tool execution was interrupted]', is_error: true },
    ]);
  });

  it('an errored reply is not sent again: its usage is spend only; an aborted one that wrote text stays', () => {
    const session = read([
      user('u1', [{ type: 'text', text: 'go' }]),
      assistant('a1', [{ type: 'step-start' }, { type: 'step-finish', tokens: tokens(50, 0) }], { error: { name: 'APIError' } }),
      assistant('a2', [{ type: 'text', text: 'partial' }], { error: { name: 'MessageAbortedError' }, tokens: tokens(60, 2) }),
    ]);
    expect(session.offContext.map((call) => [call.cause, call.usage.input])).toEqual([['aborted', 50]]);
    expect(session.messages.map((message) => [message.id, message.usage?.input])).toEqual([
      ['u1', undefined],
      ['a2', 60],
    ]);
  });

  it('reasoning is billed once: beside output in 1.18 (total adds it), inside it in 1.1 (total leaves it out)', () => {
    const usage = (step: Record<string, unknown>) => read([user('u', [{ type: 'text', text: 'x' }]), assistant('a', [{ type: 'text', text: 'y' }, { type: 'step-finish', tokens: step }])]).messages[1]!.usage;
    expect(usage({ total: 140, input: 100, output: 30, reasoning: 10, cache: { read: 0, write: 0 } })!.output).toBe(40);
    expect(usage({ total: 130, input: 100, output: 30, reasoning: 10, cache: { read: 0, write: 0 } })!.output).toBe(30);
  });

  it('a compaction that kept a tail: the model sees from the tail on, the summary after the compaction prompt', () => {
    const session = read([
      user('u1', [{ type: 'text', text: 'first' }]),
      assistant('a1', [{ type: 'text', text: 'one' }, { type: 'step-finish', tokens: tokens(10, 1) }]),
      user('u2', [{ type: 'text', text: 'second' }]),
      assistant('a2', [{ type: 'text', text: 'two' }, { type: 'step-finish', tokens: tokens(20, 1) }]),
      user('c', [{ type: 'compaction', auto: true, tail_start_id: 'u2' }]),
      assistant('s', [{ type: 'text', text: 'the summary' }, { type: 'step-finish', tokens: tokens(30, 5) }], { summary: true, parentID: 'c' }),
    ]);
    expect(session.recordedCompactions).toEqual([{ atIndex: 4, firstKeptIndex: 2, summary: 'the summary', line: 5 }]);
    expect(session.offContext.map((call) => [call.cause, call.usage.input])).toEqual([['compaction', 30]]);
    expect(session.messages.at(-1)).toMatchObject({ id: 's', role: 'assistant', rendered: true, content: [{ type: 'text', text: 'the summary' }] });
  });
});
