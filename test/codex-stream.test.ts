/**
 * The Codex reader hands each message to the lean path's `keep` hook as soon as nothing can
 * change it (only the last closed call may still get its usage), so a long rollout is never
 * held in full. A named pipe shows it: the hook must see messages while the writer still holds
 * the second half of the file back.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readCodex } from '../src/formats/codex.js';
import type { Message } from '../src/session/model.js';

const ROLLOUT = 'fixtures/real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl';
const dir = mkdtempSync(join(tmpdir(), 'compactor-codex-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Codex reader: messages handed over while reading', () => {
  it('calls keep before the end of the file, and reads the same session', async () => {
    const lines = readFileSync(ROLLOUT, 'utf8').split('\n').filter((line) => line !== '');
    const half = Math.floor(lines.length / 2);
    const fifo = join(dir, 'rollout.jsonl');
    execFileSync('mkfifo', [fifo]);
    const handed: Message[] = [];
    const reading = readCodex(fifo, { keep: (message) => (handed.push(message), message) });
    const writer = createWriteStream(fifo);
    writer.write(`${lines.slice(0, half).join('\n')}\n`);
    // Synchronisation, not timing: wait until the reader has caught up with the first half.
    await vi.waitFor(() => expect(handed.length).toBeGreaterThan(10), { timeout: 10_000, interval: 20 });
    const beforeEnd = handed.length;
    expect(handed.every((message) => message.line <= half)).toBe(true);
    writer.end(`${lines.slice(half).join('\n')}\n`);
    const session = await reading;

    const whole = await readCodex(ROLLOUT);
    expect(session.messages).toEqual(whole.messages);
    expect(session.recordedCompactions).toEqual(whole.recordedCompactions);
    // Every message went through keep exactly once, in session order.
    expect(handed).toEqual(whole.messages);
    expect(beforeEnd).toBeLessThan(whole.messages.length);
  });
});
