/**
 * A provider view as the body of one API request: Anthropic Messages, OpenAI Chat Completions or
 * OpenAI Responses, so a harness can send what `context` shows unchanged. The view must already
 * keep the provider's rules (view-rules.ts); this only changes its shape. Pure.
 *
 * What the session cannot give is left out or made up plainly: thinking blocks (the providers
 * take them back only with the signature or encrypted content the session does not keep) are
 * dropped; the tools a view calls are declared by name with an open schema, because Anthropic
 * refuses tool blocks without a `tools` list and sessions do not record the schemas.
 */
import type { ContentBlock, Message, ToolRequestBlock, ToolResultBlock } from './model.js';

export const REQUEST_APIS = ['anthropic', 'openai-chat', 'openai-responses'] as const;
export type RequestApi = (typeof REQUEST_APIS)[number];

export interface RequestOptions {
  /** The model to name; default: the session's. */
  readonly model: string;
  /** Anthropic's required reply budget. */
  readonly maxTokens?: number;
  /** Keep thinking blocks (unsigned): for a log of the messages, which no provider is sent as is. */
  readonly thinking?: boolean;
}

/** Anthropic's `max_tokens` when none is given. */
export const DEFAULT_MAX_TOKENS = 4096;

type Json = Record<string, unknown>;

const textOf = (blocks: readonly ContentBlock[]): string =>
  blocks
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n\n');

const sent = (block: ContentBlock): boolean => block.type !== 'thinking';

/** Every tool name the view calls, in order of first use. */
function toolNames(view: readonly Message[]): string[] {
  const names = new Set<string>();
  for (const message of view) for (const block of message.content) if (block.type === 'tool_request') names.add(block.name);
  return [...names];
}

const OPEN_SCHEMA = { type: 'object', additionalProperties: true } as const;

function anthropicBlock(block: ContentBlock): Json {
  switch (block.type) {
    case 'thinking':
      return { type: 'thinking', thinking: block.text };
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_request':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.arguments };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: block.tool_request_id, content: block.output, ...(block.is_error ? { is_error: true } : {}) };
  }
}

/**
 * Anthropic Messages: system messages go to the top-level `system`; consecutive messages of one
 * role are merged into one (as the API itself would), so results stay first in their message.
 */
export function anthropicRequest(view: readonly Message[], options: RequestOptions): Json {
  const system: string[] = [];
  const messages: { role: 'user' | 'assistant'; content: Json[] }[] = [];
  for (const message of view) {
    if (message.role === 'system') {
      const text = textOf(message.content);
      if (text !== '') system.push(text);
      continue;
    }
    const blocks = message.content.filter((block) => options.thinking || sent(block)).map(anthropicBlock);
    const nonBlank = blocks.filter((block) => block['type'] !== 'text' || String(block['text']).trim() !== '');
    if (nonBlank.length === 0) continue;
    const last = messages.at(-1);
    if (last && last.role === message.role) last.content.push(...nonBlank);
    else messages.push({ role: message.role, content: nonBlank });
  }
  const tools = toolNames(view).map((name) => ({ name, input_schema: OPEN_SCHEMA }));
  return {
    model: options.model,
    max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages,
    ...(tools.length > 0 ? { tools } : {}),
  };
}

const functionCall = (block: ToolRequestBlock) => ({ name: block.name, arguments: JSON.stringify(block.arguments) });

/** Chat Completions: a result is a `tool` message of its own; an assistant's calls are `tool_calls`. */
export function openAiChatRequest(view: readonly Message[], options: RequestOptions): Json {
  const messages: Json[] = [];
  for (const message of view) {
    const text = textOf(message.content);
    if (message.role === 'system') {
      messages.push({ role: 'system', content: text });
      continue;
    }
    if (message.role === 'assistant') {
      const calls = message.content.filter((block): block is ToolRequestBlock => block.type === 'tool_request');
      if (text === '' && calls.length === 0) continue;
      messages.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: functionCall(call) })) } : {}),
      });
      continue;
    }
    for (const result of message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result')) {
      messages.push({ role: 'tool', tool_call_id: result.tool_request_id, content: result.output });
    }
    if (text.trim() !== '') messages.push({ role: 'user', content: text });
  }
  const tools = toolNames(view).map((name) => ({ type: 'function', function: { name, parameters: OPEN_SCHEMA } }));
  return { model: options.model, messages, ...(tools.length > 0 ? { tools } : {}) };
}

/** Responses: one input item per message text, call and result, in order; system messages as `developer`. */
export function openAiResponsesRequest(view: readonly Message[], options: RequestOptions): Json {
  const input: Json[] = [];
  for (const message of view) {
    const role = message.role === 'system' ? 'developer' : message.role;
    const partType = message.role === 'assistant' ? 'output_text' : 'input_text';
    let text: string[] = [];
    const flush = () => {
      const joined = text.join('\n\n');
      if (joined.trim() !== '') input.push({ type: 'message', role, content: [{ type: partType, text: joined }] });
      text = [];
    };
    for (const block of message.content) {
      if (block.type === 'text') text.push(block.text);
      else if (block.type === 'tool_request') {
        flush();
        input.push({ type: 'function_call', call_id: block.id, ...functionCall(block) });
      } else if (block.type === 'tool_result') {
        flush();
        input.push({ type: 'function_call_output', call_id: block.tool_request_id, output: block.output });
      }
    }
    flush();
  }
  const tools = toolNames(view).map((name) => ({ type: 'function', name, parameters: OPEN_SCHEMA, strict: false }));
  return { model: options.model, input, ...(tools.length > 0 ? { tools } : {}) };
}

/** The request body `api` takes for this view. */
export function requestBody(view: readonly Message[], api: RequestApi, options: RequestOptions): Json {
  switch (api) {
    case 'anthropic':
      return anthropicRequest(view, options);
    case 'openai-chat':
      return openAiChatRequest(view, options);
    case 'openai-responses':
      return openAiResponsesRequest(view, options);
  }
}
