/**
 * opencode's JSON storage (`~/.local/share/opencode/storage/`, before the database of 1.2; the
 * last versions to write it, 1.0 and 1.1, laid it out as here): one JSON file per record,
 * `session/<project id>/<session id>.json` (the session), `message/<session id>/<message id>.json`
 * (each message, with its `id` and `sessionID`) and `part/<message id>/<part id>.json` (each part).
 * A session is read by its address, `<storage>#<session id>` (store-address.ts), so its sidecar
 * sits beside the storage folder, not inside it where opencode would list it as a session; its
 * session file found by a walk, or named, stands for that address. Messages are ordered as
 * opencode orders them (creation time, then id), parts by id; what they mean is
 * opencode-messages.ts's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { describeFsError, InputError } from '../errors.js';
import type { AnyMessage, Session } from '../session/model.js';
import { parseLine } from './convert.js';
import { opencodeStorageSession } from './opencode-location.js';
import type { OpencodeMessageRows } from './opencode-messages.js';
import { opencodeSession } from './opencode-messages.js';
import type { FormatReader, ReadOptions } from './reader.js';
import { parseStoreAddress, storeAddress } from './store-address.js';

export const OPENCODE_JSON_FORMAT = 'opencode-json';

const recordSchema = z.looseObject({ id: z.string() });
const messageSchema = z.looseObject({ id: z.string(), time: z.looseObject({ created: z.number() }) });
const sessionSchema = z.looseObject({ id: z.string(), directory: z.string().nullish() });

/** A folder's `*.json` names, sorted; none when the folder is missing. */
function jsonNames(folder: string, address: string): string[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new InputError(`cannot read ${folder}: ${describeFsError(error)}`, address);
  }
  return names.filter((name) => name.endsWith('.json')).sort();
}

/** One record file, parsed; a bad one is an error naming it. */
function readRecord(file: string, address: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read ${file}: ${describeFsError(error)}`, address);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`${file}: not valid JSON (${(error as Error).message})`, address);
  }
}

/** A record file checked against its schema; a mismatch names the file (JSON storage has no lines). */
function checkedRecord<T>(schema: z.ZodType<T>, file: string, address: string): T {
  try {
    return parseLine(schema, readRecord(file, address), address, 1, { label: file });
  } catch (error) {
    if (error instanceof InputError && error.file === address) throw new InputError(error.message, address);
    throw error;
  }
}

const isFolder = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;

/** True when `folder` looks like opencode's JSON storage (its session and message folders). */
export function isOpencodeStorage(folder: string): boolean {
  return isFolder(join(folder, 'session')) && isFolder(join(folder, 'message'));
}

/** The session file of `session` in `storage`: `session/<some project>/<session>.json`. */
function sessionFile(storage: string, session: string, address: string): string {
  for (const project of readdirSync(join(storage, 'session')).sort()) {
    const file = join(storage, 'session', project, `${session}.json`);
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) return file;
  }
  throw new InputError(`no session ${session} in this opencode storage folder`, address);
}

/** Reads one session of an opencode JSON storage folder, named by its address. */
export async function readOpencodeStorage(path: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const address = parseStoreAddress(path);
  if (!address || !isOpencodeStorage(address.store)) throw new InputError('not an opencode session address (<storage folder>#<session id>)', path);
  const { store, session } = address;
  const head = checkedRecord(sessionSchema, sessionFile(store, session, path), path);
  const messageFolder = join(store, 'message', session);
  const messages = jsonNames(messageFolder, path).map((name) => checkedRecord(messageSchema, join(messageFolder, name), path));
  messages.sort((a, b) => a.time.created - b.time.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rows: OpencodeMessageRows[] = messages.map((info) => {
    const partFolder = join(store, 'part', info.id);
    const parts = jsonNames(partFolder, path).map((name) => checkedRecord(recordSchema, join(partFolder, name), path));
    parts.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { id: info.id, info, parts };
  });
  return opencodeSession({ path, format: OPENCODE_JSON_FORMAT, ...(head.directory ? { directory: head.directory } : {}) }, rows, options);
}

/** The address a storage session file stands for (`<storage>/session/<project>/<id>.json`), or null. */
export function opencodeStorageAddress(path: string): string | null {
  const found = opencodeStorageSession(path);
  return found && isOpencodeStorage(found.storage) ? storeAddress(found.storage, found.session) : null;
}

/** An address whose store is a JSON storage folder (auto-detection's rule). */
export function isOpencodeStorageAddress(path: string): boolean {
  const address = parseStoreAddress(path);
  return address !== null && isOpencodeStorage(address.store);
}

export const opencodeStorageReader: FormatReader = {
  name: OPENCODE_JSON_FORMAT,
  // Told by its path, not by its lines.
  detect: () => false,
  detectAddress: isOpencodeStorageAddress,
  sessionsIn: (path) => {
    const address = opencodeStorageAddress(path);
    return address === null ? null : [address];
  },
  read: readOpencodeStorage,
};
