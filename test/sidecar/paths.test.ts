/**
 * Where compactor writes: a sidecar always lands beside the session path it was given; no
 * session content, message id or file name moves it; symbolic links are never written through.
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sidecarPath } from '../../src/sidecar/store.js';
import { goodLines } from '../corpus/make-bad-inputs.js';
import { jsonLines, runCli } from '../helpers/cli.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'compactor-paths-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const COMPACT = ['compact', '--json', '--force', '--allow-no-gain', '--keep-recent', '1'];

async function writeSession(path: string, lines: readonly Record<string, unknown>[] = goodLines()): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
}

/** Every path under `dir` (relative), with symlinks listed but not followed. */
async function tree(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (current: string) => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      found.push(relative(dir, path));
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(dir);
  return found.sort();
}

describe('sidecarPath', () => {
  it('is the session name with _compaction.json, in the same directory', () => {
    expect(sidecarPath('/a/b/s.jsonl')).toBe('/a/b/s_compaction.json');
    expect(sidecarPath('s.JSONL')).toBe('s_compaction.json');
    expect(sidecarPath('./x/../y/s.jsonl')).toBe('y/s_compaction.json');
    expect(sidecarPath('/a/notes')).toBe('/a/notes_compaction.json');
    expect(dirname(sidecarPath('/a/..weird $(rm -rf) name.jsonl'))).toBe('/a');
  });
});

describe('writes stay beside the session', () => {
  it('a session symlinked from another directory gets its sidecar beside the link, not the target', async () => {
    const target = join(root, 'archive', 'real.jsonl');
    await writeSession(target);
    const link = join(root, 'work', 'link.jsonl');
    await mkdir(dirname(link));
    await symlink(target, link);
    const result = await runCli([...COMPACT, join(root, 'work')]);
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)).toMatchObject([{ session: link, status: 'compacted', sidecar: join(root, 'work', 'link_compaction.json') }]);
    expect(await tree(root)).toEqual(['archive', 'archive/real.jsonl', 'work', 'work/link.jsonl', 'work/link_compaction.json']);
    expect(JSON.parse(await readFile(join(root, 'work', 'link_compaction.json'), 'utf8')).session).toBe('link.jsonl');
  });

  it.each([
    ['an existing file', true],
    ['nothing (dangling)', false],
  ])('a sidecar path that is a symlink to %s is neither read nor written through', async (_what, targetExists) => {
    const session = join(root, 'work', 's.jsonl');
    await writeSession(session);
    const target = join(root, 'elsewhere', 'target.json');
    await mkdir(dirname(target));
    if (targetExists) await writeFile(target, 'precious\n');
    await symlink(target, sidecarPath(session));
    for (const command of [COMPACT, ['estimate', '--json']]) {
      const result = await runCli([...command, session]);
      expect(result.exitCode, command[0]).toBe(1);
      const [record] = jsonLines(result.stdout);
      expect(record!['status'], command[0]).toBe('failed');
      expect(record!['error'], command[0]).toMatch(
        new RegExp(`^${sidecarPath(session).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: sidecar is a symbolic link; refusing to (read|write) through it`),
      );
    }
    // The link is still a link to the same place, and the place is untouched.
    expect((await lstat(sidecarPath(session))).isSymbolicLink()).toBe(true);
    expect(await readlink(sidecarPath(session))).toBe(target);
    if (targetExists) expect(await readFile(target, 'utf8')).toBe('precious\n');
    else expect(await readdir(dirname(target))).toEqual([]);
    expect(await tree(join(root, 'work'))).toEqual(['s.jsonl', 's_compaction.json']);
  });

  it('a lock path planted as a symlink is replaced, never written through', async () => {
    const session = join(root, 'work', 's.jsonl');
    await writeSession(session);
    const target = join(root, 'elsewhere', 'target.txt');
    await mkdir(dirname(target));
    await writeFile(target, 'precious\n');
    await symlink(target, `${sidecarPath(session)}.lock`);
    const result = await runCli([...COMPACT, session]);
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]!['status']).toBe('compacted');
    expect(await readFile(target, 'utf8')).toBe('precious\n');
    expect(await tree(join(root, 'work'))).toEqual(['s.jsonl', 's_compaction.json']);
  });

  it('no message id, tool path or file name steers a write elsewhere', async () => {
    const hostile = [
      { id: '../../../escape', role: 'user', content: 'Read ../../../../etc/passwd' },
      {
        id: '/tmp/abs',
        role: 'assistant',
        content: [{ type: 'tool_request', id: '../t1', name: 'write_file', arguments: { path: '../../outside.json', content: 'x' } }],
      },
      { id: 'm3\n../x', role: 'user', content: [{ type: 'tool_result', tool_request_id: '../t1', output: 'ok' }] },
      { id: 'm4', role: 'assistant', content: 'Done with ../../ and /etc.' },
      { id: '..', role: 'user', content: 'again' },
      { id: '.', role: 'assistant', content: 'ok' },
    ];
    const names = ['..weird $(touch pwned) name.jsonl', '-rf.jsonl', 'a_compaction.json.jsonl', ' spaced .jsonl'];
    const dir = join(root, 'deep', 'sessions');
    for (const name of names) await writeSession(join(dir, name), hostile);
    const before = await tree(root);
    const contents = await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')));
    const result = await runCli([...COMPACT, dir]);
    expect(result.exitCode).toBe(0);
    const records = jsonLines(result.stdout);
    expect(records.map((record) => record['status'])).toEqual(names.map(() => 'compacted'));
    const created = (await tree(root)).filter((path) => !before.includes(path));
    expect(created.sort()).toEqual(names.map((name) => relative(root, sidecarPath(join(dir, name)))).sort());
    for (const record of records) expect(dirname(record['sidecar'] as string)).toBe(dir);
    // The sessions themselves are only read.
    expect(await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')))).toEqual(contents);
  });
});
