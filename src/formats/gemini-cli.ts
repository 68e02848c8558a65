/**
 * Gemini CLI chat files (`~/.gemini/tmp/<project hash>/chats/session-*.json`): ONE JSON document
 * a session, `{sessionId, projectHash, startTime, lastUpdated, messages: […]}`, not JSON lines.
 * See README "Formats". The traps handled here:
 *
 * - a `gemini` message is one provider call: its thoughts, text and tool calls; the tool results
 *   live inside the calls (`toolCalls[].result[].functionResponse.response.output` or `.error`),
 *   so they become a user message of tool results right after it, as the model read them;
 * - `tokens.input` is the whole prompt, `cached` included; `tool` (tool-use prompt) tokens are
 *   read on top of it and billed as input; `thoughts` are billed as output, and `output` leaves
 *   them out: so `Usage.input` = input − cached + tool, `cacheRead` = cached, `output` = output +
 *   thoughts;
 * - `info`, `error` and `warning` messages are the CLI's own notes, never sent to the model;
 * - a `gemini` message with nothing in it (no text, thoughts or tool calls) and no tokens, or
 *   only zeros, is no call: nothing was billed, and the model is sent nothing of it;
 * - `content` is a string, or a part list in newer versions (its text parts are read).
 *
 * The document is read one message at a time (json-document.ts), and each message goes to
 * ReadOptions.keep as it is made, so the lean read holds the text and slim messages only.
 * Message ids are Gemini's own; the tool results of a message get `<its id>:results`.
 */
import * as z from 'zod';
import { InputError } from '../errors.js';
import type { AnyMessage, ContentBlock, Diagnostic, Message, Session, Usage } from '../session/model.js';
import { asRecord, lastModel, nonZeroUsage, outputText, parseLine, partsText, toolArguments } from './convert.js';
import type { DocumentHead } from './json-document.js';
import { readJsonDocument } from './json-document.js';
import type { FormatReader, ReadOptions } from './reader.js';

const count = z.number().int().nonnegative();

const tokensSchema = z.looseObject({
  input: count,
  output: count,
  cached: count.nullish(),
  thoughts: count.nullish(),
  tool: count.nullish(),
});

const toolCallSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  args: z.unknown(),
  result: z.unknown(),
  status: z.string().nullish(),
});

const thoughtSchema = z.looseObject({ subject: z.string().nullish(), description: z.string().nullish() });

const messageSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  timestamp: z.string().nullish(),
  content: z.unknown(),
  model: z.string().nullish(),
  thoughts: z.array(thoughtSchema).nullish(),
  toolCalls: z.array(toolCallSchema).nullish(),
  tokens: tokensSchema.nullish(),
});

const headerSchema = z.looseObject({ sessionId: z.string() });

type GeminiMessage = z.infer<typeof messageSchema>;
type ToolCall = z.infer<typeof toolCallSchema>;

/** The billed split of a message's `tokens` (see the header for why). */
export function geminiCallUsage(tokens: z.infer<typeof tokensSchema>): Usage | undefined {
  const cacheRead = Math.min(tokens.cached ?? 0, tokens.input);
  return nonZeroUsage({
    input: tokens.input - cacheRead + (tokens.tool ?? 0),
    output: tokens.output + (tokens.thoughts ?? 0),
    cacheRead,
    cacheWrite: 0,
  });
}

/** What the model read back from a tool call: the function response's output, or its error. */
function toolResult(call: ToolCall): ContentBlock | null {
  if (!Array.isArray(call.result)) return null;
  const texts: string[] = [];
  let failed = call.status !== undefined && call.status !== null && call.status !== 'success';
  for (const part of call.result) {
    const record = asRecord(part);
    const response = asRecord(asRecord(record?.['functionResponse'])?.['response']);
    if (response) {
      if ('error' in response && response['error'] !== undefined) failed = true;
      texts.push(outputText(response['output'] ?? response['error'] ?? response));
    } else if (typeof record?.['text'] === 'string') texts.push(record['text']);
  }
  return { type: 'tool_result', tool_request_id: call.id, output: texts.join('\n'), is_error: failed };
}

/** The messages one Gemini CLI message stands for (none for the CLI's own notes). */
function messagesOf(message: GeminiMessage, line: number): Message[] {
  const stamp = message.timestamp ? { timestamp: message.timestamp } : {};
  const text = partsText(message.content);
  if (message.type === 'user') {
    return [{ id: message.id, role: 'user', content: text === '' ? [] : [{ type: 'text', text }], line, ...stamp }];
  }
  if (message.type !== 'gemini') return [];
  const blocks: ContentBlock[] = [];
  for (const thought of message.thoughts ?? []) {
    const thinking = [thought.subject, thought.description].filter((part) => part).join('\n');
    if (thinking !== '') blocks.push({ type: 'thinking', text: thinking });
  }
  if (text !== '') blocks.push({ type: 'text', text });
  const calls = message.toolCalls ?? [];
  for (const call of calls) blocks.push({ type: 'tool_request', id: call.id, name: call.name, arguments: toolArguments(call.args) });
  const usage = message.tokens ? geminiCallUsage(message.tokens) : undefined;
  if (blocks.length === 0 && !usage) return [];
  const assistant: Message = {
    id: message.id,
    role: 'assistant',
    content: blocks,
    line,
    ...(usage ? { usage } : {}),
    ...(message.model ? { model: message.model } : {}),
    ...stamp,
  };
  const results = calls.map(toolResult).filter((block): block is ContentBlock => block !== null);
  if (results.length === 0) return [assistant];
  return [assistant, { id: `${message.id}:results`, role: 'user', content: results, line, ...stamp }];
}

export async function readGeminiCli(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const document = await readJsonDocument(file, 'messages');
  // The ids only say it is a chat file; the messages are all the reader needs.
  parseLine(headerSchema, document.members, file, 1, { label: 'Gemini CLI chat file' });
  if (!document.hasArray) throw new InputError('Gemini CLI chat file: messages: expected an array', file, 1);
  const keep = options?.keep ?? ((message: Message) => message);
  const messages: AnyMessage[] = [];
  const warnings: Diagnostic[] = [...document.warnings];
  for (const { value, line } of document.elements()) {
    const message = parseLine(messageSchema, value, file, line, { label: 'message' });
    for (const each of messagesOf(message, line)) messages.push(keep(each));
  }
  const model = lastModel(messages);
  const project = document.members['projectHash'];
  return {
    path: file,
    format: 'gemini-cli',
    messages,
    recordedCompactions: [],
    offContext: [],
    warnings,
    ...(model ? { model } : {}),
    ...(typeof project === 'string' && project !== '' ? { project } : {}),
  };
}

/** A chat file's top-level object: the session's id and project hash, and its messages. */
function isChatHead(head: DocumentHead): boolean {
  const { scalars, containers } = head;
  if (typeof scalars['sessionId'] !== 'string' || typeof scalars['projectHash'] !== 'string') return false;
  // Gemini writes `messages` after the ids and times; a head cut before it still counts.
  return containers['messages'] === 'array' || (!('messages' in containers) && !('messages' in scalars) && !head.whole);
}

export const geminiCliReader: FormatReader = {
  name: 'gemini-cli',
  // A chat file written on one line is one JSON "line": its first value is the whole document.
  detect: (firstLines) => {
    const first = asRecord(firstLines[0]);
    return Boolean(first && typeof first['sessionId'] === 'string' && typeof first['projectHash'] === 'string' && Array.isArray(first['messages']));
  },
  detectDocument: isChatHead,
  read: readGeminiCli,
};
