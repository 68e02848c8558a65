/**
 * What the CLI says on stderr while it works: warnings, errors, notes, the summarizer's request
 * lines and the compaction events (`compaction_start`, `compaction_end`). `--log-format text`
 * (the default) writes `compactor: …` lines, the events only with --verbose; `--log-format json`
 * writes one JSON object a line, events always: `{"time", "level", "event", …fields}`. Every
 * line goes above the progress bar when one is drawn. What is logged is the callers'; no event
 * ever carries an API key (the summarizer's lines are redacted before they reach here).
 */
import type { Diagnostic } from '../session/model.js';
import { printable, printableText } from '../report/format.js';
import { writeAbove } from '../report/progress.js';

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type LogLevel = 'info' | 'warning' | 'error';

/** An event's fields: plain JSON values. */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** A named event as a worker thread collects it (plain data), to be written by this thread. */
export interface LogEvent {
  readonly time: string;
  readonly event: string;
  readonly fields: LogFields;
}

interface LogSettings {
  readonly format: LogFormat;
  /** Text events (and the summarizer's request lines) only with --verbose. */
  readonly verbose: boolean;
}

let settings: LogSettings = { format: 'text', verbose: false };

/** Set once per run, from the command's flags, before it logs anything. */
export function configureLog(format: LogFormat, verbose = false): void {
  settings = { format, verbose };
}

export function logFormat(): LogFormat {
  return settings.format;
}

function write(line: string): void {
  // A JSON event has no control character left in it; a text line may hold a file's name.
  writeAbove(process.stderr, `${printableText(line)}\n`);
}

function jsonLine(time: string, level: LogLevel, event: string, fields: LogFields): string {
  return JSON.stringify({ time, level, event, ...fields });
}

/** `key=value` pairs; strings quoted when they hold a space, a quote or nothing. */
function textFields(fields: LogFields): string {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' && (value === '' || /[\s"]/.test(value)) ? JSON.stringify(value) : String(value)}`)
    .join(' ');
}

/** A named event now (`compaction_start`…). */
export function logEvent(event: string, fields: LogFields): void {
  writeEvent({ time: new Date().toISOString(), event, fields });
}

/** An event collected earlier (in a worker), with the time it happened. */
export function writeEvent({ time, event, fields }: LogEvent): void {
  if (settings.format === 'json') write(jsonLine(time, fields['status'] === 'failed' ? 'error' : 'info', event, fields));
  else if (settings.verbose) write(`compactor: ${event} ${textFields(fields)}`);
}

/** A message at a level: `compactor: warning: …` in text, `{"level": "warning", "event": "warning", "message": …}` in JSON. */
export function logMessage(level: LogLevel, message: string, fields: LogFields = {}): void {
  if (settings.format === 'json') write(jsonLine(new Date().toISOString(), level, level === 'info' ? 'notice' : level, { message, ...fields }));
  else write(`compactor: ${level === 'info' ? '' : `${level}: `}${message}`);
}

/** `file:line: message`, the shape of compiler and jq diagnostics. */
export function formatDiagnostic(diagnostic: Diagnostic | string): string {
  if (typeof diagnostic === 'string') return diagnostic;
  const file = printable(diagnostic.file);
  return diagnostic.line === undefined ? `${file}: ${diagnostic.message}` : `${file}:${diagnostic.line}: ${diagnostic.message}`;
}

/** A recoverable oddity: `compactor: warning: file:line: message`, or its JSON event with `file` and `line`. */
export function logWarning(diagnostic: Diagnostic | string): void {
  if (settings.format === 'json' && typeof diagnostic !== 'string') logMessage('warning', diagnostic.message, { file: diagnostic.file, line: diagnostic.line });
  else logMessage('warning', formatDiagnostic(diagnostic));
}

/** A line from the summarizer's client (requests with --verbose, retries, SDK warnings). */
export function logSummarizer(line: string): void {
  if (settings.format === 'json') write(jsonLine(new Date().toISOString(), 'info', 'summarizer', { message: line }));
  else write(`compactor: llm: ${line}`);
}
