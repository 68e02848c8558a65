/**
 * Where a command's results go: NDJSON records with --json, text otherwise; warnings and
 * failures on stderr as one line each (`compactor: file:line: message`).
 */
import type { Diagnostic } from '../session/model.js';
import type { JsonLinesWriter } from '../report/json-lines.js';
import { jsonLinesWriter } from '../report/json-lines.js';

export interface CommandOutput {
  readonly json: boolean;
  /** A per-session result: one NDJSON line with --json; otherwise `human` (if any) on stdout. */
  record(record: Record<string, unknown>, human?: () => string): void;
  warn(diagnostic: Diagnostic | string): void;
  close(): Promise<void>;
}

export function formatDiagnostic(diagnostic: Diagnostic | string): string {
  if (typeof diagnostic === 'string') return diagnostic;
  return diagnostic.line === undefined ? `${diagnostic.file}: ${diagnostic.message}` : `${diagnostic.file}:${diagnostic.line}: ${diagnostic.message}`;
}

export function createOutput(json: boolean): CommandOutput {
  const writer: JsonLinesWriter | null = json ? jsonLinesWriter() : null;
  return {
    json,
    record(record, human) {
      if (writer) writer.write(record);
      else if (human) process.stdout.write(`${human()}\n`);
    },
    warn(diagnostic) {
      process.stderr.write(`compactor: warning: ${formatDiagnostic(diagnostic)}\n`);
    },
    close: async () => {
      await writer?.close();
    },
  };
}

/** A failed session: an NDJSON record with --json (so pipelines see it), a stderr line otherwise. */
export function reportFailure(output: CommandOutput, path: string, error: string): void {
  if (output.json) output.record({ session: path, status: 'failed', error });
  else process.stderr.write(`compactor: error: ${locatedError(path, error)}\n`);
}

/** `path: message`, unless the message already starts with the path (`path:line: …`). */
export function locatedError(path: string, error: string): string {
  return error.startsWith(path) ? error : `${path}: ${error}`;
}
