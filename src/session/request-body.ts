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

export type Json = Record<string, unknown>;

const textOf = (blocks: readonly ContentBlock[]): string =>
  blocks
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n\n');

const sent = (block: ContentBlock): boolean => block.type !== 'thinking';

/** Every tool name the view calls, in order of first use. */
function toolNames(view: readonly Message[]): string[] {
  const names = new Set<string>();
  for (const message of view) addToolNames(message, names);
  return [...names];
}

/** Adds the tool names `message` calls to `names` (in order of first use). */
export function addToolNames(message: Message, names: Set<string>): void {
  for (const block of message.content) if (block.type === 'tool_request') names.add(block.name);
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

/** The text of a system message, as Anthropic's top-level `system` joins it ('' adds nothing). */
export const anthropicSystemText = (message: Message): string => textOf(message.content);

/** A user or assistant message's blocks as Anthropic takes them: none when it has nothing to send. */
export function anthropicBlocks(message: Message, options: Pick<RequestOptions, 'thinking'>): Json[] {
  const blocks = message.content.filter((block) => options.thinking || sent(block)).map(anthropicBlock);
  return blocks.filter((block) => block['type'] !== 'text' || String(block['text']).trim() !== '');
}

/** The fields of Anthropic's body before its messages, given the system text (joined). */
export function anthropicHead(system: readonly string[], options: RequestOptions): Json {
  return { model: options.model, max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS, ...(system.length > 0 ? { system: system.join('\n\n') } : {}) };
}

export const anthropicTools = (names: readonly string[]): Json[] => names.map((name) => ({ name, input_schema: OPEN_SCHEMA }));

/**
 * Anthropic Messages: system messages go to the top-level `system`; consecutive messages of one
 * role are merged into one (as the API itself would), so results stay first in their message.
 */
export function anthropicRequest(view: readonly Message[], options: RequestOptions): Json {
  const system: string[] = [];
  const messages: { role: 'user' | 'assistant'; content: Json[] }[] = [];
  for (const message of view) {
    if (message.role === 'system') {
      const text = anthropicSystemText(message);
      if (text !== '') system.push(text);
      continue;
    }
    const nonBlank = anthropicBlocks(message, options);
    if (nonBlank.length === 0) continue;
    const last = messages.at(-1);
    if (last && last.role === message.role) last.content.push(...nonBlank);
    else messages.push({ role: message.role, content: nonBlank });
  }
  const tools = anthropicTools(toolNames(view));
  return { ...anthropicHead(system, options), messages, ...(tools.length > 0 ? { tools } : {}) };
}

const functionCall = (block: ToolRequestBlock) => ({ name: block.name, arguments: JSON.stringify(block.arguments) });

/** One view message as Chat Completions messages: a result is a `tool` message of its own; an assistant's calls are `tool_calls`. */
export function openAiChatMessages(message: Message): Json[] {
  const text = textOf(message.content);
  if (message.role === 'system') return [{ role: 'system', content: text }];
  if (message.role === 'assistant') {
    const calls = message.content.filter((block): block is ToolRequestBlock => block.type === 'tool_request');
    if (text === '' && calls.length === 0) return [];
    return [
      {
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: functionCall(call) })) } : {}),
      },
    ];
  }
  const messages: Json[] = [];
  for (const result of message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result')) {
    messages.push({ role: 'tool', tool_call_id: result.tool_request_id, content: result.output });
  }
  if (text.trim() !== '') messages.push({ role: 'user', content: text });
  return messages;
}

export const openAiChatTools = (names: readonly string[]): Json[] => names.map((name) => ({ type: 'function', function: { name, parameters: OPEN_SCHEMA } }));

/** Chat Completions: each view message as openAiChatMessages gives it. */
export function openAiChatRequest(view: readonly Message[], options: RequestOptions): Json {
  const messages = view.flatMap(openAiChatMessages);
  const tools = openAiChatTools(toolNames(view));
  return { model: options.model, messages, ...(tools.length > 0 ? { tools } : {}) };
}

/** One view message as Responses input items: each text, call and result, in order; system messages as `developer`. */
export function openAiResponsesItems(message: Message): Json[] {
  const input: Json[] = [];
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
  return input;
}

export const openAiResponsesTools = (names: readonly string[]): Json[] => names.map((name) => ({ type: 'function', name, parameters: OPEN_SCHEMA, strict: false }));

/** Responses: each view message as openAiResponsesItems gives it. */
export function openAiResponsesRequest(view: readonly Message[], options: RequestOptions): Json {
  const input = view.flatMap(openAiResponsesItems);
  const tools = openAiResponsesTools(toolNames(view));
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
