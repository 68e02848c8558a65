/**
 * What every fork writer is given and gives back, and the helpers they share: the original
 * file's raw lines (a fork copies what the agent wrote, not our reading of it), where the kept
 * part starts, and why a session cannot be forked. Writing the file is index.ts's.
 */
import { readFileSync } from 'node:fs';
import type { CompactionState } from '../compaction/state.js';
import { describeFsError, InputError } from '../errors.js';
import type { Message, Session } from '../session/model.js';

/** A session and the compaction its fork records. */
export interface ForkSource {
  /** The original session file (never written). */
  readonly path: string;
  /** The session read in full. */
  readonly session: Session;
  /** The compaction: a summary of messages before `firstKeptIndex`. */
  readonly state: CompactionState;
  /** Index in `session.messages` of the first message kept verbatim. */
  readonly firstKeptIndex: number;
  /** The provider view the compaction defines (summary, acknowledgement, kept messages, repaired). */
  readonly view: readonly Message[];
  /** History the agent loads from a parent before this file's lines, oldest first (Codex forks since 0.148); else empty. */
  readonly inherited: readonly InheritedHistory[];
}

/** Part of a parent session the agent loads first: its messages, with the file's raw lines and where its recorded compactions are. */
export interface InheritedHistory {
  readonly messages: readonly Message[];
  readonly lines: readonly string[];
  /** Indexes in `messages` of the messages a recorded compaction became. */
  readonly recordedAt: ReadonlySet<number>;
  /** The items the agent injected into it (instructions, environment), as the file holds them: a fork keeps them. */
  readonly injected: readonly unknown[];
}

export interface ForkOptions {
  /** Where the fork goes; default: where the agent looks for it (beside the original). */
  readonly outDir?: string;
  /** The fork's creation time (new ids and file names take it). */
  readonly now: Date;
}

/** A fork ready to be written. */
export interface ForkFile {
  readonly path: string;
  /** The new session's id, as the agent names it. */
  readonly sessionId: string;
  readonly text: string;
  /** The command line that continues the fork; null for a log no agent resumes. */
  readonly resume: string | null;
  /**
   * The context before and after the fork, in estimated tokens: the compaction's own figures,
   * unless the agent sends the summarized part otherwise than the file holds it (Codex).
   */
  readonly tokens: { readonly before: number; readonly after: number };
}

export type ForkWriter = (source: ForkSource, options: ForkOptions) => ForkFile;

/** The raw lines of a JSONL file, by 1-based line number (index 0 unused), as the readers count them. */
export function rawLines(path: string): readonly string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, path);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return ['', ...text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))];
}

/** One raw line parsed (the reader already read it, so it is JSON). */
export function lineRecord(lines: readonly string[], line: number): Record<string, unknown> {
  return JSON.parse(lines[line]!) as Record<string, unknown>;
}

/** The summary as the fork's summary message carries it: the view's own first message. */
export function viewSummaryText(source: ForkSource): string {
  const first = source.view[0]?.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** The compaction's context before and after: a fork whose agent sends the file as it is. */
export function compactionTokens(source: ForkSource): ForkFile['tokens'] {
  return { before: source.state.tokens_before, after: source.state.tokens_after };
}

/** A quoted shell word (paths with spaces). */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The file name's timestamp the agents use: ISO time with `:` and `.` made `-`. */
export function fileStamp(now: Date): string {
  return now.toISOString().replace(/[:.]/g, '-');
}

/**
 * Agents that answer a call left open themselves when they resume: Codex sends `aborted` as its
 * output (seen with 0.169: it sends the answer and writes nothing), and so does its fork.
 */
const ANSWERS_OPEN_CALLS = new Set(['codex']);

/** Why an agent cannot continue this session, or null: a last message still waiting for its tool results. */
export function unresumableReason(session: Session): InputError | null {
  if (ANSWERS_OPEN_CALLS.has(session.format)) return null;
  const last = session.messages.at(-1);
  if (last?.role !== 'assistant') return null;
  const calls = last.content.filter((block) => block.type === 'tool_request');
  if (calls.length === 0) return null;
  const call = calls[0]!;
  return new InputError(
    `cannot fork: the session ends inside a tool call (${call.name} ${JSON.stringify(call.id)} has no result yet), so the agent could not continue it; fork it once the call has its result`,
    session.path,
    last.line,
  );
}
