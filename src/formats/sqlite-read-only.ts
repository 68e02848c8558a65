/**
 * Reads a SQLite database without changing a byte of it or of the files beside it, even while
 * its owner (opencode) has it open and writes to it in WAL mode, where the newest rows (after
 * opencode exits, often all of them) are in `<db>-wal`, not in the database file:
 *
 * - `mode=ro`: the database and its `-wal` are opened read-only, so nothing is checkpointed and
 *   no `-wal` or `-shm` is removed at close;
 * - `readonly_shm=1`: the WAL index (`-shm`) is mapped read-only, so no reader mark is written
 *   into it; when SQLite cannot trust an index it may not write, it reads the WAL itself into
 *   memory, up to its last commit;
 * - a `-wal` without its `-shm` (left by a crash, or a copy of the database that forgot it):
 *   SQLite would create the `-shm` to read it, so the database and its `-wal` are copied into a
 *   private temporary folder and read there (opencode, when it runs, always has the `-shm`).
 *
 * better-sqlite3 is an optional dependency, loaded on first use: a run that reads no database
 * never loads it, and an install where it could not be built says so when a database is read.
 */
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { describeFsError, InputError } from '../errors.js';

export type ReadOnlyDatabase = BetterSqlite3.Database;

/** The first 16 bytes of every SQLite 3 database file. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/** True when `path` is a regular file that starts as a SQLite 3 database does (a pipe is never opened to ask). */
export function isSqliteFile(path: string): boolean {
  let fd: number | undefined;
  try {
    if (!statSync(path).isFile()) return false;
    fd = openSync(path, 'r');
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_MAGIC);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

type DatabaseConstructor = typeof BetterSqlite3;

/** better-sqlite3, loaded once per thread; it reads SQLITE_USE_URI when its addon loads. */
function loadDriver(path: string): DatabaseConstructor {
  // Only a URI can ask for a read-only WAL index (readonly_shm); better-sqlite3 turns URI
  // filenames on from this variable, read once, when the addon loads.
  process.env['SQLITE_USE_URI'] = '1';
  try {
    return createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor;
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new InputError(`a SQLite database, and better-sqlite3 (an optional dependency that reads it) is not installed or not built here (${why}); install it with \`npm install better-sqlite3\`, which needs a C++ compiler`, path);
  }
}

/**
 * The `file:` URI that opens `path` read-only; with a read-only WAL index when there is one to
 * protect (with neither `-wal` nor `-shm`, as SQLite leaves a database it closed cleanly, it
 * reads the main file alone and creates neither; our private copy may have its index made).
 */
function readOnlyUri(path: string, indexReadOnly: boolean): string {
  return `${pathToFileURL(path).href}?mode=ro${indexReadOnly ? '&readonly_shm=1' : ''}`;
}

function openError(path: string, error: unknown): InputError {
  const message = error instanceof Error ? error.message : String(error);
  return new InputError(`cannot read the SQLite database: ${message}`, path);
}

/**
 * `work` with the database at `path` open read-only (see the header); the connection is closed
 * when it returns. Errors from SQLite become an InputError naming the database.
 */
export function withReadOnlyDatabase<T>(path: string, work: (database: ReadOnlyDatabase) => T): T {
  if (!existsSync(path)) throw new InputError(`cannot read: ${describeFsError({ code: 'ENOENT' })}`, path);
  const Database = loadDriver(path);
  const wal = existsSync(`${path}-wal`);
  const index = existsSync(`${path}-shm`);
  const copy = wal && !index ? privateCopy(path) : null;
  let database: ReadOnlyDatabase;
  try {
    database = new Database(readOnlyUri(copy?.database ?? path, copy === null && index), { readonly: true, fileMustExist: true });
  } catch (error) {
    copy?.remove();
    throw openError(path, error);
  }
  try {
    return work(database);
  } catch (error) {
    if (error instanceof InputError) throw error;
    if (error instanceof Database.SqliteError) throw openError(path, error);
    throw error;
  } finally {
    database.close();
    copy?.remove();
  }
}

/** The database and its `-wal`, copied into a private folder; `remove` deletes the folder. */
function privateCopy(path: string): { readonly database: string; readonly remove: () => void } {
  const folder = mkdtempSync(join(tmpdir(), 'compactor-sqlite-'));
  const remove = () => rmSync(folder, { recursive: true, force: true });
  try {
    const database = join(folder, basename(path));
    copyFileSync(path, database);
    copyFileSync(`${path}-wal`, `${database}-wal`);
    return { database, remove };
  } catch (error) {
    remove();
    throw new InputError(`cannot read: ${describeFsError(error)}`, path);
  }
}
