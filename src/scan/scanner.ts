/**
 * The WebAssembly scanner core: assembly/ (AssemblyScript), built by `npm run build` into
 * dist/scan/scanner.wasm (scripts/build-scan.js). It walks JSONL bytes (sixteen at a time with
 * WebAssembly SIMD) and writes a record for each line a reader must hear of (claude-layout.ts);
 * the readers on top of it are in formats/ (claude-code-scanned.ts, codex-scanned.ts). No I/O but loading the
 * module's bytes: the caller reads the file into `input` and asks for a scan of what it holds.
 *
 * An instance's memory holds a read's input and records. A thread lends its instance to one read
 * at a time (borrowScanner, returnScanner), as line-scan.ts lends its read buffer: a fresh
 * instance a file cost more than scanning a small one (its memory mapped and zeroed again, its
 * module compiled and its hot functions optimized again); a second read under way at once gets
 * an instance of its own.
 */
import { existsSync, readFileSync } from 'node:fs';

/**
 * Where the build puts the module (scripts/build-scan.js), from this file as tsc writes it
 * (dist/scan/); scripts/build-cli.js points the bundles that hold this file at it from where they
 * sit. This file run from its source (the tests) finds the build's.
 */
const MODULE_URL = new URL(import.meta.url.endsWith('.ts') ? '../../dist/scan/scanner.wasm' : '../scan/scanner.wasm', import.meta.url);

/** One line scanner of the module (assembly/claude.ts, assembly/codex.ts): its entry and the globals it leaves. */
interface LineScan {
  readonly run: (chunk: number, from: number, to: number, final: number, records: number, recordsLimit: number, lines: number) => number;
  readonly lineNumber: WebAssembly.Global;
  readonly valueLines: WebAssembly.Global;
  readonly recordsEnd: WebAssembly.Global;
  readonly full: WebAssembly.Global;
}

interface ScannerExports {
  readonly memory: WebAssembly.Memory;
  readonly reserve: (bytes: number) => number;
  readonly claude: LineScan;
  /** The Codex line scanner: the same arguments, its own globals. */
  readonly codex: LineScan;
}

const MISSING = 'the WebAssembly scanner lacks an export this build calls: run npm run build';

/** A line scanner's exports by their names in the module (entry, then its four globals), checked. */
function lineScan(exports: WebAssembly.Exports, names: readonly [string, string, string, string, string]): LineScan {
  const [run, lineNumber, valueLines, recordsEnd, full] = names.map((name) => exports[name]);
  const globals = [lineNumber, valueLines, recordsEnd, full];
  if (typeof run !== 'function' || !globals.every((global) => global instanceof WebAssembly.Global)) throw new Error(MISSING);
  return {
    run: run as LineScan['run'],
    lineNumber: lineNumber as WebAssembly.Global,
    valueLines: valueLines as WebAssembly.Global,
    recordsEnd: recordsEnd as WebAssembly.Global,
    full: full as WebAssembly.Global,
  };
}

/** The exports this file calls, checked: a module built from other sources fails here, not later. */
function scannerExports(exports: WebAssembly.Exports): ScannerExports {
  const { memory, reserve } = exports;
  if (!(memory instanceof WebAssembly.Memory) || typeof reserve !== 'function') throw new Error(MISSING);
  return {
    memory,
    reserve: reserve as ScannerExports['reserve'],
    claude: lineScan(exports, ['scanClaude', 'lineNumber', 'valueLines', 'recordsEnd', 'full']),
    codex: lineScan(exports, ['scanCodex', 'codexLineNumber', 'codexValueLines', 'codexRecordsEnd', 'codexFull']),
  };
}

/** The module, compiled, or null when the build made none or this runtime cannot run it (no SIMD). */
export function scannerModule(): WebAssembly.Module | null {
  if (!existsSync(MODULE_URL)) return null;
  const bytes = readFileSync(MODULE_URL);
  if (!WebAssembly.validate(bytes)) return null;
  return new WebAssembly.Module(bytes);
}

/** What one scan of the input did. */
export interface ScanResult {
  /** Where the lines it read end in the input: the next scan starts there. */
  readonly end: number;
  /** The number of the last line read. */
  readonly lines: number;
  /** Lines read to a value by the scanner (raw lines are the caller's to count). */
  readonly values: number;
  /** The records ran out of room before the input did: scan again from `end`. */
  readonly full: boolean;
  /** The records, in line order. */
  readonly words: Int32Array;
  /** The input (its whole room), for the strings the records point into (offsets from its start). */
  readonly chunk: Buffer;
}

