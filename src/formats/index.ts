/**
 * The format registry: which readers exist, and which one a file needs (`--format auto`).
 */
import { InputError } from '../errors.js';
import type { AnyMessage, Session } from '../session/model.js';
import { toolPairingDiagnostics } from '../session/tool-pairing.js';
import { anthropicMessagesReader } from './anthropic-messages.js';
import { canonicalReader } from './canonical.js';
import { claudeCodeReader } from './claude-code.js';
import { headOf, subagentTranscript } from './claude-code-subagents.js';
import { codexReader } from './codex.js';
import { SessionFolders } from './companions.js';
import { geminiCliReader } from './gemini-cli.js';
import { holdInput } from './json/input-source.js';
import type { DocumentHead } from './json/json-document.js';
import { peekDocumentHead } from './json/json-document.js';
import type { JsonLine } from './json/jsonl-lines.js';
import type { Peek, PeekSettled } from './json/line-scan.js';
import { deepestNesting } from './json/line-scan.js';
import { isJsonObject, jsonKind, peekJsonLines, readJsonLines } from './json/jsonl-lines.js';
import { openAiChatReader } from './openai-chat.js';
import { opencodeDatabaseReader } from './opencode-db.js';
import { opencodeStorageReader } from './opencode-json.js';
import { piReader } from './pi.js';
import type { FormatReader, ReadOptions } from './reader.js';
import type { SniffedFormat } from './sniffed.js';
import { formatIfUnchanged } from './sniffed.js';
import { isSqliteFile } from './sqlite-read-only.js';
import { tracingReader } from './tracing.js';

/**
 * In detection order: the most specific shapes first. Agent transcripts have a `type` on every
 * line and come before the plain API-message logs; tracing logs are recognized last. A file
 * that is one JSON document spread over lines (Gemini CLI) is told by its head instead, and a
 * session in a store holding many (opencode's database and JSON storage) by its address.
 */
export const READERS: readonly FormatReader[] = [
  canonicalReader,
  claudeCodeReader,
  codexReader,
  piReader,
  geminiCliReader,
  opencodeDatabaseReader,
  opencodeStorageReader,
  anthropicMessagesReader,
  openAiChatReader,
  tracingReader,
];

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

/** The first reader that recognises a file's first values (the detection rule the walk's sniff shares). */
function readerForHead(first: readonly unknown[]): FormatReader | undefined {
  return READERS.find((candidate) => candidate.detect(first));
}

/** The reader for a JSON document's head (a format stored as one document, not as lines). */
function readerForDocument(head: DocumentHead): FormatReader | undefined {
  return READERS.find((candidate) => candidate.detectDocument?.(head));
}

function unknownFormat(path: string, what = 'unknown session format'): InputError {
  return new InputError(`${what} (try --format; known: ${FORMAT_NAMES.slice(1).join(', ')})`, path);
}

/**
 * The reader for a file: from its first JSON lines, or, when its first line is no JSON value of
 * its own, from the head of the one JSON document it holds.
 */
export async function detectFormat(path: string): Promise<FormatReader> {
  const stored = READERS.find((candidate) => candidate.detectAddress?.(path));
  if (stored) return stored;
  // A database named without a session: its reader says how to name one (or why it cannot be read).
  if (isSqliteFile(path)) return opencodeDatabaseReader;
  let lines: JsonLine[];
  try {
    lines = await firstJsonLines(path);
  } catch (error) {
    const document = error instanceof InputError ? peekDocumentHead(path) : null;
    if (!document) throw error;
    const reader = readerForDocument(document);
    if (!reader) throw unknownFormat(path, 'unknown session format: one JSON document that no reader knows');
    return reader;
  }
  const head = lines[0]!;
  if (!isJsonObject(head.value)) throw new InputError(`expected one JSON object a line, got ${jsonKind(head.value)}`, path, head.line);
  const reader = readerForHead(lines.map((line) => line.value));
  if (!reader) throw unknownFormat(path);
  return reader;
}

/** Bytes read to sniff a file found by walking a directory: its first lines, not the whole file. */
const SNIFF_BYTES = 256 << 10;

/**
 * Whether a walked file's first value alone settles its detection (readerForHead), so the sniff
 * parses none of its next lines (for a small session those were most of its bytes). canonical
 * comes first and looks at the first value only; Claude Code comes next and needs one line of
 * its own among the first: once the first is one, more lines cannot change the reader found.
 * Its later lines are then left to the read, which reports a bad one as detection would have.
 */
const settledByFirstValue: PeekSettled = (values) =>
  values.length === 1 && READERS[0] === canonicalReader && READERS[1] === claudeCodeReader && (canonicalReader.detect(values) || claudeCodeReader.detect(values));

/** What a subagent's file is called in notes: its calls are counted in its session's spend. */
export type SubagentLabel = 'Claude Code subagent transcript' | 'Codex review rollout';

