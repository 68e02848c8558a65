/**
 * The history a Codex rollout inherits from its parent: since 0.148 a fork's rollout refers to
 * the parent's history (`session_meta.history_base`: the parent's thread id and where its rollout
 * ended, `end_byte_offset`) instead of copying it, and Codex loads that history first when it
 * resumes the fork. A Codex fork of such a rollout drops it too (its `compacted` item replaces
 * everything before it), so its saving counts it. The parent is found as Codex finds it: the
 * rollout named after its id, beside the session or anywhere under the sessions folder.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readSession } from '../formats/index.js';
import { windowStartAt } from '../session/model.js';
import { isInjected } from './codex-sent.js';
import type { InheritedHistory } from './source.js';
import { lineRecord, rawLines } from './source.js';

/** A fork of a fork of …: past this, the chain is not followed (a loop of ids, say). */
const MAX_DEPTH = 16;

/** `rollout-<time>-<id>.jsonl` beside `path`, else under the `sessions/YYYY/MM/DD` tree it is in. */
function findRollout(path: string, id: string): string | null {
  const named = (folder: string) => {
    if (!existsSync(folder)) return null;
    const name = readdirSync(folder).find((entry) => entry.startsWith('rollout-') && entry.endsWith(`-${id}.jsonl`));
    return name ? join(folder, name) : null;
  };
  const beside = named(dirname(path));
  if (beside) return beside;
  const day = dirname(path);
  const root = dirname(dirname(dirname(day)));
  if (basename(root) !== 'sessions') return null;
  for (const year of readdirSync(root)) {
    for (const month of safeList(join(root, year))) {
      for (const date of safeList(join(root, year, month))) {
        const found = named(join(root, year, month, date));
        if (found) return found;
      }
    }
  }
  return null;
}

function safeList(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The items Codex injected into a rollout's history before `endLine` (a recorded compaction starts them afresh). */
export function injectedItems(lines: readonly string[], endLine: number): unknown[] {
  let injected: unknown[] = [];
  for (let line = 1; line < endLine; line++) {
    if (lines[line]!.trim() === '') continue;
    const record = lineRecord(lines, line);
    const payload = record['payload'] as Record<string, unknown>;
    if (record['type'] === 'response_item' && isInjected(payload)) injected.push(payload);
    else if (record['type'] === 'compacted' && Array.isArray(payload['replacement_history'])) injected = payload['replacement_history'].filter(isInjected);
  }
  return injected;
}

/** The parent's history a rollout starts from, oldest first (empty when it names none or it is not found). */
export async function codexInheritedHistory(path: string, depth = 0): Promise<InheritedHistory[]> {
  if (depth >= MAX_DEPTH) return [];
  const lines = rawLines(path);
  const first = lines.findIndex((line, index) => index > 0 && line.trim() !== '');
  if (first < 0) return [];
  const meta = lineRecord(lines, first);
  const base = (meta['payload'] as Record<string, unknown> | undefined)?.['history_base'] as Record<string, unknown> | undefined;
  const threadId = base?.['thread_id'];
  if (meta['type'] !== 'session_meta' || typeof threadId !== 'string') return [];
  const parentPath = findRollout(path, threadId);
  if (!parentPath) return [];
  const parent = await readSession(parentPath, 'codex');
  const parentLines = rawLines(parentPath);
  // The first line past the end of the history the fork took (by byte offset, as Codex cuts it).
  const endByte = typeof base!['end_byte_offset'] === 'number' ? base!['end_byte_offset'] : Number.POSITIVE_INFINITY;
  let endLine = parentLines.length;
  for (let line = 1, offset = 0; line < parentLines.length; line++) {
    if (offset >= endByte) {
      endLine = line;
      break;
    }
    offset += Buffer.byteLength(parentLines[line]!, 'utf8') + 1;
  }
  let end = parent.messages.findIndex((message) => message.line >= endLine);
  if (end < 0) end = parent.messages.length;
  const start = windowStartAt(parent.recordedCompactions, end);
  const own: InheritedHistory = {
    messages: parent.messages.slice(start, end),
    lines: parentLines,
    recordedAt: new Set(parent.recordedCompactions.map((compaction) => compaction.atIndex - start)),
    injected: injectedItems(parentLines, endLine),
  };
  // A compaction in the parent replaced whatever it inherited in turn.
  return start === 0 ? [...(await codexInheritedHistory(parentPath, depth + 1)), own] : [own];
}
