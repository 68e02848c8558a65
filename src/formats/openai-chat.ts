/**
 * OpenAI chat-completions message logs: one `ChatCompletionMessageParam` a line (`role`,
 * `content`, `tool_calls`, `tool_call_id`; legacy `function_call` / `role: "function"`).
 * Usage, when logged, sits on the assistant line (`usage: {prompt_tokens, completion_tokens}`)
 * or on a line of its own right after it. `prompt_tokens` already includes cached tokens, so it
 * is all `input`. Lines carry no ids: messages get `L<line>`.
 */
import * as z from 'zod';
import { InputError } from '../errors.js';
import type { AnyMessage, ContentBlock, Message, Session, Usage } from '../session/model.js';
import { asRecord, keepEach, lastModel, lineId, nonZeroUsage, outputText, parseLine, partsText, toolArguments, tokenCount } from './convert.js';
import { forEachJsonLine } from './jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
/** Parts that mean the file is Anthropic-shaped after all (detection only sees the first lines). */
const ANTHROPIC_PART_TYPES = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

const functionSchema = z.looseObject({ name: z.string(), arguments: z.unknown() });
const lineSchema = z.looseObject({
  role: z.enum(ROLES),
  content: z.union([z.string(), z.array(z.looseObject({})), z.null()]).optional(),
  name: z.string().nullish(),
  tool_calls: z.array(z.looseObject({ id: z.string().min(1), function: functionSchema })).nullish(),
  function_call: functionSchema.nullish(),
  tool_call_id: z.string().nullish(),
  refusal: z.string().nullish(),
  model: z.string().nullish(),
  usage: z.looseObject({}).nullish(),
});
type ChatLine = z.infer<typeof lineSchema>;

function openAiUsage(usage: Record<string, unknown> | null | undefined): Usage | undefined {
  if (!usage) return undefined;
  const input = tokenCount(usage['prompt_tokens']);
  const output = tokenCount(usage['completion_tokens']);
  if (input === undefined && output === undefined) return undefined;
  return nonZeroUsage({ input: input ?? 0, output: output ?? 0, cacheRead: 0, cacheWrite: 0 });
}

function assistantBlocks(line: ChatLine, lineNumber: number): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const text = partsText(line.content ?? '');
  if (text !== '') blocks.push({ type: 'text', text });
  if (line.refusal) blocks.push({ type: 'text', text: line.refusal });
  for (const call of line.tool_calls ?? []) {
    blocks.push({ type: 'tool_request', id: call.id, name: call.function.name, arguments: toolArguments(call.function.arguments) });
  }
  if (line.function_call) {
    // Legacy function calls have no id; the line names it so the result can point back.
    blocks.push({ type: 'tool_request', id: lineId(lineNumber), name: line.function_call.name, arguments: toolArguments(line.function_call.arguments) });
  }
  return blocks;
}

export async function readOpenAiChat(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const messages: Message[] = [];
  /** Legacy `function` results answer the latest unanswered function_call of that name. */
  const openFunctionCalls = new Map<string, string>();
  const warnings = await forEachJsonLine(file, (value, lineNumber) => {
    const record = asRecord(value);
    if (record && !('role' in record) && asRecord(record['usage'])) {
      const previous = messages.at(-1);
      const usage = openAiUsage(asRecord(record['usage']));
      if (!previous || previous.role !== 'assistant') throw new InputError('a usage line must follow an assistant message', file, lineNumber);
      if (usage) messages[messages.length - 1] = { ...previous, usage };
      return;
    }
    const line = parseLine(lineSchema, value, file, lineNumber);
    const id = lineId(lineNumber);
    const foreign = Array.isArray(line.content) ? line.content.find((part) => ANTHROPIC_PART_TYPES.has(String(part['type']))) : undefined;
    if (foreign) {
      throw new InputError(`content holds an Anthropic "${String(foreign['type'])}" block; read this file with --format anthropic-messages`, file, lineNumber);
    }
    switch (line.role) {
      case 'system':
      case 'developer':
      case 'user': {
        const text = partsText(line.content ?? '');
        messages.push({ id, role: line.role === 'user' ? 'user' : 'system', content: text === '' ? [] : [{ type: 'text', text }], line: lineNumber });
        return;
      }
      case 'assistant': {
        const usage = openAiUsage(line.usage);
        const content = assistantBlocks(line, lineNumber);
        if (line.function_call) openFunctionCalls.set(line.function_call.name, id);
        messages.push({ id, role: 'assistant', content, line: lineNumber, ...(usage ? { usage } : {}), ...(line.model ? { model: line.model } : {}) });
        return;
      }
      case 'tool': {
        if (!line.tool_call_id) throw new InputError('tool_call_id: a tool message needs one', file, lineNumber);
        messages.push({ id, role: 'user', content: [{ type: 'tool_result', tool_request_id: line.tool_call_id, output: outputText(line.content), is_error: false }], line: lineNumber });
        return;
      }
      case 'function': {
        const callId = line.name ? openFunctionCalls.get(line.name) : undefined;
        if (!callId) throw new InputError(`a function result for ${JSON.stringify(line.name ?? '')} follows no function_call of that name`, file, lineNumber);
        openFunctionCalls.delete(line.name!);
        messages.push({ id, role: 'user', content: [{ type: 'tool_result', tool_request_id: callId, output: outputText(line.content), is_error: false }], line: lineNumber });
        return;
      }
    }
  });
  const model = lastModel(messages);
  return { path: file, format: 'openai-chat', messages: keepEach(messages, options), recordedCompactions: [], offContext: [], warnings, ...(model ? { model } : {}) };
}

/** A chat message line: a known role and no `type` (Anthropic responses and agent logs have one). */
function isOpenAiLine(value: unknown): boolean {
  const record = asRecord(value);
  return Boolean(record && ROLES.includes(record['role'] as (typeof ROLES)[number]) && !('type' in record));
}

export const openAiChatReader: FormatReader = {
  name: 'openai-chat',
  detect: (firstLines) => firstLines.some(isOpenAiLine),
  read: readOpenAiChat,
};
