/**
 * Anthropic Messages logs: one `MessageParam` a line (`{role, content}`, content a string or
 * blocks), an optional `{system}` line for the system prompt (the API takes it beside the
 * messages), and usage on assistant lines as the API reports it (`input_tokens` is the uncached
 * part; cache reads and writes beside it). Logged response objects (`{id, type: "message",
 * role, content, model, usage}`) read the same. Lines get `L<line>` ids.
 */
import * as z from 'zod';
import type { AnyMessage, Message, Session } from '../session/model.js';
import { anthropicBlocks, anthropicContentSchema, anthropicUsage, anthropicUsageSchema, unknownTypesWarning } from './anthropic-content.js';
import { asRecord, keepEach, lastModel, lineId, nonZeroUsage, parseLine, partsText } from './convert.js';
import { forEachJsonLine } from './jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

const systemSchema = z.looseObject({ system: anthropicContentSchema });
const messageSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: anthropicContentSchema,
  model: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

export async function readAnthropicMessages(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const messages: Message[] = [];
  const unknownTypes: string[] = [];
  const warnings = await forEachJsonLine(file, (value, line) => {
    const record = asRecord(value);
    const id = lineId(line);
    if (record && !('role' in record) && 'system' in record) {
      const text = partsText(parseLine(systemSchema, record, file, line).system);
      messages.push({ id, role: 'system', content: text === '' ? [] : [{ type: 'text', text }], line });
      return;
    }
    const { role, content, model, usage } = parseLine(messageSchema, value, file, line);
    const converted = anthropicBlocks(content, file, line);
    unknownTypes.push(...converted.unknownTypes);
    const reported = role === 'assistant' && usage ? nonZeroUsage(anthropicUsage(usage)) : undefined;
    messages.push({ id, role, content: converted.blocks, line, ...(reported ? { usage: reported } : {}), ...(model ? { model } : {}) });
  });
  const unknown = unknownTypesWarning(unknownTypes);
  if (unknown) warnings.push({ file, message: unknown });
  const model = lastModel(messages);
  return { path: file, format: 'anthropic-messages', messages: keepEach(messages, options), recordedCompactions: [], offContext: [], warnings, ...(model ? { model } : {}) };
}

const ANTHROPIC_BLOCK_TYPES = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'server_tool_use']);

/** Evidence only the Anthropic shape has: its block types, a `{system}` line, its usage fields. */
function isAnthropicLine(value: unknown): boolean {
  const record = asRecord(value);
  if (!record) return false;
  if (!('role' in record)) return 'system' in record && Object.keys(record).length <= 2;
  if (record['role'] !== 'user' && record['role'] !== 'assistant') return false;
  if (record['type'] === 'message') return true;
  const usage = asRecord(record['usage']);
  if (usage && 'input_tokens' in usage) return true;
  const content = record['content'];
  if (!Array.isArray(content)) return false;
  return content.some((block) => {
    const part = asRecord(block);
    return ANTHROPIC_BLOCK_TYPES.has(String(part?.['type'])) || (part?.['type'] === 'image' && 'source' in part);
  });
}

export const anthropicMessagesReader: FormatReader = {
  name: 'anthropic-messages',
  detect: (firstLines) => firstLines.some(isAnthropicLine),
  read: readAnthropicMessages,
};
