/**
 * Pruning (opencode's approach): the conversation stays, and tool outputs older than the keep
 * window are replaced by a one-line placeholder naming the tool, its arguments and the tokens
 * removed. Pure: choosing the outputs, the placeholder, applying it, and what it saves. The
 * sidecar stores the list; the provider view applies it.
 */
import type { ContentBlock, Message } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { estimateMessageTokens, heuristicCounter } from '../tokens/estimate.js';
import { toolRequestsById } from './facts.js';
import { formatArguments } from './serialize.js';

/** One pruned output, as the sidecar records it (snake_case: on disk). */
export interface PrunedOutput {
  readonly tool_request_id: string;
  /** The message holding the result, so a reused call id elsewhere is never touched. */
  readonly message_id: string;
  readonly tool: string;
  /** The call's arguments on one line, each value cut to PLACEHOLDER_ARGUMENT_CHARS. */
  readonly arguments: string;
  /** Estimated tokens of the output that was removed. */
  readonly tokens: number;
}

/** Argument values longer than this are cut in the placeholder (a write's content, a patch). */
export const PLACEHOLDER_ARGUMENT_CHARS = 80;

export function prunedPlaceholder(pruned: PrunedOutput): string {
  return `[tool output pruned: ${pruned.tool}(${pruned.arguments}), ${pruned.tokens} tokens removed]`;
}

/** Outputs of messages [from, to) that pruning replaces: every one longer than its placeholder. */
export function pruneOutputs(
  messages: readonly Message[],
  from: number,
  to: number,
  count: TextCounter = heuristicCounter,
): PrunedOutput[] {
  const requests = toolRequestsById(messages.slice(0, to));
  const pruned: PrunedOutput[] = [];
  for (let index = from; index < to; index++) {
    const message = messages[index]!;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const request = requests.get(block.tool_request_id);
      const candidate: PrunedOutput = {
        tool_request_id: block.tool_request_id,
        message_id: message.id,
        tool: request?.name ?? 'unknown',
        arguments: request ? formatArguments(request.arguments, PLACEHOLDER_ARGUMENT_CHARS) : '',
        tokens: count(block.output),
      };
      if (prunedPlaceholder(candidate).length < block.output.length) pruned.push(candidate);
    }
  }
  return pruned;
}

const keyOf = (messageId: string, toolRequestId: string) => `${messageId}\u0000${toolRequestId}`;

function rewrite(message: Message, byKey: ReadonlyMap<string, PrunedOutput>): Message {
  let changed = false;
  const content = message.content.map((block): ContentBlock => {
    if (block.type !== 'tool_result') return block;
    const pruned = byKey.get(keyOf(message.id, block.tool_request_id));
    if (!pruned) return block;
    changed = true;
    return { ...block, output: prunedPlaceholder(pruned) };
  });
  return changed ? { ...message, content } : message;
}

/** The messages with every pruned output replaced by its placeholder. */
export function applyPruning(messages: readonly Message[], pruned: readonly PrunedOutput[]): Message[] {
  if (pruned.length === 0) return [...messages];
  const byKey = new Map(pruned.map((entry) => [keyOf(entry.message_id, entry.tool_request_id), entry]));
  return messages.map((message) => rewrite(message, byKey));
}

/**
 * Tokens pruning takes off every later call: each rewritten message's estimate before minus after,
 * over messages [0, end) (the session so far; replay's simulated compactions pass their call).
 */
export function pruningSavings(
  messages: readonly Message[],
  tokens: readonly number[],
  pruned: readonly PrunedOutput[],
  count: TextCounter = heuristicCounter,
  end = messages.length,
): number {
  const touched = new Set(pruned.map((entry) => entry.message_id));
  const byKey = new Map(pruned.map((entry) => [keyOf(entry.message_id, entry.tool_request_id), entry]));
  let saved = 0;
  for (let index = 0; index < end; index++) {
    const message = messages[index]!;
    if (!touched.has(message.id)) continue;
    saved += (tokens[index] ?? 0) - estimateMessageTokens(rewrite(message, byKey), count);
  }
  return saved;
}
