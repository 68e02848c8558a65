/**
 * When a read uses the scanner (src/formats/claude-code-scanned.ts scannedFile): a large file
 * always; a small one once the scanner is loaded or this thread's reads have come to
 * SCANNED_BYTES (a batch of small sessions), never under READY_BYTES. A small session read alone
 * never loads it (start-up).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { READY_BYTES, SCANNED_BYTES, scannedFile } from '../../src/formats/claude-code-scanned.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-scanned-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileOf(name: string, bytes: number): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.alloc(bytes, 0x20));
  return path;
}

describe('scannedFile', () => {
  it('reads small files in JavaScript until the reads come to SCANNED_BYTES, then with the scanner (not the tiny ones)', () => {
    const small = fileOf('small.jsonl', 4 * READY_BYTES);
    const tiny = fileOf('tiny.jsonl', READY_BYTES - 1);
    // Nothing loaded: the first small files are read in JavaScript.
    expect(scannedFile(small, false)).toBe(false);
    expect(scannedFile(tiny, false)).toBe(false);
    let asked = 4 * READY_BYTES + READY_BYTES - 1;
    while (asked + 4 * READY_BYTES < SCANNED_BYTES) {
      expect(scannedFile(small, false)).toBe(false);
      asked += 4 * READY_BYTES;
    }
    // The read that brings them to SCANNED_BYTES, and every one after it, is scanned; a tiny one never.
    expect(scannedFile(small, false)).toBe(true);
    expect(scannedFile(small, false)).toBe(true);
    expect(scannedFile(tiny, false)).toBe(false);
  });

  it('reads a large file with the scanner at once, and no pipe or missing file', () => {
    expect(scannedFile(fileOf('large.jsonl', SCANNED_BYTES), false)).toBe(true);
    expect(scannedFile(join(dir, 'missing.jsonl'), true)).toBe(false);
  });
});
