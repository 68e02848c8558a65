/**
 * The format registry: which readers exist, and which one a file needs (`--format auto`).
 */
import { InputError } from '../errors.js';
import type { Session } from '../session/model.js';
import { toolPairingDiagnostics } from '../session/tool-pairing.js';
import { canonicalReader } from './canonical.js';
import type { JsonLine } from './jsonl-lines.js';
import { isJsonObject, jsonKind, readJsonLines } from './jsonl-lines.js';
import type { FormatReader } from './reader.js';

/** In detection order: the most specific shapes first. */
export const READERS: readonly FormatReader[] = [canonicalReader];

export const FORMAT_NAMES: readonly string[] = ['auto', ...READERS.map((reader) => reader.name)];

const DETECTION_LINES = 20;

/** The first lines of a file; a bad line among them is reported where it is, not as "unknown format". */
async function firstJsonLines(path: string): Promise<JsonLine[]> {
  const lines: JsonLine[] = [];
  let incomplete: number | undefined;
  for await (const line of readJsonLines(path, (warning) => (incomplete = warning.line))) {
    lines.push(line);
    if (lines.length >= DETECTION_LINES) break;
  }
  if (lines.length === 0) {
    const why = incomplete === undefined ? 'empty file: no JSON lines to read' : 'no complete JSON line yet (file still being written?)';
    throw new InputError(why, path, incomplete);
  }
  return lines;
}

export async function detectFormat(path: string): Promise<FormatReader> {
  const lines = await firstJsonLines(path);
  const head = lines[0]!;
  if (!isJsonObject(head.value)) throw new InputError(`expected one JSON object a line, got ${jsonKind(head.value)}`, path, head.line);
  const first = lines.map((line) => line.value);
  const reader = READERS.find((candidate) => candidate.detect(first));
  if (!reader) throw new InputError(`unknown session format (try --format; known: ${FORMAT_NAMES.slice(1).join(', ')})`, path);
  return reader;
}

export function readerByName(name: string): FormatReader {
  const reader = READERS.find((candidate) => candidate.name === name);
  if (!reader) throw new InputError(`unknown format ${JSON.stringify(name)} (known: ${FORMAT_NAMES.join(', ')})`);
  return reader;
}

/**
 * Reads a session in the given format, or the detected one for `auto`, and adds the checks
 * every format shares (tool calls and results pair up) to its warnings.
 */
export async function readSession(path: string, format = 'auto'): Promise<Session> {
  const reader = format === 'auto' ? await detectFormat(path) : readerByName(format);
  const session = await reader.read(path);
  const pairing = toolPairingDiagnostics(path, session.messages);
  return pairing.length === 0 ? session : { ...session, warnings: [...session.warnings, ...pairing] };
}
