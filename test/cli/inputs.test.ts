/**
 * What a session can be read from, run through the built CLI: stdin (`-`), a named pipe (read
 * once: detection and the read share its bytes), a gzipped file; what is refused at once and
 * said so (binary data, /dev/zero, CR-only line ends, a value nested too deeply); how a directory
 * walk treats symlinks, loops and odd names; and warnings for numbers and ids that cannot be what
 * they claim.
 */
import { execa } from 'execa';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';
import { feed, feedAll, makeFifo, waitForReader } from '../helpers/fifo.js';
import { startCli } from '../helpers/process.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const CLAUDE = join(FIXTURES, 'formats', 'claude-code.jsonl');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-inputs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const messagesOf = (stdout: string) => jsonLines(stdout).map((record) => record['messages']);

describe('stdin and pipes', () => {
  it('- reads one session from stdin', async () => {
    const content = await readFile(BUG);
    const result = await runCli(['estimate', '--json', '-'], { input: content });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const records = jsonLines(result.stdout);
    expect(records.map((record) => [record['session'], record['messages']])).toEqual([['-', 116]]);
    // The same numbers as the file itself.
    const file = await runCli(['estimate', '--json', BUG]);
    expect({ ...records[0], session: BUG }).toEqual(jsonLines(file.stdout)[0]);
  });

  it('inspect - prints the session read from stdin', async () => {
    const result = await runCli(['inspect', '-'], { input: await readFile(BUG) });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^- \(canonical, 116 messages, 9 turns/);
  });

  it('compact - writes no sidecar, and says so in one line', async () => {
    const result = await runCli(['compact', '--json', '--force', '--strategy', 'truncate', '-'], { cwd: dir, input: await readFile(BUG) });
    expect(result.exitCode).toBe(0);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'compactor: -: a session read from stdin gets no sidecar (there is no file to put one beside); it is planned as with --dry-run',
    ]);
    expect(jsonLines(result.stdout)).toMatchObject([{ session: '-', status: 'would-compact', dry_run: true }]);
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    ['a large session', 'bug'],
    ['a small session', 'small'],
  ])('a named pipe holding %s is read once, whole', async (_, which) => {
    const content = which === 'bug' ? await readFile(BUG, 'utf8') : (await readFile(BUG, 'utf8')).split('\n').slice(0, 3).join('\n') + '\n';
    const fifo = join(dir, 'pipe.jsonl');
    await makeFifo(fifo);
    const run = startCli(['estimate', '--json', fifo]);
    await feedAll(await waitForReader(fifo), content);
    const result = await run.exit;
    expect(run.stderr()).toBe('');
    expect(result.code).toBe(0);
    expect(messagesOf(run.stdout())).toEqual([which === 'bug' ? 116 : 3]);
  });

  it('a second Ctrl-C exits while a pipe has not been written to', async () => {
    const fifo = join(dir, 'pipe.jsonl');
    await makeFifo(fifo);
    // compact: a command that writes waits for its sessions in flight at the first signal (the
    // read-only ones stop at once), so only the second one can stop it here.
    const run = startCli(['compact', '--strategy', 'truncate', fifo]);
    const writer = await waitForReader(fifo);
    try {
      run.child.kill('SIGINT');
      await run.stderrMatches(/stopping after the sessions in progress/);
      run.child.kill('SIGINT');
      // The pipe stays open and empty: the process must exit anyway.
      expect((await run.exit).code).toBe(130);
    } finally {
      feed(writer, '');
    }
  });

  it('a gzipped session is read, and its sidecar is <name>.gz_compaction.json beside it', async () => {
    const gz = join(dir, 's.jsonl.gz');
    await writeFile(gz, zlib.gzipSync(await readFile(BUG)));
    const estimate = await runCli(['estimate', '--json', gz]);
    expect(estimate.exitCode).toBe(0);
    expect(messagesOf(estimate.stdout)).toEqual([116]);
    const compact = await runCli(['compact', '--json', '--force', '--strategy', 'truncate', dir]);
    expect(compact.exitCode).toBe(0);
    expect(jsonLines(compact.stdout)).toMatchObject([{ session: gz, status: 'compacted', sidecar: join(dir, 's.gz_compaction.json') }]);
    const context = await runCli(['context', gz]);
    expect(context.exitCode).toBe(0);
    expect(context.stdout.split('\n').length).toBeLessThan(116);
  });

  it('a zstd session says in one line what this Node cannot do', async () => {
    if (typeof (zlib as unknown as Record<string, unknown>)['createZstdDecompress'] === 'function') return;
    const zst = join(dir, 's.jsonl.zst');
    await writeFile(zst, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]));
    const result = await runCli(['estimate', zst]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^compactor: error: .*s\.jsonl\.zst: zstd-compressed, which this Node \(v\d+[^)]*\) cannot decompress .*$/);
  });
});

