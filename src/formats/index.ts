/**
 * The format registry: which readers exist, and which one a file needs (`--format auto`).
 */
import { InputError } from '../errors.js';
import type { Session } from '../session/model.js';
import { anthropicMessagesReader } from './anthropic-messages.js';
import { canonicalReader } from './canonical.js';
import { claudeCodeReader } from './claude-code.js';
import { codexReader } from './codex.js';
import { peekJsonLines } from './jsonl-lines.js';
import { openAiChatReader } from './openai-chat.js';
import { piReader } from './pi.js';
import type { FormatReader } from './reader.js';
import { tracingReader } from './tracing.js';

/**
 * In detection order: the most specific shapes first. Agent transcripts have a `type` on every
 * line and come before the plain API-message logs; tracing logs are recognized last.
 */
export const READERS: readonly FormatReader[] = [
  canonicalReader,
  claudeCodeReader,
  codexReader,
  piReader,
  anthropicMessagesReader,
  openAiChatReader,
  tracingReader,
];

export const FORMAT_NAMES: readonly string[] = ['auto', ...READERS.map((reader) => reader.name)];

const DETECTION_LINES = 20;

export async function detectFormat(path: string): Promise<FormatReader> {
  const first = await peekJsonLines(path, DETECTION_LINES);
  if (first.length === 0) throw new InputError('empty file: no JSON lines to read', path);
  const reader = READERS.find((candidate) => candidate.detect(first));
  if (!reader) throw new InputError(`unknown session format (try --format; known: ${FORMAT_NAMES.slice(1).join(', ')})`, path);
  return reader;
}

export function readerByName(name: string): FormatReader {
  const reader = READERS.find((candidate) => candidate.name === name);
  if (!reader) throw new InputError(`unknown format ${JSON.stringify(name)} (known: ${FORMAT_NAMES.join(', ')})`);
  return reader;
}

/** Reads a session in the given format, or the detected one for `auto`. */
export async function readSession(path: string, format = 'auto'): Promise<Session> {
  const reader = format === 'auto' ? await detectFormat(path) : readerByName(format);
  return reader.read(path);
}
