/**
 * Small hand-built sessions for unit tests: a compact way to write turns of user text,
 * tool loops and answers with exact token sizes (chars/4).
 */
import type { ContentBlock, Message, Usage } from '../../src/session/model.js';

/** Text of exactly `tokens` heuristic tokens. */
export function text(tokens: number, fill = 'x'): string {
  return fill.repeat(tokens * 4);
}

let counter = 0;
export function resetIds(): void {
  counter = 0;
}
const nextId = () => `m${++counter}`;

export function user(tokens = 10, body?: string): Message {
  return { id: nextId(), role: 'user', content: [{ type: 'text', text: body ?? text(tokens) }], line: counter };
}

export function assistant(tokens = 10, usage?: Partial<Usage>): Message {
  return {
    id: nextId(),
    role: 'assistant',
    content: [{ type: 'text', text: text(tokens) }],
    line: counter,
    ...(usage ? { usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...usage } } : {}),
  };
}

/** An assistant message calling a tool, and the user message carrying its result. */
export function toolCall(name: string, args: Record<string, unknown>, outputTokens = 10): [Message, Message] {
  const callId = `call-${counter + 1}`;
  const request: ContentBlock = { type: 'tool_request', id: callId, name, arguments: args };
  const call: Message = { id: nextId(), role: 'assistant', content: [request], line: counter };
  const result: Message = {
    id: nextId(),
    role: 'user',
    content: [{ type: 'tool_result', tool_request_id: callId, output: text(outputTokens), is_error: false }],
    line: counter,
  };
  return [call, result];
}

/** A turn: user prompt, `loops` tool calls with results, then a text answer. */
export function turn(loops: number, sizes: { user?: number; output?: number; answer?: number } = {}): Message[] {
  const messages: Message[] = [user(sizes.user ?? 10)];
  for (let i = 0; i < loops; i++) messages.push(...toolCall('read_file', { path: `src/file${counter}.ts` }, sizes.output ?? 100));
  messages.push(assistant(sizes.answer ?? 10));
  return messages;
}
