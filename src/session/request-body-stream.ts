/**
 * A request body (request-body.ts) written as its view's messages come, one at a time, so a long
 * view is never held whole: the same bytes as `JSON.stringify(requestBody(view, api, options))`.
 * The body is written as the text before its list of messages (with Anthropic's `system`, which
 * the caller gathers first), each entry of the list, and the rest (the tools the view called).
 * Pure: the text goes to `write`.
 */
import type { Message } from './model.js';
import type { Json, RequestApi, RequestOptions } from './request-body.js';
import {
  addToolNames,
  anthropicBlocks,
  anthropicHead,
  anthropicSystemText,
  anthropicTools,
  openAiChatMessages,
  openAiChatTools,
  openAiResponsesItems,
  openAiResponsesTools,
} from './request-body.js';

export interface RequestBodyWriter {
  /** The view's next message. */
  message(message: Message): void;
  /** Writes the end of the body (nothing after it: the caller adds the line's end). */
  end(): void;
}

/** The key of the list of messages, and the tools after it, for each API. */
const LIST_KEY: Record<RequestApi, string> = { anthropic: 'messages', 'openai-chat': 'messages', 'openai-responses': 'input' };

/**
 * Starts the body of one `api` request whose view is handed over by `message`. `system`: the
 * view's system messages, for Anthropic's `system` (the other APIs show them in place).
 */
export function requestBodyWriter(api: RequestApi, options: RequestOptions, system: readonly Message[], write: (text: string) => void): RequestBodyWriter {
  const head: Json =
    api === 'anthropic'
      ? anthropicHead(system.map(anthropicSystemText).filter((text) => text !== ''), options)
      : { model: options.model };
  // The head as JSON.stringify writes it with an empty list last, less that list's `[]}`.
  const opened = JSON.stringify({ ...head, [LIST_KEY[api]]: [] });
  write(opened.slice(0, -2));
  const names = new Set<string>();
  let first = true;
  const entry = (json: string) => {
    write(first ? json : `,${json}`);
    first = false;
  };
  /** Anthropic: the role of the message still open (merged with the next of its role), or null. */
  let openRole: string | null = null;
  const message = (message: Message) => {
    addToolNames(message, names);
    if (api === 'openai-chat') for (const item of openAiChatMessages(message)) entry(JSON.stringify(item));
    else if (api === 'openai-responses') for (const item of openAiResponsesItems(message)) entry(JSON.stringify(item));
    else {
      if (message.role === 'system') return;
      const blocks = anthropicBlocks(message, options);
      if (blocks.length === 0) return;
      const content = blocks.map((block) => JSON.stringify(block)).join(',');
      if (openRole === message.role) write(`,${content}`);
      else {
        if (openRole !== null) write(']}');
        entry(`{"role":${JSON.stringify(message.role)},"content":[${content}`);
        openRole = message.role;
      }
    }
  };
  const end = () => {
    if (openRole !== null) write(']}');
    write(']');
    const list = [...names];
    const tools = api === 'anthropic' ? anthropicTools(list) : api === 'openai-chat' ? openAiChatTools(list) : openAiResponsesTools(list);
    if (tools.length > 0) write(`,"tools":${JSON.stringify(tools)}`);
    write('}');
  };
  return { message, end };
}
