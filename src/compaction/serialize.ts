/**
 * Turns messages into the plain-text transcript a summarizer reads: a form
 * the model will not mistake for a conversation to continue. Pure.
 */
import type { ContentBlock, Message } from '../session/model.js';

/** Tool results longer than this are cut in the transcript, with a note of how much. */
export const TOOL_RESULT_CHAR_LIMIT = 2_000;

/** `key="value", …` on one line; each value cut to `valueLimit` characters (with …) when given. */
export function formatArguments(args: Readonly<Record<string, unknown>>, valueLimit = Infinity): string {
  return Object.entries(args)
    .map(([key, value]) => {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      return `${key}=${JSON.stringify(text.length > valueLimit ? `${text.slice(0, valueLimit)}…` : text)}`;
    })
    .join(', ');
}

function truncateOutput(output: string, limit: number): string {
  if (output.length <= limit) return output;
  return `${output.slice(0, limit)}\n[… ${output.length - limit} more characters cut]`;
}

function serializeBlock(role: Message['role'], block: ContentBlock, toolResultLimit: number): string {
  switch (block.type) {
    case 'text':
      return `[${role === 'user' ? 'User' : role === 'assistant' ? 'Assistant' : 'System'}]: ${block.text}`;
    case 'thinking':
      return '[Thinking]: (omitted)';
    case 'tool_request':
      return `[Tool call]: ${block.name}(${formatArguments(block.arguments)})`;
    case 'tool_result':
      return `[Tool result${block.is_error ? ' (error)' : ''}]: ${truncateOutput(block.output, toolResultLimit)}`;
  }
}

/** `[User]: …`, `[Assistant]: …`, `[Tool call]: name(arg="…")`, `[Tool result]: …`, `[Thinking]: (omitted)`. */
export function serializeForSummary(messages: readonly Message[], toolResultLimit = TOOL_RESULT_CHAR_LIMIT): string {
  const lines: string[] = [];
  for (const message of messages) {
    for (const block of message.content) lines.push(serializeBlock(message.role, block, toolResultLimit));
  }
  return lines.join('\n');
}
