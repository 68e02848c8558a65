/**
 * The Codex and pi readers hand each message to the lean path's `keep` hook as soon as nothing
 * can change it (Codex: all but the last closed call, which may still get its usage; pi: every
 * entry, the branch is chosen at the end from ids), so a long session is never held in full. A
 * named pipe shows it: the hook must see messages while the writer still holds the second half
 * of the file back.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readCodex } from '../src/formats/codex.js';
import { readPi } from '../src/formats/pi.js';
import type { ReadOptions } from '../src/formats/reader.js';
import type { Message, Session } from '../src/session/model.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-reader-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASES: readonly [string, (file: string, options?: ReadOptions) => Promise<Session>, string][] = [
  ['Codex', readCodex, 'fixtures/real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl'],
  ['pi', readPi, 'fixtures/real/pi/pi-mono_large-session_v1.jsonl'],
];

describe('readers that hand messages over while reading', () => {
  for (const [name, read, fixture] of CASES) {
    it(`${name}: calls keep before the end of the file, and reads the same session`, async () => {
      const lines = readFileSync(fixture, 'utf8').split('\n').filter((line) => line !== '');
      const half = Math.floor(lines.length / 2);
      const fifo = join(dir, `${name}.jsonl`);
      execFileSync('mkfifo', [fifo]);
      const handed: Message[] = [];
      const reading = read(fifo, { keep: (message) => (handed.push(message), message) });
      const writer = createWriteStream(fifo);
      writer.write(`${lines.slice(0, half).join('\n')}\n`);
      // Synchronisation, not timing: wait until the reader has caught up with the first half.
      await vi.waitFor(() => expect(handed.length).toBeGreaterThan(10), { timeout: 10_000, interval: 20 });
      const beforeEnd = handed.length;
      expect(handed.every((message) => message.line <= half)).toBe(true);
      writer.end(`${lines.slice(half).join('\n')}\n`);
      const session = await reading;

      const whole = await read(fixture);
      expect(session.messages).toEqual(whole.messages);
      expect(session.recordedCompactions).toEqual(whole.recordedCompactions);
      expect(session.warnings.map((warning) => warning.message)).toEqual(whole.warnings.map((warning) => warning.message));
      // Every message went through keep exactly once, in session order (these files do not branch).
      expect(handed).toEqual(whole.messages);
      expect(beforeEnd).toBeLessThan(whole.messages.length);
    });
  }
});
