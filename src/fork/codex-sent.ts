/**
 * A Codex fork's context before and after, as Codex sends it: the part the fork summarizes is
 * counted the way Codex 0.169 sends it when it resumes the original, not as the rollout holds it.
 * - The context Codex injects (developer instructions such as `<permissions instructions>`, the
 *   user's `<environment_context>` and AGENTS.md) is not a saving: the fork keeps it in its
 *   replacement history, and Codex sends it again on resume anyway.
 * - A tool output longer than Codex's truncation budget is sent cut down to it (head and tail,
 *   with a `…N chars truncated…` marker): the budget is the session's last `turn_context`
 *   `truncation_policy` (`bytes` or `tokens`, with a limit) and 20% more, as Codex allows its
 *   history; without one, Codex's fallback of 10,000 bytes.
 * - An earlier compaction Codex recorded is sent as its replacement history's items.
 * Counted with the heuristic (characters / 4, per message), as the compaction counts.
 */
import type { ContentBlock, Message } from '../session/model.js';
import { windowStartAt } from '../session/model.js';
import { blockText } from '../tokens/estimate.js';
import type { ForkFile, ForkSource, InheritedHistory } from './source.js';
import { lineRecord } from './source.js';

/** Context Codex writes into the history itself, which a compaction keeps (FORMATS.md: injected items). */
const INJECTED_USER_PREFIXES = ['<environment_context>', '<user_instructions>', '# AGENTS.md'];

const CHARS_PER_TOKEN = 4;
/** Codex's budget for one output in its history: the policy's limit and a fifth more. */
const HISTORY_HEADROOM = 1.2;
/** Codex's fallback policy (a model it has no metadata for): 10,000 bytes. */
const FALLBACK_BUDGET_BYTES = 10_000 * HISTORY_HEADROOM;

function itemText(payload: Record<string, unknown>): string {
  const content = payload['content'];
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof (part as Record<string, unknown>)?.['text'] === 'string' ? String((part as Record<string, unknown>)['text']) : '')).join('');
}

const injectedText = (text: string) => INJECTED_USER_PREFIXES.some((prefix) => text.trimStart().startsWith(prefix));

/** A rollout item Codex injected (instructions, environment) rather than the conversation's own. */
export function isInjected(item: unknown): boolean {
  const payload = item as Record<string, unknown> | null;
  if (!payload || payload['type'] !== 'message') return false;
  const role = payload['role'];
  if (role === 'developer' || role === 'system') return true;
  return role === 'user' && injectedText(itemText(payload));
}

/** Bytes one tool output may take in the history Codex sends, from the session's last policy. */
function outputBudget(lines: readonly string[]): number {
  for (let line = lines.length - 1; line >= 1; line--) {
    if (!lines[line]!.includes('"truncation_policy"')) continue;
    const record = lineRecord(lines, line);
    const policy = (record['payload'] as Record<string, unknown> | undefined)?.['truncation_policy'] as Record<string, unknown> | undefined;
    const limit = policy?.['limit'];
    if (record['type'] !== 'turn_context' || typeof limit !== 'number' || limit <= 0) continue;
    if (policy!['mode'] === 'bytes') return limit * HISTORY_HEADROOM;
    if (policy!['mode'] === 'tokens') return limit * HISTORY_HEADROOM * CHARS_PER_TOKEN;
  }
  return FALLBACK_BUDGET_BYTES;
}

/** An output's length as Codex sends it: cut to the budget (head and tail) with its marker. */
function sentLength(output: string, budget: number): number {
  const bytes = Buffer.byteLength(output, 'utf8');
  if (bytes <= budget) return output.length;
  const kept = Math.round((output.length * budget) / bytes);
  return kept + `…${output.length - kept} chars truncated…`.length;
}

/** A block's characters as Codex sends it: a user's injected text (environment, AGENTS.md) counts none. */
function blockLength(block: ContentBlock, role: Message['role'], budget: number): number {
  if (block.type === 'tool_result') return sentLength(block.output, budget);
  if (role === 'user' && block.type === 'text' && injectedText(block.text)) return 0;
  return blockText(block).length;
}

/** A replacement-history item's characters as Codex sends it (injected items left out). */
function historyItemLength(item: unknown, budget: number): number {
  const payload = item as Record<string, unknown> | null;
  if (!payload || isInjected(payload)) return 0;
  const type = payload['type'];
  if (type === 'message') return itemText(payload).length;
  if (type === 'function_call') return String(payload['name'] ?? '').length + String(payload['arguments'] ?? '').length;
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    const output = payload['output'];
    return sentLength(typeof output === 'string' ? output : JSON.stringify(output ?? ''), budget);
  }
  return 0;
}

const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/** Messages of a rollout with its raw lines (for recorded compactions), the session's own or a parent's. */
type CodexHistory = InheritedHistory;

/** Tokens Codex sends of `history.messages[from, to)`, its injected context left out. */
function sentTokens(history: CodexHistory, from: number, to: number, budget: number): number {
  let tokens = 0;
  for (let index = from; index < to; index++) {
    const message = history.messages[index]!;
    if (history.recordedAt.has(index)) {
      const payload = lineRecord(history.lines, message.line)['payload'] as Record<string, unknown>;
      const items = Array.isArray(payload['replacement_history']) ? payload['replacement_history'] : [];
      // Codex sends each item as a message of its own; an old compaction without a history, its summary.
      tokens += items.length > 0 ? items.reduce<number>((total, item) => total + tokensOf(historyItemLength(item, budget)), 0) : tokensOf(String(payload['message'] ?? '').length);
    } else if (message.role !== 'system') {
      // Developer messages (read as `system`) are all Codex's own instructions.
      tokens += tokensOf(message.content.reduce((total, block) => total + blockLength(block, message.role, budget), 0));
    }
  }
  return tokens;
}

/**
 * The context before (the compaction's) and after the fork: before, less what Codex sends of the
 * messages the fork drops (from the start of the current window to the first kept message, and
 * the parent's history a fork's rollout starts from, when no compaction of its own replaced it),
 * plus the summary message the fork sends instead.
 */
export function codexForkTokens(source: ForkSource, lines: readonly string[], summary: string): ForkFile['tokens'] {
  const { session, firstKeptIndex, state, inherited } = source;
  const budget = outputBudget(lines);
  const start = windowStartAt(session.recordedCompactions, firstKeptIndex);
  const own: CodexHistory = { messages: session.messages, lines, recordedAt: new Set(session.recordedCompactions.map((compaction) => compaction.atIndex)), injected: [] };
  let dropped = sentTokens(own, start, firstKeptIndex, budget);
  if (start === 0) for (const history of inherited) dropped += sentTokens(history, 0, history.messages.length, budget);
  const saved = dropped - tokensOf(summary.length);
  return { before: state.tokens_before, after: Math.max(0, state.tokens_before - saved) };
}
