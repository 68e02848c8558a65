/**
 * Where a command's results go: NDJSON records with --json, text otherwise; warnings and
 * failures on stderr as one line each (`compactor: file:line: message`, or JSON events: log.ts).
 * Text lines go above the progress bar when one is drawn.
 */
import type { Diagnostic } from '../session/model.js';
import type { JsonLinesWriter } from '../report/json-lines.js';
import { jsonLinesWriter } from '../report/json-lines.js';
import type { PieceSink } from '../report/json-pieces.js';
import { jsonPieces, jsonPiecesTo } from '../report/json-pieces.js';
import { printable, printableText } from '../report/format.js';
import { writeAbove } from '../report/progress.js';
import { logMessage, logWarning } from './log.js';

export interface CommandOutput {
  readonly json: boolean;
  /** A per-session result: one NDJSON line with --json; otherwise `human` (if any) on stdout. */
  record(record: Record<string, unknown>, human?: () => string): void;
  /**
   * A per-session result rendered where it was made (a worker thread): the record's JSON text
   * with --json, the human report otherwise. This thread then holds one string, not the record's
   * tree beside its serialized copy.
   */
  rendered(text: Printed): void;
  /**
   * A piece of a long record's JSON text, written as it was made, ahead of its session's result
   * (printedJsonTo; with --json only). `rendered` with what is left (nothing) ends its line.
   */
  piece(text: string): void;
  warn(diagnostic: Diagnostic | string): void;
  close(): Promise<void>;
}

/**
 * A report as printed: its text, or a long record's JSON as UTF-8 bytes in pieces (printedJson),
 * which a worker thread hands over without a copy (src/worker.ts) and this thread writes as they
 * are; none when they went ahead, each as it was made (printedJsonTo).
 */
export type Printed = string | readonly Uint8Array[];

/** JSON text from this length on crosses as bytes. */
const BYTES_FROM = 1 << 20;

/**
 * A record's JSON as a worker posts it back: a long one as bytes, made in pieces (report/json-pieces.ts).
 * Posted as text, it was copied into the message, rebuilt as a string in this thread's heap, then
 * converted again to be written; and made as one string, it was held beside the record's whole
 * tree and then beside its bytes (a 30 MB record on a long session's replay).
 */
export function printedJson(record: unknown): Printed {
  return jsonPieces(record, BYTES_FROM);
}

/**
 * printedJson with a long record's pieces handed to `sink` as each is made, so its bytes are never
 * held whole: what is left to print is then nothing but the line's end (no pieces).
 */
export function printedJsonTo(record: unknown, sink: PieceSink): Printed {
  return jsonPiecesTo(record, BYTES_FROM, sink) ?? [];
}

/** The text of a report as printed. */
export function printedText(printed: Printed): string {
  if (typeof printed === 'string') return printed;
  const decoder = new TextDecoder();
  return printed.map((piece, i) => decoder.decode(piece, { stream: i < printed.length - 1 })).join('');
}

export function createOutput(json: boolean): CommandOutput {
  const writer: JsonLinesWriter | null = json ? jsonLinesWriter() : null;
  return {
    json,
    record(record, human) {
      if (writer) writer.write(record);
      else if (human) writeAbove(process.stdout, `${printableText(human())}\n`);
    },
    rendered(text) {
      if (writer) writer.writeJson(text);
      else writeAbove(process.stdout, `${printableText(printedText(text))}\n`);
    },
    piece(text) {
      if (!writer) throw new Error('internal: a record piece without --json');
      writer.writePiece(text);
    },
    warn: logWarning,
    close: async () => {
      await writer?.close();
    },
  };
}

/** A failed session: an NDJSON record with --json (so pipelines see it), a stderr line (or log event) otherwise. */
export function reportFailure(output: CommandOutput, path: string, error: string): void {
  if (output.json) output.record({ session: path, status: 'failed', error });
  else logMessage('error', locatedError(path, error), { session: path });
}

/** `path: message`, unless the message already starts with the path (`path:line: …`); the path printable (format.ts). */
export function locatedError(path: string, error: string): string {
  return error.startsWith(path) ? `${printable(path)}${error.slice(path.length)}` : `${printable(path)}: ${error}`;
}
