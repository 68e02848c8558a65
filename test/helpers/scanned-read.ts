/**
 * The scanner's differential tests' read (test/scan/): a format's lean read as read/index.ts makes
 * it (chars/4 estimates, inspect's growth facts), with the WebAssembly scanner or without it (the
 * JavaScript reader, the reference), and the check that both give the same.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ReadOptions } from '../../src/formats/reader.js';
import { GrowthFacts } from '../../src/growth/facts.js';
import { slimmer } from '../../src/read/slim.js';
import type { ClaudeScanner } from '../../src/scan/scanner.js';
import type { AnyMessage, Session } from '../../src/session/model.js';
import { blockLengths, estimateFromLengths, heuristicCounter } from '../../src/tokens/estimate.js';

/** A reader that takes the scanner to read with, or null for its JavaScript path (readClaudeCodeWith, readCodexWith). */
export type ReadWith = (file: string, options: ReadOptions, scanner: ClaudeScanner | null) => Promise<Session<AnyMessage>>;

/** A read with or without the scanner: its session, estimates, block sizes and growth facts, or its error. */
async function read(readWith: ReadWith, path: string, scanner: ClaudeScanner | null) {
  const slim = slimmer();
  const tokens: number[] = [];
  /** Each message's blocks' lengths, what the estimates divide: compared exactly, where a rounded estimate could hide a unit. */
  const sizes: number[][] = [];
  const lengths: number[] = [];
  const facts = new GrowthFacts(heuristicCounter);
  try {
    const session = await readWith(
      path,
      {
        textLengthsOnly: true,
        keep: (message) => {
          tokens.push(estimateFromLengths(message, blockLengths(message, lengths)));
          sizes.push([...lengths]);
          facts.observe(message, lengths);
          return slim(message);
        },
      },
      scanner,
    );
    const columns = [facts.text, facts.thinking, facts.toolCalls, facts.results].map((column) => Array.from({ length: column.length }, (_, index) => column.at(index)));
    return { session: JSON.parse(JSON.stringify(session)) as unknown, tokens, sizes, columns, targets: [...facts.targets], error: null };
  } catch (error) {
    const { message, line, file } = error as { message: string; line?: number; file?: string };
    return { session: null, tokens: null, sizes: null, columns: null, targets: null, error: { message, line, file } };
  }
}

/** Expects `path` read the same with `scanner` as without it; returns whether the read succeeded. */
export async function expectSameRead(readWith: ReadWith, path: string, scanner: ClaudeScanner | null): Promise<boolean> {
  const reference = await read(readWith, path, null);
  const scanned = await read(readWith, path, scanner);
  expect(scanned, path).toEqual(reference);
  return reference.error === null;
}

/** Every `.jsonl` file under `dir`, in order; none when it does not exist. */
export function jsonlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}
