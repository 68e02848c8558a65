/**
 * A Codex fork: a new rollout `rollout-<time>-<uuidv7>.jsonl` beside the original (where
 * `codex resume <id>` looks it up by id) holding the original's `session_meta` with the new id,
 * the turn settings in force at the cut, a `compacted` item whose `replacement_history` is the
 * history Codex rebuilds on resume (the context Codex injected before the cut, then the summary
 * as a user message, as its own compactions write it), and then the original's lines from the
 * first kept message on. Codex replays a rollout item by item: a `compacted` item with a
 * replacement history replaces everything before it.
 */
import { dirname, join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { ForkFile, ForkOptions, ForkSource } from './source.js';
import { lineRecord, rawLines, shellWord, viewSummaryText } from './source.js';

/** Context Codex writes into the history itself, which a compaction keeps (FORMATS.md: injected items). */
const INJECTED_USER_PREFIXES = ['<environment_context>', '<user_instructions>', '# AGENTS.md'];

function messageText(payload: Record<string, unknown>): string {
  const content = payload['content'];
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof (part as Record<string, unknown>)?.['text'] === 'string' ? String((part as Record<string, unknown>)['text']) : '')).join('');
}

/** An item Codex injected (instructions, environment) rather than the conversation's own. */
function isInjected(item: unknown): boolean {
  const payload = item as Record<string, unknown> | null;
  if (!payload || payload['type'] !== 'message') return false;
  const role = payload['role'];
  if (role === 'developer' || role === 'system') return true;
  if (role !== 'user') return false;
  const text = messageText(payload).trimStart();
  return INJECTED_USER_PREFIXES.some((prefix) => text.startsWith(prefix));
}

export function codexFork(source: ForkSource, options: ForkOptions): ForkFile {
  const lines = rawLines(source.path);
  const cut = source.session.messages[source.firstKeptIndex]!.line;
  let meta: Record<string, unknown> | null = null;
  let turnContext: Record<string, unknown> | null = null;
  let injected: unknown[] = [];
  for (let line = 1; line < cut; line++) {
    if (lines[line]!.trim() === '') continue;
    const record = lineRecord(lines, line);
    const payload = record['payload'] as Record<string, unknown>;
    if (record['type'] === 'session_meta') meta ??= record;
    else if (record['type'] === 'turn_context') turnContext = record;
    else if (record['type'] === 'response_item' && isInjected(payload)) injected.push(payload);
    else if (record['type'] === 'compacted' && Array.isArray(payload['replacement_history'])) {
      injected = payload['replacement_history'].filter(isInjected);
    }
  }
  const sessionId = uuidv7({ msecs: options.now.getTime() });
  const stamp = options.now.toISOString();
  const originalMeta = (meta?.['payload'] ?? {}) as Record<string, unknown>;
  const summary = viewSummaryText(source);
  const out: Record<string, unknown>[] = [
    {
      timestamp: stamp,
      type: 'session_meta',
      payload: {
        ...originalMeta,
        id: sessionId,
        ...('session_id' in originalMeta ? { session_id: sessionId } : {}),
        timestamp: stamp,
        ...(typeof originalMeta['id'] === 'string' ? { forked_from_id: originalMeta['id'] } : {}),
      },
    },
    ...(turnContext ? [{ ...turnContext, timestamp: stamp }] : []),
    {
      timestamp: stamp,
      type: 'compacted',
      payload: {
        message: summary,
        replacement_history: [...injected, { type: 'message', role: 'user', content: [{ type: 'input_text', text: summary }] }],
      },
    },
  ];
  for (let line = cut; line < lines.length; line++) {
    if (lines[line]!.trim() === '') continue;
    const record = lineRecord(lines, line);
    // A resume writes the session's meta again: the fork has its own.
    if (record['type'] === 'session_meta') continue;
    out.push(record);
  }
  // Newer rollouts number their lines; the fork's are numbered afresh.
  const numbered = out.some((record) => 'ordinal' in record) ? out.map((record, index) => ({ ...record, ordinal: index })) : out;
  const time = stamp.slice(0, 19).replace(/:/g, '-');
  const folder = options.outDir ?? dirname(source.path);
  const cwd = typeof originalMeta['cwd'] === 'string' ? originalMeta['cwd'] : null;
  return {
    path: join(folder, `rollout-${time}-${sessionId}.jsonl`),
    sessionId,
    text: numbered.map((record) => `${JSON.stringify(reorder(record))}\n`).join(''),
    resume: `${cwd ? `cd ${shellWord(cwd)} && ` : ''}codex resume ${sessionId}`,
  };
}

/** `timestamp` first, as Codex writes its lines (a `ordinal` renumbered above lands after it). */
function reorder(record: Record<string, unknown>): Record<string, unknown> {
  const { timestamp, ordinal, ...rest } = record;
  return { timestamp, ...(ordinal !== undefined ? { ordinal } : {}), ...rest };
}
