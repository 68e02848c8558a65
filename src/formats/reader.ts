/**
 * The one interface every on-disk format implements. A reader turns a file into the session
 * model; it never knows which command asked.
 */
import type { AnyMessage, Message, Session } from '../session/model.js';
import type { DocumentHead } from './json/json-document.js';

export interface ReadOptions {
  /**
   * Called on every message as the reader finishes it; the reader keeps what it returns instead.
   * The lean read (read/slim.ts) drops text here, so memory does not grow with file size.
   * Calls come in session order, except from a reader that learns the order only at the end of
   * the file (Claude Code's parent chain): it hands messages over in file order, and some may
   * then be left out of the session (abandoned branches) or placed elsewhere. A reader that never
   * calls it stays correct: the caller sees full messages.
   */
  readonly keep?: (message: Message) => AnyMessage;
  /**
   * `keep` reads nothing of the text of text, thinking and tool-result blocks but its length
   * (`.length`: chars/4 estimates, block sizes), and what it returns holds none of it. A reader
   * may then hand `keep` stand-ins of the same length instead of long texts it never decoded
   * (the Claude Code reader: claude-code-lengths.ts). Never set when the text is hashed, counted
   * by a tokenizer, or kept.
   */
  readonly textLengthsOnly?: boolean;
  /** The files beside the session whose calls are its spend, as its walk found them (companions.ts); absent, the reader finds them. */
  readonly companions?: Companions;
}

/** The files beside a session whose calls are its spend (companions.ts), each list sorted. */
export interface Companions {
  /** Claude Code's subagent transcripts (claude-code-subagents.ts): what a Claude Code read counts. */
  readonly subagentTranscripts: readonly string[];
  /** Codex's review rollouts (codex-reviews.ts): what a Codex read counts. */
  readonly reviewRollouts: readonly string[];
}

export interface FormatReader {
  /** The name users pass to `--format`. */
  readonly name: string;
  /** True when the first parsed lines of a file look like this format. */
  detect(firstLines: readonly unknown[]): boolean;
  /**
   * For a format stored as one JSON document spread over lines (its first line is no JSON value
   * of its own): true when the document's head looks like this format. Line formats leave it out.
   */
  detectDocument?(head: DocumentHead): boolean;
  /**
   * For a format whose sessions live in a store holding many (opencode's database and its JSON
   * storage), told by its path rather than its lines: true when `path` is the address of one of
   * its sessions (`<store>#<session id>`, store-address.ts). Asked before any line is read.
   */
  detectAddress?(path: string): boolean;
  /**
   * For such a format: the addresses of the sessions a file stands for (a database: all of its
   * sessions; a JSON storage session file: its own), or null when the file is not this format's.
   * Bad input (a database that cannot be read) throws an InputError.
   */
  sessionsIn?(path: string): readonly string[] | null;
  /**
   * Reads the whole file, streaming, into a session. Bad input throws an InputError. Its messages
   * are what `keep` returned, or full messages without it (formats/index.ts readSession).
   */
  read(path: string, options?: ReadOptions): Promise<Session<AnyMessage>>;
}
