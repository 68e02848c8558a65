/**
 * A pi fork: a copy of the session under a new id (`<time>_<uuidv7>.jsonl` beside the original,
 * its header naming the original as `parentSession`, as pi's own forks do) with a `compaction`
 * entry appended on the current branch: `summary`, `firstKeptEntryId`, `tokensBefore` and the
 * file lists, what pi writes when it compacts. pi rebuilds the context from the newest entry
 * back to the root: the last compaction on that path, its summary, the entries from its first
 * kept entry on. Files older than pi's current version 3 are written migrated, as pi migrates
 * them when it opens them (ids and a linear parent chain for version 1, `firstKeptEntryIndex`
 * made `firstKeptEntryId`, the `hookMessage` role renamed `custom`), so the compaction can name
 * its first kept entry by id.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { ForkFile, ForkOptions, ForkSource } from './source.js';
import { compactionTokens, fileStamp, lineRecord, rawLines, shellWord } from './source.js';

const CURRENT_VERSION = 3;

/** A new 8-hex entry id, unique in the file (pi's own id shape). */
function newEntryId(taken: Set<string>): string {
  for (;;) {
    const id = randomBytes(4).toString('hex');
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/** The summary as pi stores it: pi wraps it in its summary tags itself when it sends it. */
function piSummary(source: ForkSource): string {
  const { summary, turn_prefix_summary: prefix } = source.state;
  return prefix ? `${summary}\n\n<turn-prefix-summary>\n${prefix}\n</turn-prefix-summary>` : summary;
}

export function piFork(source: ForkSource, options: ForkOptions): ForkFile {
  const lines = rawLines(source.path);
  const entries: { line: number; record: Record<string, unknown> }[] = [];
  for (let line = 1; line < lines.length; line++) {
    if (lines[line]!.trim() !== '') entries.push({ line, record: lineRecord(lines, line) });
  }
  const header = entries[0]?.record['type'] === 'session' ? entries[0].record : null;
  const body = header ? entries.slice(1) : entries;
  const version = typeof header?.['version'] === 'number' ? header['version'] : 1;
  const taken = new Set(body.map((entry) => entry.record['id']).filter((id): id is string => typeof id === 'string'));
  const migrate = version < 2 || body.some((entry) => typeof entry.record['id'] !== 'string');
  if (migrate) {
    taken.clear();
    let previous: string | null = null;
    for (const entry of body) {
      const id = newEntryId(taken);
      entry.record = { ...entry.record, id, parentId: previous };
      previous = id;
    }
    for (const entry of body) {
      const index = entry.record['firstKeptEntryIndex'];
      if (entry.record['type'] !== 'compaction' || typeof index !== 'number') continue;
      // The index counts the header as entry 0.
      const target = entries[index];
      const { firstKeptEntryIndex: _dropped, ...rest } = entry.record;
      entry.record = target && target !== entries[0] ? { ...rest, firstKeptEntryId: target.record['id'] } : rest;
    }
  }
  if (version < 3) {
    for (const entry of body) {
      const message = entry.record['message'] as Record<string, unknown> | undefined;
      if (entry.record['type'] === 'message' && message?.['role'] === 'hookMessage') entry.record = { ...entry.record, message: { ...message, role: 'custom' } };
    }
  }
  const keptLine = source.session.messages[source.firstKeptIndex]!.line;
  const firstKept = body.find((entry) => entry.line === keptLine)!.record['id'];
  const sessionId = uuidv7({ msecs: options.now.getTime() });
  const stamp = options.now.toISOString();
  const newHeader = {
    ...(header ?? {}),
    type: 'session',
    version: CURRENT_VERSION,
    id: sessionId,
    timestamp: stamp,
    ...(typeof header?.['cwd'] === 'string' ? { cwd: header['cwd'] } : {}),
    parentSession: resolve(source.path),
  };
  const compaction = {
    type: 'compaction',
    id: newEntryId(taken),
    parentId: body.at(-1)?.record['id'] ?? null,
    timestamp: stamp,
    summary: piSummary(source),
    firstKeptEntryId: firstKept,
    tokensBefore: source.state.tokens_before,
    details: { readFiles: source.state.read_files, modifiedFiles: source.state.modified_files },
  };
  const folder = options.outDir ?? dirname(source.path);
  const path = join(folder, `${fileStamp(options.now)}_${sessionId}.jsonl`);
  const cwd = typeof header?.['cwd'] === 'string' ? header['cwd'] : null;
  return {
    path,
    sessionId,
    // Entries not migrated are the original's lines byte for byte.
    text: [JSON.stringify(newHeader), ...body.map((entry) => (migrate || version < 3 ? JSON.stringify(entry.record) : lines[entry.line]!)), JSON.stringify(compaction)]
      .map((line) => `${line}\n`)
      .join(''),
    resume: `${cwd ? `cd ${shellWord(cwd)} && ` : ''}pi --session ${shellWord(resolve(path))}`,
    tokens: compactionTokens(source),
  };
}
