/**
 * `--json` output: one JSON object a line (NDJSON) on stdout, each record written as soon as it
 * is made, so a pipe downstream can read results while a batch is still running.
 *
 * Written directly rather than through ndjson's serializer: that is `JSON.stringify` and a
 * newline behind a through2 stream, and loading its stream stack (18 modules) cost a small
 * session's `estimate --json` about a tenth of its run. The bytes are the same for every record
 * we write (ndjson's cycle-safe stringify differs only on circular objects, which we never make).
 */
import { EOL } from 'node:os';

export interface JsonLinesWriter {
  write(record: Record<string, unknown>): void;
  /**
   * A record already serialized as `JSON.stringify` does (in a worker), as text or as its UTF-8
   * bytes in pieces: the same line as `write` gives.
   */
  writeJson(json: string | readonly Uint8Array[]): void;
  /** The start of a record's line, a piece of its text at a time as they are made; `writeJson` ends it. */
  writePiece(piece: string): void;
  /** Resolves once everything written has been handed to stdout (after a drain if it is full). */
  close(): Promise<void>;
}

export function jsonLinesWriter(out: NodeJS.WritableStream = process.stdout): JsonLinesWriter {
  return {
    write: (record) => {
      out.write(`${JSON.stringify(record)}${EOL}`);
    },
    // Written as they come: joined, a long record would be copied once more to flatten them.
    writeJson: (json) => {
      if (typeof json === 'string') out.write(json);
      else for (const piece of json) out.write(piece);
      out.write(EOL);
    },
    writePiece: (piece) => {
      out.write(piece);
    },
    close: () =>
      new Promise((resolve) => {
        if ((out as NodeJS.WriteStream).writableNeedDrain) out.once('drain', () => resolve());
        else resolve();
      }),
  };
}