/**
 * What a file found by walking a directory holds, from its first lines (or, for one JSON
 * document spread over lines, from the document's head): a session, a subagent's file whose
 * calls its session counts (a Claude Code subagent transcript: claude-code-subagents.ts; a Codex
 * review rollout beside its session: codex-reviews.ts), with the session file it belongs to, or
 * something else.
 */
export type WalkedFile =
  | { readonly kind: 'session'; readonly sniffed?: SniffedFormat }
  | { readonly kind: 'sessions'; readonly addresses: readonly string[] }
  | { readonly kind: 'unknown' | 'empty' }
  | { readonly kind: 'subagent'; readonly parent: string | null; readonly label: SubagentLabel };

const SESSION: WalkedFile = { kind: 'session' };

/** A session whose format the sniff found: it goes with the path to the read (sniffed.ts). */
function sniffedSession(format: string, peek: Peek): WalkedFile {
  const seen = peek.settled ? 'first value' : 'head';
  return { kind: 'session', sniffed: { format, seen, size: peek.size, mtimeMs: peek.mtimeMs } };
}

/**
 * `head` gives the file's first lines; it is asked for only when the file's name or place could be
 * a subagent's. `folders`: what the walk has read of the folders so far.
 */
function subagentOf(path: string, head: () => readonly unknown[], folders: SessionFolders): WalkedFile | undefined {
  let lines: readonly unknown[] | undefined;
  const first = () => (lines ??= head());
  const transcript = subagentTranscript(path, first);
  if (transcript) return { kind: 'subagent', parent: transcript.parent, label: 'Claude Code subagent transcript' };
  const parent = folders.rollouts.reviewParent(path, () => first()[0]);
  return parent ? { kind: 'subagent', parent, label: 'Codex review rollout' } : undefined;
}

/**
 * What a walked file holds (WalkedFile). A file whose first line is too long to sniff, or that
 * cannot be read, counts as a session (reading it says what is wrong), unless its place makes it
 * a subagent transcript. When the sniff saw exactly the lines detectFormat would parse, all
 * valid, the format found comes with it (sniffed.ts), so reading the session does not detect it
 * again. `folders`: what the walk has read of the folders so far (a file sniffed alone reads its own).
 */
export function sniffWalkedFile(path: string, folders: SessionFolders = new SessionFolders()): WalkedFile {
  if (!isLineFileName(path)) {
    try {
      const addresses = storedSessions(path);
      if (addresses) return { kind: 'sessions', addresses };
    } catch {
      // A store that cannot be read: reading it as a session says why.
      return SESSION;
    }
  }
  let peek: Peek;
  try {
    peek = peekJsonLines(path, DETECTION_LINES, SNIFF_BYTES, settledByFirstValue);
  } catch {
    return subagentOf(path, () => [], folders) ?? SESSION;
  }
  const first = peek.values;
  // The subagent checks read up to DETECTION_LINES lines: a peek that stopped short is taken again whole (rare: by name or place).
  const subagent = subagentOf(path, () => (peek.settled ? headOf(path) : first), folders);
  if (subagent) return subagent;
  if (peek.size > 0 && (!peek.whole || !isJsonObject(first[0]))) {
    // Not plain JSON lines: perhaps one JSON document spread over lines (a Gemini CLI chat).
    const document = peekDocumentHead(path);
    if (document) {
      const reader = readerForDocument(document);
      // Detection reads the same head, so the format found holds for the read.
      return reader ? sniffedSession(reader.name, peek) : { kind: 'unknown' };
    }
  }
  if (first.length === 0) return { kind: peek.size === 0 ? 'empty' : peek.size < SNIFF_BYTES ? 'unknown' : 'session' };
  const reader = readerForHead(first);
  if (!reader) return { kind: 'unknown' };
  // detectFormat also insists on an object first; otherwise it is left to say what is wrong.
  return peek.whole && isJsonObject(first[0]) ? sniffedSession(reader.name, peek) : SESSION;
}

/** JSON lines and compressed files: never a store of sessions, so never opened to ask. */
function isLineFileName(path: string): boolean {
  return /\.(jsonl|gz|zst)$/i.test(path);
}

/**
 * The addresses of the sessions a file stands for when it is a store of a format that keeps
 * many sessions in one (opencode's database: all of them; a JSON storage session file: its
 * own), else null. A store that cannot be read throws its InputError.
 */
export function storedSessions(path: string): readonly string[] | null {
  if (isLineFileName(path)) return null;
  for (const reader of READERS) {
    const addresses = reader.sessionsIn?.(path);
    if (addresses) return addresses;
  }
  return null;
}

/**
 * For a file named on the command line: the session file it belongs to when it is a subagent's
 * file its session counts (a Claude Code subagent transcript, a Codex review rollout beside its
 * session), else null.
 */
export function namedSubagentParent(path: string, folders: SessionFolders): { readonly parent: string; readonly label: SubagentLabel } | null {
  const found = subagentOf(path, () => headOf(path), folders);
  return found?.kind === 'subagent' && found.parent !== null ? { parent: found.parent, label: found.label } : null;
}

