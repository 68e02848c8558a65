/**
 * A Claude Code fork: a new `<uuid>.jsonl` in the session's project folder that holds the
 * compaction the way Claude Code records one of its own (a `compact_boundary` system line with
 * `parentUuid: null` and `logicalParentUuid`, then an `isCompactSummary` user line with the
 * summary), followed by the kept messages' own lines, copied with new uuids and the new
 * sessionId. Claude Code resumes a file from its last boundary, following `parentUuid` back from
 * the newest line, so the kept lines keep the parent structure Claude Code gave them (a parallel
 * call's results each hang off their own call's line) over the lines they keep; lines that are
 * not messages (hooks, attachments, progress) are left out, as our view leaves them out.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { ForkFile, ForkOptions, ForkSource } from './source.js';
import { compactionTokens, lineRecord, rawLines, shellWord, viewSummaryText } from './source.js';

/** Fields every Claude Code chat line carries, copied from the kept lines onto the two new ones. */
const CONTEXT_FIELDS = ['userType', 'entrypoint', 'cwd', 'version', 'gitBranch'] as const;

/** The lines of each kept message, in session order; a response split over lines keeps all of them, in file order. */
function keptLines(source: ForkSource, records: (line: number) => Record<string, unknown>, lines: readonly string[]): number[] {
  const responseLines = new Map<string, number[]>();
  for (let line = 1; line < lines.length; line++) {
    const text = lines[line]!;
    if (!text.includes('"assistant"')) continue;
    const record = records(line);
    if (record['type'] !== 'assistant' || record['isSidechain'] === true) continue;
    const key = responseKey(record);
    if (key === null) continue;
    const known = responseLines.get(key);
    if (known) known.push(line);
    else responseLines.set(key, [line]);
  }
  const out: number[] = [];
  for (const message of source.session.messages.slice(source.firstKeptIndex)) {
    const record = records(message.line);
    const key = record['type'] === 'assistant' ? responseKey(record) : null;
    out.push(...(key !== null ? responseLines.get(key)! : [message.line]));
  }
  return out;
}

function responseKey(record: Record<string, unknown>): string | null {
  const id = (record['message'] as Record<string, unknown> | undefined)?.['id'];
  return typeof id === 'string' ? `${id}\u0000${String(record['requestId'] ?? '')}` : null;
}

export function claudeCodeFork(source: ForkSource, options: ForkOptions): ForkFile {
  const lines = rawLines(source.path);
  const parsed = new Map<number, Record<string, unknown>>();
  const records = (line: number) => {
    let record = parsed.get(line);
    if (!record) parsed.set(line, (record = lineRecord(lines, line)));
    return record;
  };
  // Every line's parent, to follow a kept line up through lines that are not kept.
  const parentOf = new Map<string, string | null>();
  for (let line = 1; line < lines.length; line++) {
    if (!lines[line]!.includes('"uuid"')) continue;
    const record = records(line);
    if (typeof record['uuid'] === 'string') parentOf.set(record['uuid'], typeof record['parentUuid'] === 'string' ? record['parentUuid'] : null);
  }
  const kept = keptLines(source, records, lines);
  const sessionId = randomUUID();
  const renamed = new Map<string, string>();
  const firstKept = records(kept[0]!);
  const context = Object.fromEntries(CONTEXT_FIELDS.filter((field) => field in firstKept).map((field) => [field, firstKept[field]]));
  const stamp = typeof firstKept['timestamp'] === 'string' ? firstKept['timestamp'] : options.now.toISOString();
  const before = source.firstKeptIndex > 0 ? source.session.messages[source.firstKeptIndex - 1]! : null;
  const boundaryUuid = randomUUID();
  const summaryUuid = randomUUID();
  const out: Record<string, unknown>[] = [
    {
      parentUuid: null,
      logicalParentUuid: before ? records(before.line)['uuid'] ?? null : null,
      isSidechain: false,
      type: 'system',
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      isMeta: false,
      timestamp: stamp,
      uuid: boundaryUuid,
      level: 'info',
      compactMetadata: { trigger: 'manual', preTokens: source.state.tokens_before },
      ...context,
      sessionId,
    },
    {
      parentUuid: boundaryUuid,
      isSidechain: false,
      type: 'user',
      message: { role: 'user', content: viewSummaryText(source) },
      isVisibleInTranscriptOnly: true,
      isCompactSummary: true,
      uuid: summaryUuid,
      timestamp: stamp,
      ...context,
      sessionId,
    },
  ];
  let previous = summaryUuid;
  for (const line of kept) {
    const record = { ...records(line) };
    const uuid = randomUUID();
    // The nearest kept line up its chain, if written already; else the line written before it.
    let parent = typeof record['parentUuid'] === 'string' ? record['parentUuid'] : null;
    // A file whose uuids repeat can loop: a walk longer than the file has met a loop.
    for (let steps = 0; parent !== null && !renamed.has(parent); steps++) parent = steps > parentOf.size ? null : (parentOf.get(parent) ?? null);
    if (typeof record['uuid'] === 'string') renamed.set(record['uuid'], uuid);
    record['parentUuid'] = parent !== null ? renamed.get(parent)! : previous;
    record['uuid'] = uuid;
    record['sessionId'] = sessionId;
    // A summary Claude Code wrote before is an ordinary kept message here: our boundary is the last.
    delete record['logicalParentUuid'];
    delete record['isCompactSummary'];
    delete record['isVisibleInTranscriptOnly'];
    const source = record['sourceToolAssistantUUID'];
    if (typeof source === 'string') {
      if (renamed.has(source)) record['sourceToolAssistantUUID'] = renamed.get(source);
      else delete record['sourceToolAssistantUUID'];
    }
    out.push(record);
    previous = uuid;
  }
  const folder = options.outDir ?? dirname(source.path);
  const cwd = typeof context['cwd'] === 'string' ? context['cwd'] : null;
  return {
    path: join(folder, `${sessionId}.jsonl`),
    sessionId,
    text: out.map((record) => `${JSON.stringify(record)}\n`).join(''),
    resume: `${cwd ? `cd ${shellWord(cwd)} && ` : ''}claude --resume ${sessionId}`,
    tokens: compactionTokens(source),
  };
}