/** Input first read into one MiB, records in as much again: grown when a line needs more. */
const FIRST_INPUT_BYTES = 1 << 20;
const FIRST_RECORD_BYTES = 1 << 20;
/** Past the input's last byte: the scanner reads sixteen bytes at a time and may look beyond it. */
const SLACK = 64;

/** One instance of the scanner with its input and records, for one read. */
export class ClaudeScanner {
  private readonly exports: ScannerExports;
  private inputAt: number;
  private inputBytes: number;
  private recordsAt: number;
  private recordBytes: number;
  /** The input's view, made again only when the memory or the input moved (a view is not free to make). */
  private inputView: Buffer | null = null;

  constructor(module: WebAssembly.Module) {
    const instance = new WebAssembly.Instance(module, {
      env: {
        abort: () => {
          throw new Error('the WebAssembly scanner stopped (abort)');
        },
      },
    });
    this.exports = scannerExports(instance.exports);
    this.inputBytes = FIRST_INPUT_BYTES;
    this.inputAt = this.exports.reserve(this.inputBytes + SLACK);
    this.recordBytes = FIRST_RECORD_BYTES;
    this.recordsAt = this.exports.reserve(this.recordBytes);
  }

  /** The input's room (a view: a grown input is a new one). */
  get input(): Buffer {
    const { buffer } = this.exports.memory;
    let view = this.inputView;
    if (view === null || view.buffer !== buffer) {
      view = Buffer.from(buffer, this.inputAt, this.inputBytes);
      this.inputView = view;
    }
    return view;
  }

  /** Room for at least `bytes` of input, its first `kept` bytes kept. */
  growInput(bytes: number, kept: number): void {
    const grown = Math.max(bytes, 2 * this.inputBytes);
    const at = this.exports.reserve(grown + SLACK);
    const memory = new Uint8Array(this.exports.memory.buffer);
    memory.copyWithin(at, this.inputAt, this.inputAt + kept);
    this.inputAt = at;
    this.inputBytes = grown;
    this.inputView = null;
  }

  /** Twice the room for records (a line with more blocks than they held). */
  growRecords(): void {
    this.recordBytes *= 2;
    this.recordsAt = this.exports.reserve(this.recordBytes);
  }

  /** Scans the input's lines from `from` up to `to` (`final`: the input ends there); `lines`: the number of the line before. */
  scan(from: number, to: number, final: boolean, lines: number): ScanResult {
    return this.scanWith(this.exports.claude, from, to, final, lines);
  }

  /** As `scan`, with the Codex line scanner (records: codex-layout.ts). */
  scanCodex(from: number, to: number, final: boolean, lines: number): ScanResult {
    return this.scanWith(this.exports.codex, from, to, final, lines);
  }

  private scanWith(line: LineScan, from: number, to: number, final: boolean, lines: number): ScanResult {
    const end = line.run(this.inputAt, this.inputAt + from, this.inputAt + to, final ? 1 : 0, this.recordsAt, this.recordsAt + this.recordBytes, lines);
    const recordsEnd = line.recordsEnd.value as number;
    return {
      end: end - this.inputAt,
      lines: line.lineNumber.value as number,
      values: line.valueLines.value as number,
      full: (line.full.value as number) !== 0,
      words: new Int32Array(this.exports.memory.buffer, this.recordsAt, (recordsEnd - this.recordsAt) >> 2),
      chunk: this.input,
    };
  }
}

/**
 * The scanner this thread lends to its next read (null while a read holds it). Module state, as
 * line-scan.ts's spare buffer is: it carries nothing from one read to the next but warm memory
 * and compiled code (every scan writes the records it hands over afresh).
 */
let spareScanner: ClaudeScanner | null = null;
/** Whether this thread tried to load the module and could not (no build, no SIMD): not tried again. */
let noScanner = false;

/** The thread's scanner, or a new one when a read holds it; null when there is none to be had. */
export function borrowScanner(): ClaudeScanner | null {
  const spare = spareScanner;
  if (spare) {
    spareScanner = null;
    return spare;
  }
  if (noScanner) return null;
  const module = scannerModule();
  if (!module) {
    noScanner = true;
    return null;
  }
  return new ClaudeScanner(module);
}

/** Whether this thread has a scanner loaded and free: a read of a small file may then use it at no cost of loading. */
export function scannerReady(): boolean {
  return spareScanner !== null;
}

/** Gives a borrowed scanner back once its read is over. */
export function returnScanner(scanner: ClaudeScanner): void {
  spareScanner ??= scanner;
}
