/**
 * The format registry: which readers exist, and which one a file needs (`--format auto`).
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { InputError } from '../errors.js';
import type { Session } from '../session/model.js';
import { anthropicMessagesReader } from './anthropic-messages.js';
import { canonicalReader } from './canonical.js';
import { claudeCodeReader, looksLikeSubagentTranscript } from './claude-code.js';
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

/**
 * Claude Code 2.x names subagent transcripts `agent-<hex id>.jsonl`, or `agent-<kind>-<hex id>.jsonl`
 * (`acompact`, `aside_question`), beside the session or in `<session>/subagents/`.
 */
const SUBAGENT_FILE = /^agent-(?:[a-z_]+-)?[0-9a-f]{7,}\.jsonl$/;

/** Bytes read to sniff a file found by walking a directory: its first lines, not the whole file. */
const SNIFF_BYTES = 256 << 10;

/**
 * What a file found by walking a directory holds, from its first lines: a session, a Claude Code
 * subagent transcript (read only when named), or something else. A file whose first line is
 * too long to sniff, or that cannot be read, counts as a session: reading it says what is wrong.
 */
export async function sniffWalkedFile(path: string): Promise<'session' | 'subagent' | 'unknown' | 'empty'> {
  let first: unknown[];
  let size: number;
  try {
    [first, size] = await Promise.all([peekJsonLines(path, DETECTION_LINES, SNIFF_BYTES), stat(path).then((info) => info.size)]);
  } catch {
    return 'session';
  }
  if (first.length === 0) return size === 0 ? 'empty' : size < SNIFF_BYTES ? 'unknown' : 'session';
  if (SUBAGENT_FILE.test(basename(path)) && looksLikeSubagentTranscript(first)) return 'subagent';
  return READERS.some((reader) => reader.detect(first)) ? 'session' : 'unknown';
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
