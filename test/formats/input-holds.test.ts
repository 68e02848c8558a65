/**
 * Holds of an input (formats/json/input-source.ts): a hold nested in a hold of the same plain file
 * takes the outer hold's word that it is plain (no `stat` of its own), and once every hold is
 * released the next one looks at the file afresh. The file is swapped for a named pipe while
 * held: a hold that looked would read the pipe, and hold its bytes.
 */
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldBytes, holdInput } from '../../src/formats/json/input-source.js';
import { feed, makeFifo, waitForReader } from '../helpers/fifo.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-holds-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('holds of a plain file', () => {
  it('nest without looking at the file again, and look afresh once all are released', async () => {
    const path = join(dir, 'swapped.jsonl');
    await writeFile(path, '{"role":"user","content":"plain"}\n');
    const outer = await holdInput(path);
    await unlink(path);
    await makeFifo(path);
    // Nested: the file was plain when the outer hold took it; the pipe is not read.
    const inner = await holdInput(path);
    expect(heldBytes(path)).toBeUndefined();
    inner();
    // Released twice: counted once.
    inner();
    expect(heldBytes(path)).toBeUndefined();
    outer();
    // Every hold released: the next one sees the pipe, and holds what is written into it.
    const holding = holdInput(path);
    feed(await waitForReader(path), '{"role":"user","content":"piped"}\n');
    const release = await holding;
    expect(heldBytes(path)?.toString('utf8')).toContain('piped');
    release();
    expect(heldBytes(path)).toBeUndefined();
  });
});
