/**
 * The bad-input corpus (test/corpus/make-bad-inputs.ts) through the reader and through every
 * command: each kind gives its documented one-line warning or error naming file and line, no
 * stack trace, and `--strict` turns the warnings into failures.
 */
import { mkdir, mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSession } from '../../src/read/index.js';
import { InputError } from '../../src/errors.js';
import { readSession } from '../../src/formats/index.js';
import type { BadInput, Corpus } from '../corpus/make-bad-inputs.js';
import { goodLines, makeBadInputs } from '../corpus/make-bad-inputs.js';
import { asPermissionChecked, jsonLines, runCli } from '../helpers/cli.js';
import { makeFifo } from '../helpers/fifo.js';

let root: string;
let corpus: Corpus;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'compactor-corpus-'));
  corpus = await makeBadInputs(root);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** `file:line: message` as the CLI prints it. */
function located(file: string, line: number | undefined, message: string): string {
  return line === undefined ? `${file}: ${message}` : `${file}:${line}: ${message}`;
}

/** Every stderr line is one `compactor: …` line; nothing looks like a stack trace. */
function expectOneLineDiagnostics(stderr: string): void {
  const lines = stderr.split('\n').filter((line) => line !== '');
  for (const line of lines) expect(line).toMatch(/^compactor: (warning|error): \S/);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('Error:');
}

/** Every corpus session named on the command line: a named file is always read (a walk may skip some). */
function allSessions(): string[] {
  return corpus.sessions.map((entry) => entry.path);
}

function casesWith(outcome: BadInput['outcome']): BadInput[] {
  return corpus.sessions.filter((entry) => entry.outcome === outcome);
}

