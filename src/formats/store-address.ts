/**
 * How a session that lives in a store holding many is named: the store's path, `#`, and the
 * session's id. opencode keeps every session of a user in one SQLite database
 * (`opencode.db#ses_4f2…`), and before 1.2 in one folder of JSON files (`storage#ses_4f2…`). The
 * address is the session's path everywhere a file's path would be: in reports, in `--json`, as
 * the name its sidecar and lock are made from (`opencode.db#ses_4f2…_compaction.json`, beside the
 * store). A path that exists as it is, `#` and all, is a file, never an address.
 */
import { existsSync } from 'node:fs';

export const ADDRESS_SEPARATOR = '#';

export interface StoreAddress {
  /** The store: a database file, or a storage folder. */
  readonly store: string;
  /** The session's id in it. */
  readonly session: string;
}

/** The address of session `session` in `store`. */
export function storeAddress(store: string, session: string): string {
  return `${store}${ADDRESS_SEPARATOR}${session}`;
}

/** A session id as opencode writes them (`ses_` and letters or digits), checked before it names a file. */
const SESSION_ID = /^[A-Za-z0-9_-]+$/;

/**
 * The store and session an address names, or null: for a path that exists as it is, that has no
 * `#`, or whose part before the last `#` does not exist.
 */
export function parseStoreAddress(path: string): StoreAddress | null {
  const at = path.lastIndexOf(ADDRESS_SEPARATOR);
  if (at <= 0) return null;
  const store = path.slice(0, at);
  const session = path.slice(at + 1);
  if (!SESSION_ID.test(session) || existsSync(path) || !existsSync(store)) return null;
  return { store, session };
}