export function readerByName(name: string): FormatReader {
  const reader = READERS.find((candidate) => candidate.name === name);
  if (!reader) throw new InputError(`unknown format ${JSON.stringify(name)} (known: ${FORMAT_NAMES.join(', ')})`);
  return reader;
}

/**
 * The reader for a file: the one named, or for `auto` the one its walk sniffed (sniffed.ts), if
 * the file is unchanged since, or else the one detected.
 */
export async function readerFor(path: string, format: string, sniffed?: SniffedFormat | null): Promise<FormatReader> {
  if (format !== 'auto') return readerByName(format);
  const known = formatIfUnchanged(path, sniffed);
  return known !== null ? readerByName(known) : detectFormat(path);
}

/** `auto` resolved to the format a file is in (as readSession would), for a caller that reads it more than once. */
export async function resolveFormat(path: string, format: string, sniffed?: SniffedFormat | null): Promise<string> {
  return (await readerFor(path, format, sniffed)).name;
}

/** What a read of full messages may be told: no `keep`, so every message comes as built. */
type FullReadOptions = Omit<ReadOptions, 'keep' | 'textLengthsOnly'> & { readonly keep?: undefined; readonly textLengthsOnly?: undefined };

/**
 * Reads a session in the given format, or the detected one for `auto`, and adds the checks
 * every format shares (tool calls and results pair up) to its warnings. A session from stdin,
 * a pipe or a compressed file is read once for detection and the read (input-source.ts).
 */
export function readSession(path: string, format?: string, options?: FullReadOptions): Promise<Session>;
/** With `keep`: the session holds what `keep` returned (a lean read's slim messages), or full messages. */
export function readSession(path: string, format: string, options: ReadOptions, sniffed?: SniffedFormat | null): Promise<Session<AnyMessage>>;
export async function readSession(path: string, format = 'auto', options?: ReadOptions, sniffed?: SniffedFormat | null): Promise<Session<AnyMessage>> {
  return (await readSessionFile(path, format, options, sniffed)).session;
}

/**
 * One whole read of a session file, in one call (read/index.ts reads through it): the input held
 * for detection and the read, the reader the format names (as readerFor), the read with
 * `options` (a lean read's keep hook), a too-deep value reported where it is (nestingError), and
 * the checks every format shares. The reader's name comes back with the session: a second read
 * names it, and the file is not detected again. A caller that reads again holds the input
 * across its reads itself (nested holds share one).
 */
export function readSessionFile(path: string, format: string, options: FullReadOptions | undefined, sniffed?: SniffedFormat | null): Promise<{ readonly session: Session; readonly format: string }>;
/** With `keep`: the session holds what `keep` returned (a lean read's slim messages), or full messages. */
export function readSessionFile(path: string, format: string, options?: ReadOptions, sniffed?: SniffedFormat | null): Promise<{ readonly session: Session<AnyMessage>; readonly format: string }>;
export async function readSessionFile(path: string, format: string, options?: ReadOptions, sniffed?: SniffedFormat | null): Promise<{ readonly session: Session<AnyMessage>; readonly format: string }> {
  // Detection and the read each read the file: a pipe's bytes are held for both (input-source.ts).
  const release = await holdInput(path);
  try {
    const reader = await readerFor(path, format, sniffed);
    return { session: withSharedChecks(path, await reader.read(path, options)), format: reader.name };
  } catch (error) {
    // Detection would have parsed lines the sniff left (sniffed.ts): its error comes first.
    if (format === 'auto' && sniffed?.seen === 'first value') await detectFormat(path);
    throw nestingError(path, error);
  } finally {
    release();
  }
}

/**
 * A session file read again by the reader a first read found (`format`, a reader's name: the file
 * is not detected again), with `options` (the caller's keep hook). The reader's session as it
 * is: the shared checks were the first read's.
 */
export async function readAgain(path: string, format: string, options: ReadOptions): Promise<Session<AnyMessage>> {
  const reader = readerByName(format);
  try {
    return await reader.read(path, options);
  } catch (error) {
    throw nestingError(path, error);
  }
}

/** A session as a reader returned it, with the checks every format shares (tool pairing) added to its warnings. */
export function withSharedChecks<M extends AnyMessage>(path: string, session: Session<M>): Session<M> {
  const pairing = toolPairingDiagnostics(path, session.messages);
  return pairing.length === 0 ? session : { ...session, warnings: [...session.warnings, ...pairing] };
}

/**
 * A value nested too deeply for a recursive walk (JSON.stringify, a hash: V8's stack gives out a
 * few thousand levels down, where JSON.parse does not) as bad input at the line where it is,
 * instead of "Maximum call stack size exceeded"; any other error as it is. Call it while the
 * session's input is held (input-source.ts): the line is found by reading it again.
 */
export function nestingError(path: string, error: unknown): unknown {
  if (!(error instanceof RangeError) || !/call stack/i.test(error.message)) return error;
  const { line, depth } = deepestNesting(path);
  return new InputError(`a JSON value nested ${depth.toLocaleString('en-US')} levels deep, too deep to process`, path, line > 0 ? line : undefined);
}
