/**
 * opencode's SQLite database (`~/.local/share/opencode/opencode.db`, 1.2 and later): every
 * session of a user in one file, so a session is read by its address, `<database>#<session id>`
 * (store-address.ts). Tables read: `session` (id, directory, parent), `message` (a session's
 * messages, `data` a JSON text of the message without its ids) and `part` (each message's parts,
 * `data` likewise), in opencode's own order: messages by creation time then id, parts by id.
 * The database is opened without changing it (sqlite-read-only.ts), even while opencode runs;
 * what the rows mean is opencode-messages.ts's. Credentials (`account`, `credential`) and every
 * other table are never read.
 */
import { InputError } from '../errors.js';
import type { AnyMessage, Session } from '../session/model.js';
import type { OpencodeMessageRows } from './opencode-messages.js';
import { opencodeSession } from './opencode-messages.js';
import type { FormatReader, ReadOptions } from './reader.js';
import type { ReadOnlyDatabase } from './sqlite-read-only.js';
import { isSqliteFile, withReadOnlyDatabase } from './sqlite-read-only.js';
import { parseStoreAddress, storeAddress } from './store-address.js';

export const OPENCODE_DB_FORMAT = 'opencode';

const TABLES = ['session', 'message', 'part'] as const;

/** Fails unless the database has opencode's session tables. */
function checkTables(database: ReadOnlyDatabase, path: string): void {
  const names = new Set((database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
  const missing = TABLES.filter((table) => !names.has(table));
  if (missing.length > 0) throw new InputError(`a SQLite database, but not opencode's: no ${missing.join(', ')} table${missing.length === 1 ? '' : 's'}`, path);
}

/** The addresses of every session in an opencode database, oldest first. */
export function opencodeDatabaseSessions(path: string): string[] {
  return withReadOnlyDatabase(path, (database) => {
    checkTables(database, path);
    const rows = database.prepare('SELECT id FROM session ORDER BY time_created, id').all() as { id: string }[];
    return rows.map((row) => storeAddress(path, row.id));
  });
}

/** A row's `data`, parsed; a bad one is an error naming the row. */
function parsedData(text: unknown, address: string, what: string): unknown {
  if (typeof text !== 'string') throw new InputError(`${what}: data is not a JSON text`, address);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`${what}: data is not valid JSON (${(error as Error).message})`, address);
  }
}

interface SessionRow {
  readonly id: string;
  readonly directory: string | null;
}

/** One session's rows, in opencode's order. */
function sessionRows(database: ReadOnlyDatabase, address: string, session: string): { head: SessionRow; rows: OpencodeMessageRows[] } {
  const head = database.prepare('SELECT id, directory FROM session WHERE id = ?').get(session) as SessionRow | undefined;
  if (!head) throw new InputError(`no session ${session} in this opencode database`, address);
  const parts = new Map<string, unknown[]>();
  for (const row of database.prepare('SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id').iterate(session) as Iterable<{ id: string; message_id: string; data: unknown }>) {
    const list = parts.get(row.message_id) ?? [];
    list.push(parsedData(row.data, address, `part ${row.id}`));
    parts.set(row.message_id, list);
  }
  const messages = database.prepare('SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id').all(session) as { id: string; data: unknown }[];
  const rows = messages.map((row) => ({ id: row.id, info: parsedData(row.data, address, `message ${row.id}`), parts: parts.get(row.id) ?? [] }));
  return { head, rows };
}

/** Reads one session of an opencode database, named by its address. */
export async function readOpencodeDatabase(path: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const address = parseStoreAddress(path);
  if (!address) {
    if (!isSqliteFile(path)) throw new InputError('not an opencode session address (<database>#<session id>)', path);
    // Listing the sessions says first why the database cannot be read, if it cannot.
    const count = opencodeDatabaseSessions(path).length;
    throw new InputError(`an opencode database of ${count} session${count === 1 ? '' : 's'}: name the database alone to read them all, or one as <database>#<session id>`, path);
  }
  const { head, rows } = withReadOnlyDatabase(address.store, (database) => {
    checkTables(database, address.store);
    return sessionRows(database, path, address.session);
  });
  return opencodeSession({ path, format: OPENCODE_DB_FORMAT, ...(head.directory ? { directory: head.directory } : {}) }, rows, options);
}

/** An address whose store is a SQLite file: the database's sessions (auto-detection's rule). */
export function isOpencodeDatabaseAddress(path: string): boolean {
  const address = parseStoreAddress(path);
  return address !== null && isSqliteFile(address.store);
}

export const opencodeDatabaseReader: FormatReader = {
  name: OPENCODE_DB_FORMAT,
  // Told by its path, not by its lines.
  detect: () => false,
  detectAddress: isOpencodeDatabaseAddress,
  sessionsIn: (path) => (isSqliteFile(path) ? opencodeDatabaseSessions(path) : null),
  read: readOpencodeDatabase,
};
