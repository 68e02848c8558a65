/**
 * A plain file's lines through the WebAssembly scanner, chunk by chunk: the loop both scanned
 * readers share (claude-code-scanned.ts, codex-scanned.ts). The scanner reads what it is sure of
 * into records, which go to the format's `records`; a line it leaves to JavaScript is parsed here
 * as forEachJsonLine parses it and goes to `value`. Which scan runs and what a record means are the
 * caller's.
 */
import { InputError } from '../../errors.js';
import type { ClaudeScanner, ScanResult } from '../../scan/scanner.js';
import type { Diagnostic } from '../../session/model.js';
import type { LineCutter } from './json-cut.js';
import { parseRawLine } from './jsonl-lines.js';
import type { ChunkRoom } from './line-scan.js';
import { readChunks } from './line-scan.js';

/** A line the scanner left to JavaScript: its bytes, number, and whether a newline ended it. */
export type RawScannedLine = (bytes: Buffer, line: number, terminated: boolean) => void;

export interface ScannedFile {
  /** One scan of the input from `from` up to `to` (`final`: the file ends there); `lines`: the number of the line before. */
  readonly scan: (from: number, to: number, final: boolean, lines: number) => ScanResult;
  /** A scan's records, in line order; its raw lines handed to `raw`. */
  readonly records: (scan: ScanResult, raw: RawScannedLine) => void;
  /** A raw line's value, as JSON.parse gives it. */
  readonly value: (value: unknown, line: number) => void;
  /** The format's way to cut a line too long to parse whole (claude-code-lines.ts), if it has one. */
  readonly cutter?: LineCutter;
}

/**
 * Every line of a plain file, scanned; returns the warnings of the lines parsed here (as
 * forEachJsonLine does, and the same "empty file" error).
 */
export function scanFileLines(file: string, scanner: ClaudeScanner, format: ScannedFile): Diagnostic[] {
  const warnings: Diagnostic[] = [];
  const warn = (warning: Diagnostic) => warnings.push(warning);
  let lines = 0;
  let visited = 0;
  const raw: RawScannedLine = (bytes, line, terminated) => {
    const parsed = parseRawLine({ bytes, line, terminated }, file, warn, format.cutter);
    if (!parsed) return;
    visited++;
    format.value(parsed.value, line);
  };
  const room: ChunkRoom = {
    get bytes() {
      return scanner.input;
    },
    grow: (length, kept) => scanner.growInput(length, kept),
  };
  readChunks(file, room, (filled, end) => {
    if (end === 'binary') {
      raw(scanner.input.subarray(0, filled), ++lines, true);
      return filled;
    }
    for (let from = 0; ; ) {
      const scan = format.scan(from, filled, end === 'end', lines);
      visited += scan.values;
      format.records(scan, raw);
      lines = scan.lines;
      if (!scan.full) return scan.end;
      // A line with more records than the room holds: room for it.
      if (scan.end === from && scan.words.length === 0) scanner.growRecords();
      from = scan.end;
    }
  });
  if (visited === 0 && warnings.length === 0) throw new InputError('empty file: no JSON lines to read', file);
  return warnings;
}
