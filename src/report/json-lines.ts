/**
 * `--json` output: one JSON object a line (NDJSON) on stdout, through ndjson's serializer, so a
 * pipe downstream can read results while a batch is still running.
 */
import { createRequire } from 'node:module';
import type Ndjson from 'ndjson';

/** Loaded with the first writer: text output never needs it. */
const require = createRequire(import.meta.url);

export interface JsonLinesWriter {
  write(record: Record<string, unknown>): void;
  /** Resolves once everything written has been flushed to stdout. */
  close(): Promise<void>;
}

export function jsonLinesWriter(out: NodeJS.WritableStream = process.stdout): JsonLinesWriter {
  const serializer = (require('ndjson') as typeof Ndjson).stringify();
  serializer.pipe(out, { end: false });
  return {
    write: (record) => {
      serializer.write(record);
    },
    close: () =>
      new Promise((resolve) => {
        serializer.end(() => {
          if ((out as NodeJS.WriteStream).writableNeedDrain) out.once('drain', () => resolve());
          else resolve();
        });
      }),
  };
}