describe('the reader over the corpus', () => {
  it('covers every kind the issue lists', () => {
    const names = corpus.sessions.map((entry) => entry.name).concat(corpus.sidecars.map((entry) => entry.name));
    for (const kind of ['empty', 'whitespace', 'bom', 'crlf', 'truncated-last-line', 'invalid-utf8', 'binary', 'not-object', 'unknown-role', 'unknown-block-type', 'missing-id', 'duplicate-id', 'orphan-tool-result', 'call-without-result', 'duplicate-call-id', 'numbers-as-strings', 'negative-usage', 'nan-usage', 'dangling', 'corrupt', 'newer', 'foreign']) {
      expect(names).toContain(`${kind}.jsonl`);
    }
  });

  it('reads clean files without a warning', async () => {
    for (const entry of casesWith('ok')) {
      const session = await readSession(entry.path);
      expect(session.warnings, entry.name).toEqual([]);
      expect(session.messages.length, entry.name).toBeGreaterThan(0);
    }
  });

  it('gives each warning case its warning, on its line, and still reads the session', async () => {
    for (const entry of casesWith('warning')) {
      const session = await readSession(entry.path);
      const first = session.warnings[0];
      expect(first, entry.name).toBeDefined();
      expect(first!.file, entry.name).toBe(entry.path);
      expect(first!.line, entry.name).toBe(entry.line);
      expect(first!.message, entry.name).toMatch(entry.message!);
      expect(session.messages.length, entry.name).toBeGreaterThan(0);
    }
  });

  it('fails each error case with an InputError naming file and line', async () => {
    for (const entry of casesWith('error')) {
      const error = await readSession(entry.path).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error, entry.name).toBeInstanceOf(InputError);
      const inputError = error as InputError;
      expect(inputError.file, entry.name).toBe(entry.path);
      expect(inputError.line, entry.name).toBe(entry.line);
      expect(inputError.message, entry.name).toMatch(entry.message!);
    }
  });

  it('repairs what it warns about: BOM, CRLF, ids, string numbers, bad usage', async () => {
    const byName = (name: string) => corpus.sessions.find((entry) => entry.name === name)!.path;
    const clean = await readSession(byName('good.jsonl'));
    for (const name of ['bom.jsonl', 'crlf.jsonl']) expect((await readSession(byName(name))).messages.map((m) => m.content)).toEqual(clean.messages.map((m) => m.content));
    expect((await readSession(byName('missing-id.jsonl'))).messages[4]!.id).toBe('line-5');
    expect((await readSession(byName('duplicate-id.jsonl'))).messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3', 'm4', 'm1@line-5', 'm6']);
    expect((await readSession(byName('numbers-as-strings.jsonl'))).messages[3]!.usage).toEqual({ input: 1260, output: 12, cacheRead: 0, cacheWrite: 0 });
    // The negative input is dropped; the output count still stands.
    expect((await readSession(byName('negative-usage.jsonl'))).messages[3]!.usage).toEqual({ input: 0, output: 12, cacheRead: 0, cacheWrite: 0 });
    expect((await readSession(byName('unknown-role.jsonl'))).messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect((await readSession(byName('unknown-block-type.jsonl'))).messages[4]!.content).toEqual([{ type: 'text', text: 'Read main.rs' }]);
    expect((await readSession(byName('truncated-last-line.jsonl'))).messages).toHaveLength(6);
    const utf8 = await readSession(byName('invalid-utf8.jsonl'));
    expect(utf8.messages[1]!.content).toEqual([{ type: 'text', text: 'caf\uFFFD(\uFFFD' }]);
  });

  it('under --strict, a session with a warning fails with that warning as its error', async () => {
    for (const entry of casesWith('warning')) {
      const error = await loadSession(entry.path, { format: 'auto', strict: true }).then(
        () => null,
        (caught: unknown) => caught as InputError,
      );
      expect(error, entry.name).toBeInstanceOf(InputError);
      expect(error!.line, entry.name).toBe(entry.line);
      expect(error!.message, entry.name).toMatch(/\(--strict(, and \d+ more warnings?)?\)$/);
    }
  });
});

describe('the CLI over the corpus', () => {
  it('estimate --json: one record per session, warnings on stderr, exit 1 for the failures', async () => {
    const result = await runCli(['estimate', '--json', ...allSessions()]);
    expect(result.exitCode).toBe(1);
    expectOneLineDiagnostics(result.stderr);
    const records = new Map(jsonLines(result.stdout).map((record) => [record['session'] as string, record]));
    expect(records.size).toBe(corpus.sessions.length);
    for (const entry of corpus.sessions) {
      const record = records.get(entry.path);
      expect(record, entry.name).toBeDefined();
      if (entry.outcome === 'error') {
        expect(record!['status'], entry.name).toBe('failed');
        expect(record!['error'], entry.name).toMatch(new RegExp(`^${escape(located(entry.path, entry.line, ''))}`));
        expect((record!['error'] as string).slice(located(entry.path, entry.line, '').length), entry.name).toMatch(entry.message!);
      } else {
        expect(record!['status'], entry.name).toBeUndefined();
        expect(record!['messages'], entry.name).toBeGreaterThan(0);
      }
      if (entry.outcome === 'warning') {
        const prefix = `compactor: warning: ${located(entry.path, entry.line, '')}`;
        const line = result.stderr.split('\n').find((candidate) => candidate.startsWith(prefix));
        expect(line, entry.name).toBeDefined();
        expect(line!.slice(prefix.length), entry.name).toMatch(entry.message!);
      }
    }
    // Clean sessions say nothing.
    for (const entry of casesWith('ok')) expect(result.stderr, entry.name).not.toContain(entry.path);
  });

  it('estimate --json --strict: every warning case fails too', async () => {
    const result = await runCli(['estimate', '--json', '--strict', ...allSessions()]);
    expect(result.exitCode).toBe(1);
    expectOneLineDiagnostics(result.stderr);
    const records = new Map(jsonLines(result.stdout).map((record) => [record['session'] as string, record]));
    for (const entry of corpus.sessions) {
      const record = records.get(entry.path)!;
      expect(record['status'], entry.name).toBe(entry.outcome === 'ok' ? undefined : 'failed');
      if (entry.outcome === 'warning') expect(record['error'], entry.name).toContain(`${located(entry.path, entry.line, '')}`);
      if (entry.outcome === 'warning') expect(record['error'], entry.name).toContain('(--strict');
    }
  });

  it('warnings alone exit 0, and exit 1 under --strict', async () => {
    const warned = casesWith('warning').map((entry) => entry.path);
    const plain = await runCli(['estimate', ...warned]);
    expect(plain.exitCode).toBe(0);
    expectOneLineDiagnostics(plain.stderr);
    expect(plain.stderr.split('\n').filter((line) => line.startsWith('compactor: warning: ')).length).toBeGreaterThanOrEqual(warned.length);
    const strict = await runCli(['estimate', '--strict', ...warned]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stderr.split('\n').filter((line) => line.startsWith('compactor: error: ')).length).toBe(warned.length);
  });

  it.each(['inspect', 'compact', 'replay'])('%s over the corpus: one line per problem, no stack trace, exit 1', async (command) => {
    // compact names its strategy so stderr carries only the corpus's diagnostics, not the "using truncate" note.
    const strategy = command === 'compact' ? ['--strategy', 'truncate'] : [];
    const result = await runCli([command, ...strategy, ...allSessions()]);
    expect(result.exitCode).toBe(1);
    expectOneLineDiagnostics(result.stderr);
    for (const entry of casesWith('error')) {
      expect(result.stderr, entry.name).toContain(`compactor: error: ${located(entry.path, entry.line, '')}`);
    }
    for (const entry of casesWith('warning')) {
      expect(result.stderr, entry.name).toContain(`compactor: warning: ${located(entry.path, entry.line, '')}`);
    }
  });

  it('context: an error is one line and exit 1; a warning is kept and fails only under --strict', async () => {
    const byName = (name: string) => corpus.sessions.find((entry) => entry.name === name)!;
    const binary = await runCli(['context', byName('binary.jsonl').path]);
    expect(binary.exitCode).toBe(1);
    expect(binary.stdout).toBe('');
    // The CLI's own errors are `compactor: file:line: message` (no "error:"), as jq and compilers print them.
    expect(binary.stderr).toBe(`compactor: ${byName('binary.jsonl').path}:1: binary data (a NUL byte), not a JSONL session`);
    const truncated = byName('truncated-last-line.jsonl');
    const warned = await runCli(['context', truncated.path]);
    expect(warned.exitCode).toBe(0);
    expect(jsonLines(warned.stdout)).toHaveLength(6);
    expect(warned.stderr).toBe(`compactor: warning: ${truncated.path}:7: last line is incomplete (file still being written?); skipped`);
    const strict = await runCli(['context', '--strict', truncated.path]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toBe(`compactor: ${truncated.path}:7: last line is incomplete (file still being written?); skipped (--strict)`);
  });

  it('a directory walk reports what it cannot read and skips what is not a file', async () => {
    const dir = join(root, 'walk');
    await mkdir(join(dir, 'a-directory.jsonl'), { recursive: true });
    const good = goodLines().map((line) => JSON.stringify(line)).join('\n') + '\n';
    await writeFile(join(dir, 'good.jsonl'), good);
    await writeFile(join(dir, 'a-directory.jsonl', 'inside.jsonl'), good);
    await symlink(join(dir, 'gone.jsonl'), join(dir, 'dangling.jsonl'));
    // A FIFO would block a reader forever: a walk must not even open it.
    await makeFifo(join(dir, 'pipe.jsonl'));
    const result = await runCli(['estimate', '--json', dir]);
    expect(result.exitCode).toBe(1);
    expect(jsonLines(result.stdout).map((record) => [record['session'], record['status'] ?? 'ok'])).toEqual([
      [join(dir, 'a-directory.jsonl', 'inside.jsonl'), 'ok'],
      [join(dir, 'dangling.jsonl'), 'failed'],
      [join(dir, 'good.jsonl'), 'ok'],
    ]);
    expect(jsonLines(result.stdout)[1]!['error']).toBe(`${join(dir, 'dangling.jsonl')}: cannot read: no such file (or a dangling symbolic link)`);
  });

  it('a file without read permission fails with one line', async () => {
    // As root (CI), the CLI runs without the capabilities that let root read past a mode.
    const result = await runCli(['estimate', corpus.noPermission], { under: asPermissionChecked });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(`compactor: error: ${corpus.noPermission}: cannot read: permission denied`);
  });
});

describe('sidecars that cannot be trusted', () => {
  it('compact refuses corrupt, newer, foreign and invalid sidecars without touching them, and redoes a stale one', async () => {
    const before = new Map<string, string>();
    for (const entry of corpus.sidecars) before.set(entry.reported!, await readFile(entry.reported!, 'utf8'));
    // --allow-no-gain: these sessions are tiny, and what is tested is which sidecars are trusted.
    const result = await runCli(['compact', '--json', '--strategy', 'truncate', '--force', '--allow-no-gain', '--keep-recent', '1', corpus.sidecarsDir]);
    expect(result.exitCode).toBe(1);
    expectOneLineDiagnostics(result.stderr);
    const records = new Map(jsonLines(result.stdout).map((record) => [record['session'] as string, record]));
    for (const entry of corpus.sidecars) {
      const record = records.get(entry.path)!;
      const after = await readFile(entry.reported!, 'utf8');
      if (entry.outcome === 'error') {
        expect(record['status'], entry.name).toBe('failed');
        const where = located(entry.reported!, entry.line, '');
        expect(record['error'], entry.name).toMatch(new RegExp(`^${escape(where)}`));
        expect((record['error'] as string).slice(where.length), entry.name).toMatch(entry.message!);
        expect(after, `${entry.name} must not be overwritten`).toBe(before.get(entry.reported!));
      } else {
        expect(record['status'], entry.name).toBe('compacted');
        expect(result.stderr, entry.name).toContain(`compactor: warning: ${entry.reported}: `);
        expect(JSON.parse(after).summarized_hash).not.toBe(JSON.parse(before.get(entry.reported!)!).summarized_hash);
      }
    }
  });

  it('estimate and context fail on a corrupt sidecar with its file and line', async () => {
    const corrupt = corpus.sidecars.find((entry) => entry.name === 'corrupt.jsonl')!;
    for (const command of ['estimate', 'context']) {
      const result = await runCli([command, corrupt.path]);
      expect(result.exitCode, command).toBe(1);
      expect(result.stderr, command).toContain(`${corrupt.reported}:${corrupt.line}: corrupt sidecar (not valid JSON)`);
      expect(result.stderr.trim().split('\n'), command).toHaveLength(1);
    }
  });
});

describe('a 50 MB line', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compactor-huge-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes `before`, a 50 MB string built in pieces, then `after`, without one 50 MB template literal in the test. */
  async function writeHuge(path: string, before: string, after: string): Promise<number> {
    const file = await open(path, 'w');
    const piece = 'x'.repeat(1 << 20);
    await file.write(before);
    for (let i = 0; i < 50; i++) await file.write(piece);
    await file.write(after);
    await file.close();
    return 50 * piece.length;
  }

  it('is read as one message when it is JSON', async () => {
    const [first, call, , ...rest] = goodLines();
    const path = join(dir, 'huge.jsonl');
    const size = await writeHuge(
      path,
      `${JSON.stringify(first)}\n${JSON.stringify(call)}\n{"id":"m3","role":"user","content":[{"type":"tool_result","tool_request_id":"t1","output":"`,
      `"}]}\n${rest.map((line) => JSON.stringify(line)).join('\n')}\n`,
    );
    const result = await runCli(['estimate', '--json', path]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record!['messages']).toBe(6);
    expect(record!['estimated_tokens']).toBeGreaterThan(size / 4);
  });

  it('is one short error line naming its line when it is not JSON', async () => {
    const path = join(dir, 'huge-garbage.jsonl');
    const [first] = goodLines();
    await writeHuge(path, `${JSON.stringify(first)}\n`, '\n');
    const result = await runCli(['estimate', path]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^compactor: error: ${escape(path)}:2: invalid JSON: `));
    expect(result.stderr.length).toBeLessThan(400);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
