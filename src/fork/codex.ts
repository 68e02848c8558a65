/**
 * A Codex fork: a new rollout `rollout-<time>-<uuidv7>.jsonl` beside the original (where
 * `codex resume <id>` looks it up by id) holding the original's `session_meta` with the new id,
 * the turn settings in force at the cut, a `compacted` item whose `replacement_history` is the
 * history Codex rebuilds on resume (the context Codex injected before the cut, then the summary
 * as a user message, as its own compactions write it), and then the original's lines from the
 * first kept message on. Codex replays a rollout item by item: a `compacted` item with a
 * replacement history replaces everything before it.
 *
 * A call left open at the end (Codex killed while a command ran) is answered `aborted` in the
 * fork, right after the call: what Codex 0.169 sends for it when it resumes the original.
 *
 * The fork's saving is counted as Codex sends the summarized part (codex-sent.ts): without the
 * context it injects (it keeps or sends it again), with tool outputs cut down as it cuts them.
 */
import { dirname, join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { ForkFile, ForkOptions, ForkSource } from './source.js';
import { lineRecord, rawLines, shellWord, viewSummaryText } from './source.js';
import { codexForkTokens } from './codex-sent.js';
import { injectedItems } from './codex-parent.js';

/** Items that wait for an output with their `call_id`. */
const OPEN_CALLS = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);

/** Codex's output for a call it finds unanswered when it resumes. */
const ABORTED = 'aborted';

export function codexFork(source: ForkSource, options: ForkOptions): ForkFile {
  const lines = rawLines(source.path);
  const cut = source.session.messages[source.firstKeptIndex]!.line;
  let meta: Record<string, unknown> | null = null;
  let turnContext: Record<string, unknown> | null = null;
  for (let line = 1; line < cut; line++) {
    if (lines[line]!.trim() === '') continue;
    const record = lineRecord(lines, line);
    if (record['type'] === 'session_meta') meta ??= record;
    else if (record['type'] === 'turn_context') turnContext = record;
  }
  // What Codex injected before the cut: the parent's (a fork of a fork) unless a compaction here replaced it, then this rollout's.
  const own = injectedItems(lines, cut);
  const replaced = source.session.recordedCompactions.some((compaction) => compaction.line < cut);
  const injected = [...(replaced ? [] : source.inherited.flatMap((history) => history.injected)), ...own];
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
  /** Calls with no output yet, by call id: where their record is in `out`. */
  const open = new Map<string, number>();
  for (let line = cut; line < lines.length; line++) {
    if (lines[line]!.trim() === '') continue;
    const record = lineRecord(lines, line);
    // A resume writes the session's meta again: the fork has its own.
    if (record['type'] === 'session_meta') continue;
    const payload = record['payload'] as Record<string, unknown> | undefined;
    const callId = payload?.['call_id'];
    if (record['type'] === 'response_item' && typeof callId === 'string') {
      if (OPEN_CALLS.has(String(payload!['type']))) open.set(callId, out.length);
      else open.delete(callId);
    }
    out.push(record);
  }
  // The answer Codex gives an open call on resume, after each call (from the last, so the
  // positions before it hold).
  for (const [callId, at] of [...open].sort((a, b) => b[1] - a[1])) {
    const call = out[at]!;
    const kind = (call['payload'] as Record<string, unknown>)['type'] === 'custom_tool_call' ? 'custom_tool_call_output' : 'function_call_output';
    out.splice(at + 1, 0, { timestamp: call['timestamp'], type: 'response_item', payload: { type: kind, call_id: callId, output: ABORTED } });
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
    tokens: codexForkTokens(source, lines, summary),
  };
}

/** `timestamp` first, as Codex writes its lines (a `ordinal` renumbered above lands after it). */
function reorder(record: Record<string, unknown>): Record<string, unknown> {
  const { timestamp, ordinal, ...rest } = record;
  return { timestamp, ...(ordinal !== undefined ? { ordinal } : {}), ...rest };
}
