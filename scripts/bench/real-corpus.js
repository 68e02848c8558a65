/**
 * The benchmark's second Claude Code corpus: the repository's real Claude Code sessions
 * (fixtures/real/claude-code/ and the agent fixtures under fixtures/agents/claude-code/, with their
 * subagent transcripts, as Claude Code lays them out) copied again and again under fresh ids until
 * the corpus reaches the size asked for. Real files have what the synthetic corpus has little of:
 * hook and bash progress lines in the parent chain, short lines, parallel tool calls, inline
 * sidechains, compactions, images, escapes and characters beyond ASCII of real tool output.
 *
 * Each copy renames every uuid, message id (`msg_…`), request id (`req_…`) and tool id
 * (`toolu_…`) it holds, consistently within the copy and to ids of the same length, so that
 * ccusage (which counts a call once by message id and request id across the whole corpus) and our
 * roll-up count every copy's calls, and the bytes keep their shape. Deterministic: a seeded PRNG.
 * Measuring is left to run.js.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRandom } from './corpus.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the real sessions are, and the project folder of each copy. */
const SOURCES = [join(ROOT, 'fixtures', 'real', 'claude-code'), join(ROOT, 'fixtures', 'agents', 'claude-code')];

/** Every .jsonl file under `dir` (sorted). */
function jsonlFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .sort();
}

/**
 * A file's place in a copy's project folder: below its source's own `projects/<project>/` folder
 * (the agent fixtures keep a Claude config folder each), else below the folder that names the
 * session's source repository (`marot_spotter/`); a session's subagents stay in its own folder.
 */
function placeInProject(path) {
  const parts = path.split(/[\\/]/);
  const projects = parts.indexOf('projects');
  if (projects >= 0) return parts.slice(projects + 2).join('/');
  return parts.length > 1 && !/^[0-9a-f-]{36}$/.test(parts[0]) ? parts.slice(1).join('/') : parts.join('/');
}

/** The real sessions: each file's place in a project folder and its text. */
export function realSessions() {
  return SOURCES.flatMap((source) => jsonlFiles(source).map((file) => ({ path: placeInProject(relative(source, file)), text: readFileSync(file, 'utf8') })));
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const PREFIXED = /\b(msg_|req_|toolu_)([0-9A-Za-z]+)/g;
/** Codex's prefixed ids: tool calls, responses, output items (six characters at least: `call_id` is a key). */
export const CODEX_PREFIXED = /\b(call_|resp_|fc_|msg_|ws_|rs_)([0-9A-Za-z]{6,})/g;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Fresh ids for one copy: each id met gets one of the same length and kind, the same one each time. */
export function renamer(r, prefixed = PREFIXED) {
  const fresh = new Map();
  const hexOf = (length) => r.hex(length);
  const renamed = (id, make) => {
    let name = fresh.get(id);
    if (name === undefined) {
      name = make();
      fresh.set(id, name);
    }
    return name;
  };
  return (text) =>
    text
      .replace(UUID, (id) => renamed(id, () => {
        const h = hexOf(32);
        return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
      }))
      .replace(prefixed, (id, prefix, rest) => renamed(id, () => {
        let name = prefix;
        for (let index = 0; index < rest.length; index++) name += ALPHABET[Math.floor(r.next() * ALPHABET.length)];
        return name;
      }));
}

/**
 * Copies of the real sessions under `dir/projects/<project>/` until they hold `totalBytes`,
 * each copy a project of its own; a path's uuids (a session's file and its subagents' folder)
 * are renamed as its text's are. Returns {files, bytes}.
 */
export function generateRealCorpus(dir, totalBytes, { seed = 11 } = {}) {
  const r = createRandom(seed);
  const sessions = realSessions();
  let bytes = 0;
  let files = 0;
  for (let copy = 0; bytes < totalBytes; copy++) {
    const rename = renamer(r);
    const project = join(dir, 'projects', `-home-dev-real${String(copy).padStart(4, '0')}`);
    for (const { path, text } of sessions) {
      const target = join(project, rename(path));
      mkdirSync(dirname(target), { recursive: true });
      const renamed = rename(text);
      writeFileSync(target, renamed);
      bytes += statSync(target).size;
      files++;
    }
  }
  return { files, bytes };
}
