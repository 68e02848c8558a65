/**
 * The Codex and pi readers hand each message to the lean path's `keep` hook as soon as nothing
 * can change it (Codex: all but the last closed call, which may still get its usage; pi: every
 * entry, the branch is chosen at the end from ids), so a long session is never held in full. A
 * broken line in the middle of the file shows it: the hook must have seen the messages before it
 * by the time the read fails there. (A named pipe is no longer the way to show it: pipes are
 * read whole, once, before any line is parsed: formats/json/input-source.ts.)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { readCodex } from '../../src/formats/codex.js';
import { readPi } from '../../src/formats/pi.js';
import type { ReadOptions } from '../../src/formats/reader.js';
import type { AnyMessage, Message, Session } from '../../src/session/model.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-reader-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASES: readonly [string, (file: string, options?: ReadOptions) => Promise<Session<AnyMessage>>, string][] = [
  ['Codex', readCodex, 'fixtures/real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl'],
  ['pi', readPi, 'fixtures/real/pi/pi-mono_large-session_v1.jsonl'],
];

describe('readers that hand messages over while reading', () => {
  for (const [name, read, fixture] of CASES) {
    it(`${name}: calls keep before the end of the file, and reads the same session`, async () => {
      const lines = readFileSync(fixture, 'utf8').split('\n').filter((line) => line !== '');
      const half = Math.floor(lines.length / 2);
      const broken = join(dir, `${name}.jsonl`);
      writeFileSync(broken, `${lines.slice(0, half).join('\n')}\n{broken\n${lines.slice(half).join('\n')}\n`);
      const handed: Message[] = [];
      await expect(read(broken, { keep: (message) => (handed.push(message), message) })).rejects.toThrow(InputError);
      // Messages before the broken line were handed over before the read reached it.
      expect(handed.length).toBeGreaterThan(10);
      expect(handed.every((message) => message.line <= half)).toBe(true);

      handed.length = 0;
      const session = await read(fixture, { keep: (message) => (handed.push(message), message) });
      const whole = await read(fixture);
      expect(session.messages).toEqual(whole.messages);
      expect(session.recordedCompactions).toEqual(whole.recordedCompactions);
      expect(session.warnings.map((warning) => warning.message)).toEqual(whole.warnings.map((warning) => warning.message));
      // Every message went through keep exactly once, in session order (these files do not branch).
      expect(handed).toEqual(whole.messages);
    });
  }
});
