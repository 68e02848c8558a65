/**
 * The one interface every on-disk format implements. A reader turns a file into the session
 * model; it never knows which command asked.
 */
import type { Message, Session } from '../session/model.js';

export interface ReadOptions {
  /**
   * Called on every message as the reader finishes it, in session order; the reader keeps what
   * it returns instead. The lean path (session/slim.ts) drops text here, so memory does not grow
   * with file size. A reader that never calls it stays correct: the caller sees full messages.
   */
  readonly keep?: (message: Message) => Message;
}

export interface FormatReader {
  /** The name users pass to `--format`. */
  readonly name: string;
  /** True when the first parsed lines of a file look like this format. */
  detect(firstLines: readonly unknown[]): boolean;
  /** Reads the whole file, streaming, into a session. Bad input throws an InputError. */
  read(path: string, options?: ReadOptions): Promise<Session>;
}
