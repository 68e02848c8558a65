/**
 * Every command and output mode is linear in the session: the work of a run (V8's exact count of
 * function and block executions, test/helpers/work-counter.mjs; nothing is timed) grows by the
 * same amount from 300 to 600 turns as from 150 to 300, give or take, where a cost per row that
 * grows with the rows before it (a table laid out cell against cell) would double it. The fixed
 * part (parsing flags, settings) cancels out in the differences.
 */
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const SIZES = [150, 300, 600];
let dir = '';

/** `turns` turns: a question, a read of one of seven files (so some are read again), its result, an answer; usage reported. */
function session(turns: number): string {
  const lines: object[] = [];
  for (let i = 0; i < turns; i++) {
    lines.push({ id: `u${i}`, role: 'user', content: `please read f${i % 7}` });
    lines.push({
      id: `a${i}`,
      role: 'assistant',
      content: [{ type: 'text', text: 'reading' }, { type: 'tool_request', id: `t${i}`, name: 'read', arguments: { path: `src/f${i % 7}.ts` } }],
      metadata: { input_tokens: 100 + i * 30, output_tokens: 10 },
    });
    lines.push({ id: `r${i}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: `t${i}`, output: 'x'.repeat(50 + (i % 5) * 20) }] });
    lines.push({ id: `b${i}`, role: 'assistant', content: `done ${i}`, metadata: { input_tokens: 120 + i * 30, output_tokens: 5 } });
  }
  return `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-linear-'));
  for (const turns of SIZES) await writeFile(join(dir, `s${turns}.jsonl`), session(turns));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The work of `args` on each size, counted in one process. */
async function workOf(args: readonly string[]): Promise<number[]> {
  const runs = SIZES.map((turns) => [...args, join(dir, `s${turns}.jsonl`)]);
  const result = await execa('node', [join(ROOT, 'test', 'helpers', 'work-counter.mjs'), JSON.stringify(runs)], { env: { CI: 'true', NO_COLOR: '1' } });
  return JSON.parse(String(result.stderr).trim().split('\n').pop()!) as number[];
}

describe('work grows linearly with the session', () => {
  it.each([
    ['estimate'],
    ['estimate --json'],
    ['inspect'],
    ['inspect --all'],
    ['inspect --chart'],
    ['inspect --json'],
    ['replay --strategy truncate'],
    ['replay --json --strategy truncate'],
    ['compact --dry-run --strategy truncate'],
    ['compact --dry-run --json --strategy truncate'],
    ['context'],
    ['audit'],
  ])('%s', async (command) => {
    const [small, middle, large] = await workOf(command.split(' '));
    const first = middle! - small!;
    const second = large! - middle!;
    expect(first).toBeGreaterThan(0);
    // Linear: about 2 (the second step adds twice the turns); quadratic rows: about 4.
    expect(second / first).toBeLessThan(2.5);
  }, 120_000);
});
