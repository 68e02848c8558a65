/**
 * Content blocks and usage of the Anthropic Messages API, shared by the two readers whose
 * lines carry API messages: Claude Code (`line.message`) and Anthropic messages logs. Turning
 * whole lines into messages is left to them.
 */
import * as z from 'zod';
import type { ContentBlock, Usage } from '../session/model.js';
import { outputText, parseLine } from './convert.js';

const count = z.number().int().nonnegative();

export const anthropicUsageSchema = z.looseObject({
  input_tokens: count.nullish(),
  output_tokens: count.nullish(),
  cache_creation_input_tokens: count.nullish(),
  cache_read_input_tokens: count.nullish(),
  /** The cache writes split by lifetime (they sum to `cache_creation_input_tokens`). */
  cache_creation: z
    .looseObject({
      ephemeral_5m_input_tokens: count.nullish(),
      ephemeral_1h_input_tokens: count.nullish(),
    })
    .nullish(),
});
export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

const blockSchema = z.looseObject({ type: z.string() });
export const anthropicContentSchema = z.union([z.string(), z.array(blockSchema)]);
export type AnthropicContent = z.infer<typeof anthropicContentSchema>;

const toolUseSchema = z.looseObject({ id: z.string().min(1), name: z.string(), input: z.unknown() });
const toolResultSchema = z.looseObject({
  tool_use_id: z.string().min(1),
  content: z.unknown(),
  is_error: z.boolean().nullish(),
});

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * An object zod's object schemas would look into: not an array, and no own `__proto__` (JSON.parse
 * makes one, and what zod does with it is zod's to say). The plain checks below answer only for
 * such objects.
 */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !hasOwn.call(value, '__proto__');
}

export const isNullishString = (value: unknown): boolean => value === undefined || value === null || typeof value === 'string';
export const isNullishBoolean = (value: unknown): boolean => value === undefined || value === null || typeof value === 'boolean';
const isNullishCount = (value: unknown): boolean => value === undefined || value === null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);

/**
 * Whether `value` certainly passes `anthropicUsageSchema.nullish()`. A loose object's schema
 * passes its input through with the same values, so a caller that only reads fields can use the
 * value as it is; false sends it to the schema (zod copies every object it
 * passes, which was most of its cost on a Claude Code line).
 */
export function isPlainUsage(value: unknown): value is AnthropicUsage | null | undefined {
  if (value === undefined || value === null) return true;
  if (!isPlainRecord(value)) return false;
  if (!isNullishCount(value['input_tokens']) || !isNullishCount(value['output_tokens'])) return false;
  if (!isNullishCount(value['cache_creation_input_tokens']) || !isNullishCount(value['cache_read_input_tokens'])) return false;
  const split = value['cache_creation'];
  if (split === undefined || split === null) return true;
  return isPlainRecord(split) && isNullishCount(split['ephemeral_5m_input_tokens']) && isNullishCount(split['ephemeral_1h_input_tokens']);
}

/** Whether `value` certainly passes `anthropicContentSchema` (see isPlainUsage). */
export function isPlainContent(value: unknown): value is AnthropicContent {
  if (typeof value === 'string') return true;
  if (!Array.isArray(value)) return false;
  for (const block of value) if (!isPlainRecord(block) || typeof block['type'] !== 'string') return false;
  return true;
}

/**
 * `input_tokens` is the uncached part; cache reads and writes are reported beside it. Writes
 * with a one-hour lifetime (billed higher than five-minute ones) are the part `cacheWrite1h`;
 * a usage with only the split (no total) takes the total from it.
 */
export function anthropicUsage(usage: AnthropicUsage): Usage {
  const split = usage.cache_creation;
  const oneHour = split?.ephemeral_1h_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? (split ? (split.ephemeral_5m_input_tokens ?? 0) + oneHour : 0);
  return {
    input: usage.input_tokens ?? 0,
    output: usage.output_tokens ?? 0,
    cacheRead: usage.cache_read_input_tokens ?? 0,
    cacheWrite,
    // Never more than the writes it is part of (a file whose split disagrees with its total).
    ...(oneHour > 0 ? { cacheWrite1h: Math.min(oneHour, cacheWrite) } : {}),
  };
}

/** Blocks without text for the model to read again: left out, without a warning. */
const SILENT_TYPES = new Set(['image', 'document', 'container_upload']);

export interface ConvertedContent {
  readonly blocks: ContentBlock[];
  /** Block types this reader does not know (reported once per session by the caller). */
  readonly unknownTypes: string[];
}

/**
 * Converts message content. Server-side tool blocks (web search and the like) become text: the
 * provider ran them inside one call, so they have no separate result to keep paired.
 */
export function anthropicBlocks(content: AnthropicContent, file: string, line: number): ConvertedContent {
  if (typeof content === 'string') return { blocks: content === '' ? [] : [{ type: 'text', text: content }], unknownTypes: [] };
  const blocks: ContentBlock[] = [];
  const unknownTypes: string[] = [];
  content.forEach((block, index) => {
    const record = block as Record<string, unknown>;
    switch (block.type) {
      case 'text':
        blocks.push({ type: 'text', text: typeof record['text'] === 'string' ? record['text'] : '' });
        return;
      case 'thinking':
        blocks.push({ type: 'thinking', text: typeof record['thinking'] === 'string' ? record['thinking'] : '' });
        return;
      case 'redacted_thinking':
        blocks.push({ type: 'thinking', text: '' });
        return;
      case 'tool_use': {
        // A block that certainly passes is read as it is (the schema would copy it).
        const plain = isPlainRecord(record) && typeof record['id'] === 'string' && record['id'] !== '' && typeof record['name'] === 'string' && hasOwn.call(record, 'input');
        const use = plain ? (record as z.infer<typeof toolUseSchema>) : parseLine(toolUseSchema, block, file, line, { where: ['content', index] });
        const input = use.input !== null && typeof use.input === 'object' && !Array.isArray(use.input) ? (use.input as Record<string, unknown>) : { input: use.input };
        blocks.push({ type: 'tool_request', id: use.id, name: use.name, arguments: input });
        return;
      }
      case 'tool_result': {
        const plain = isPlainRecord(record) && typeof record['tool_use_id'] === 'string' && record['tool_use_id'] !== '' && hasOwn.call(record, 'content') && isNullishBoolean(record['is_error']);
        const result = plain ? (record as z.infer<typeof toolResultSchema>) : parseLine(toolResultSchema, block, file, line, { where: ['content', index] });
        blocks.push({ type: 'tool_result', tool_request_id: result.tool_use_id, output: outputText(result.content), is_error: result.is_error ?? false });
        return;
      }
      case 'server_tool_use':
      case 'mcp_tool_use':
        blocks.push({ type: 'text', text: `[${String(record['name'] ?? block.type)}] ${JSON.stringify(record['input'] ?? {})}` });
        return;
      default:
        if (block.type.endsWith('_tool_result')) {
          blocks.push({ type: 'text', text: outputText(record['content']) });
        } else if (!SILENT_TYPES.has(block.type)) {
          unknownTypes.push(block.type);
        }
    }
  });
  return { blocks, unknownTypes };
}

/** One warning naming the block types a session had that no reader knows. */
export function unknownTypesWarning(types: Iterable<string>): string | null {
  const unique = [...new Set(types)].sort();
  return unique.length === 0 ? null : `skipped content blocks of unknown type: ${unique.join(', ')}`;
}
