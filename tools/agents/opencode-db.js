/**
 * Reads opencode's own files straight, for the generator and the tests (not through the
 * package's readers): the sessions of a data folder, and the usage each step recorded. The
 * database is opened read-only with a read-only WAL index (its newest rows are in `-wal`), so
 * nothing in it changes; the JSON storage is read file by file.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** better-sqlite3 from the repository's own dependencies, with URI filenames on. */
function database(path) {
  process.env.SQLITE_USE_URI = '1';
  const Database = createRequire(import.meta.url)('better-sqlite3');
  return new Database(`${pathToFileURL(path).href}?mode=ro&readonly_shm=1`, { readonly: true, fileMustExist: true });
}

/**
 * Every session in an opencode data folder with its steps' usage, as `{address, steps}`: the
 * address `opencode.db#<id>` or `storage#<id>`, each step `{messageId, summary, tokens}` from a
 * `step-finish` part (the tokens opencode recorded for that call), in part order; its parts
 * (each with its `messageID`) and how many user messages it has (`prompts`).
 */
export function opencodeSessions(dataDir) {
  const dbPath = join(dataDir, 'opencode.db');
  if (existsSync(dbPath)) {
    const db = database(dbPath);
    try {
      const sessions = db.prepare('SELECT id FROM session ORDER BY time_created, id').all();
      const summaries = new Set(db.prepare("SELECT id FROM message WHERE json_extract(data, '$.summary') = 1").all().map((row) => row.id));
      return sessions.map(({ id }) => ({
        address: `opencode.db#${id}`,
        steps: db
          .prepare("SELECT message_id, data FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'step-finish' ORDER BY message_id, id")
          .all(id)
          .map((row) => ({ messageId: row.message_id, summary: summaries.has(row.message_id), tokens: JSON.parse(row.data).tokens })),
        parts: db.prepare('SELECT data, message_id FROM part WHERE session_id = ? ORDER BY message_id, id').all(id).map((row) => ({ ...JSON.parse(row.data), messageID: row.message_id })),
        prompts: db.prepare("SELECT count(*) AS n FROM message WHERE session_id = ? AND json_extract(data, '$.role') = 'user'").get(id).n,
      }));
    } finally {
      db.close();
    }
  }
  const storage = join(dataDir, 'storage');
  const json = (path) => JSON.parse(readFileSync(path, 'utf8'));
  const list = (dir) => (existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')).sort() : []);
  const out = [];
  for (const project of existsSync(join(storage, 'session')) ? readdirSync(join(storage, 'session')).sort() : []) {
    for (const name of list(join(storage, 'session', project))) {
      const id = name.slice(0, -5);
      const messages = list(join(storage, 'message', id)).map((file) => json(join(storage, 'message', id, file)));
      const parts = messages.flatMap((message) => list(join(storage, 'part', message.id)).map((file) => json(join(storage, 'part', message.id, file))));
      const summaries = new Set(messages.filter((message) => message.summary === true).map((message) => message.id));
      out.push({
        address: `storage#${id}`,
        steps: parts.filter((part) => part.type === 'step-finish').map((part) => ({ messageId: part.messageID, summary: summaries.has(part.messageID), tokens: part.tokens })),
        parts,
        prompts: messages.filter((message) => message.role === 'user').length,
      });
    }
  }
  return out;
}

/**
 * A step's tokens as the provider billed them (`callUsage`'s shape): reasoning is output, inside
 * opencode's `output` where its `total` leaves reasoning out (1.1), beside it otherwise (1.18).
 */
export function stepUsage(tokens) {
  const cacheRead = tokens.cache?.read ?? 0;
  const cacheWrite = tokens.cache?.write ?? 0;
  const inside = tokens.total === tokens.input + tokens.output + cacheRead + cacheWrite;
  return { input: tokens.input, cacheRead, cacheWrite, cacheWrite1h: 0, output: tokens.output + (inside ? 0 : tokens.reasoning) };
}
