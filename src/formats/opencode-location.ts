/**
 * Where opencode keeps its sessions, and the names it gives them: its data folder is
 * `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode` (opencode's own rule, on every
 * platform); in it the database `opencode.db` (`opencode-<channel>.db` for a build of another
 * channel) and, from before 1.2, the JSON storage folder `storage/` (`session/<project>/<id>.json`,
 * `message/<session>/`, `part/<message>/`). Pure: the environment and home folder are passed in.
 */
import { join } from 'node:path';

/** opencode's data folder for this environment. */
export function opencodeDataDir(env: NodeJS.ProcessEnv, home: string): string {
  const xdg = env['XDG_DATA_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(home, '.local', 'share'), 'opencode');
}

/** The files that hold opencode's sessions under its data folder (a walk of it finds them). */
export function opencodeSessionStores(dataDir: string): { readonly database: string; readonly storage: string } {
  return { database: join(dataDir, 'opencode.db'), storage: join(dataDir, 'storage') };
}

/** A database file's name as opencode gives it: `opencode.db`, or `opencode-<channel>.db`. */
export function isOpencodeDatabaseName(name: string): boolean {
  return /^opencode(-[A-Za-z0-9._-]+)?\.db$/.test(name);
}

/**
 * A session file of the JSON storage: `<storage>/session/<project>/<session id>.json`. Returns
 * the storage folder and the session's id, or null for any other path.
 */
export function opencodeStorageSession(path: string): { readonly storage: string; readonly session: string } | null {
  const match = /^(.*)\/session\/[^/]+\/(ses_[A-Za-z0-9]+)\.json$/s.exec(path);
  return match ? { storage: match[1] === '' ? '/' : match[1]!, session: match[2]! } : null;
}