describe('what is not a session is said at once', () => {
  it('/dev/zero: binary data, read no further than the first NUL', async () => {
    const result = await execa('node', [join(FIXTURES, '..', 'bin', 'compactor.js'), 'estimate', '/dev/zero'], { reject: false, stdin: 'ignore', timeout: 50_000 });
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('compactor: error: /dev/zero:1: binary data (a NUL byte), not a JSONL session');
  });

  it('random bytes and CR-only line ends get errors that say what they are', async () => {
    const random = Buffer.alloc(4096);
    for (let i = 0; i < random.length; i++) random[i] = 0x80 + ((i * 37) % 0x7f);
    await writeFile(join(dir, 'random.jsonl'), random);
    const lines = (await readFile(BUG, 'utf8')).split('\n').slice(0, 5);
    await writeFile(join(dir, 'mac.jsonl'), lines.join('\r') + '\r');
    const binary = await runCli(['estimate', join(dir, 'random.jsonl')]);
    expect(binary.stderr).toMatch(/random\.jsonl:1: not text \(invalid UTF-8\), not a JSONL session/);
    const mac = await runCli(['estimate', join(dir, 'mac.jsonl')]);
    expect(mac.stderr).toMatch(/mac\.jsonl:1: lines end in CR only \(classic Mac style\); compactor reads LF or CRLF line ends/);
    expect(binary.exitCode).toBe(1);
    expect(mac.exitCode).toBe(1);
  });

  it('10,000 levels of nesting in tool arguments: one error naming file and line', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const file = join(dir, 'deep.jsonl');
    await writeFile(
      file,
      JSON.stringify({ id: 'm1', role: 'user', content: 'hi' }) +
        '\n' +
        `{"id":"m2","role":"assistant","content":[{"type":"tool_request","id":"c1","name":"x","arguments":{"a":${deep}}}]}\n`,
    );
    for (const command of ['estimate', 'inspect', 'context']) {
      const result = await runCli([command, file]);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).not.toMatch(/call stack/);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`${file}:2: a JSON value nested 10,004 levels deep, too deep to process`);
    }
  });
});

describe('directory walks', () => {
  it('do not follow symlinked directories, write nothing outside the tree, walk odd names, and say "cannot read" for a loop', async () => {
    const tree = join(dir, 'tree');
    const outside = join(dir, 'outside');
    await mkdir(join(tree, 'a'), { recursive: true });
    await mkdir(join(tree, 'new\nline'), { recursive: true });
    await mkdir(join(outside, 'x'), { recursive: true });
    const content = await readFile(BUG);
    await writeFile(join(tree, 'a', 's.jsonl'), content);
    await writeFile(join(tree, 'new\nline', 'n.jsonl'), content);
    await writeFile(join(outside, 'x', 'o.jsonl'), content);
    await writeFile(join(outside, 'f.jsonl'), content);
    await symlink(join(outside, 'x'), join(tree, 'linked-dir'));
    await symlink(join(outside, 'f.jsonl'), join(tree, 'linked.jsonl'));
    await symlink('loop.jsonl', join(tree, 'loop.jsonl'));
    const result = await runCli(['compact', '--json', '--force', '--strategy', 'truncate', tree]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${join(tree, 'loop.jsonl')}: cannot read: too many levels of symbolic links`);
    expect(result.stderr).not.toMatch(/ELOOP/);
    const records = jsonLines(result.stdout);
    expect(records.filter((record) => record['sidecar']).map((record) => [record['session'], record['sidecar']])).toEqual([
      [join(tree, 'a', 's.jsonl'), join(tree, 'a', 's_compaction.json')],
      [join(tree, 'linked.jsonl'), join(tree, 'linked_compaction.json')],
      [join(tree, 'new\nline', 'n.jsonl'), join(tree, 'new\nline', 'n_compaction.json')],
    ]);
    // Nothing written outside the named tree.
    expect((await readdir(outside)).sort()).toEqual(['f.jsonl', 'x']);
    expect(await readdir(join(outside, 'x'))).toEqual(['o.jsonl']);
  });
});

describe('numbers and ids that cannot be what they claim', () => {
  it('a token count too large to read warns so, with its line', async () => {
    const lines = (await readFile(BUG, 'utf8')).split('\n');
    lines[1] = lines[1]!.replace(/"input_tokens":\d+/, '"input_tokens":1e400');
    await writeFile(join(dir, 'big.jsonl'), lines.join('\n'));
    const result = await runCli(['estimate', join(dir, 'big.jsonl')]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('big.jsonl:2: metadata.input_tokens: a number too large to be read (beyond 1.8e308) is not a token count');
    expect(result.stderr).not.toMatch(/null/);
  });

  it('a message id that is not a string warns with its line', async () => {
    const lines = (await readFile(BUG, 'utf8')).split('\n');
    lines[2] = lines[2]!.replace(/^\{"id":"[^"]*"/, '{"id":42');
    await writeFile(join(dir, 'ids.jsonl'), lines.join('\n'));
    const result = await runCli(['estimate', join(dir, 'ids.jsonl')]);
    expect(result.stderr).toContain('ids.jsonl:3: id: expected a string, got a number; using "line-3"');
  });

  it('Claude Code: a uuid that is not a string, and a parentUuid cycle, warn with the line', async () => {
    const records = (await readFile(CLAUDE, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const write = (name: string, change: (record: Record<string, unknown>, line: number) => Record<string, unknown>) =>
      writeFile(join(dir, name), records.map((record, index) => JSON.stringify(change(record, index + 1))).join('\n') + '\n');
    await write('number-uuid.jsonl', (record, line) => (line === 7 ? { ...record, uuid: 7 } : record));
    await write('cycle.jsonl', (record, line) => (line === 2 ? { ...record, parentUuid: 'a5' } : record));
    const numeric = await runCli(['estimate', join(dir, 'number-uuid.jsonl')]);
    expect(numeric.stderr).toContain('number-uuid.jsonl:7: uuid: expected a string, got a number; the line is not linked into the conversation');
    const cycle = await runCli(['estimate', join(dir, 'cycle.jsonl')]);
    expect(cycle.stderr).toContain('cycle.jsonl:2: parentUuid leads back to a later line of the conversation (a cycle); the conversation is read from this line on');
  });
});
