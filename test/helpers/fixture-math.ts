/**
 * Independent arithmetic over canonical fixture files, for tests that check the tool's numbers
 * by hand: reads the JSONL itself and applies the README's definitions (chars / 4 per message,
 * a call's input = its reported prompt), without importing the code under test.
 */
import { readFileSync } from 'node:fs';

export interface RawBlock {
  type: 'text' | 'thinking' | 'tool_request' | 'tool_result';
  text?: string;
  name?: string;
  arguments?: Record<string, unknown>;
  output?: string;
  id?: string;
  tool_request_id?: string;
}

export interface RawMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string | RawBlock[];
  metadata?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
    model?: string;
  };
  timestamp?: string;
}

export function readFixture(path: string): RawMessage[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RawMessage);
}

export function blocks(message: RawMessage): RawBlock[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

export function blockChars(block: RawBlock): number {
  if (block.type === 'tool_request') return block.name!.length + JSON.stringify(block.arguments).length;
  if (block.type === 'tool_result') return block.output!.length;
  return block.text!.length;
}

/** The heuristic: ceil(characters / 4) over all blocks of a message. */
export function messageTokens(message: RawMessage): number {
  return Math.ceil(blocks(message).reduce((total, block) => total + blockChars(block), 0) / 4);
}

export function isToolResult(message: RawMessage): boolean {
  return blocks(message).some((block) => block.type === 'tool_result');
}

export function startsTurn(message: RawMessage): boolean {
  return message.role === 'user' && !isToolResult(message);
}

/** Reported prompt of an assistant message: input + cache read + cache write. */
export function reportedPrompt(message: RawMessage): number {
  const m = message.metadata ?? {};
  return (m.input_tokens ?? 0) + (m.cache_read_input_tokens ?? 0) + (m.cache_creation_input_tokens ?? 0);
}
