/**
 * The one interface every on-disk format implements. A reader turns a file into the session
 * model; it never knows which command asked.
 */
import type { Session } from '../session/model.js';

export interface FormatReader {
  /** The name users pass to `--format`. */
  readonly name: string;
  /** True when the first parsed lines of a file look like this format. */
  detect(firstLines: readonly unknown[]): boolean;
  /** Reads the whole file, streaming, into a session. Bad input throws an InputError. */
  read(path: string): Promise<Session>;
}
