/**
 * Our canonical format (seed 004's Message): one message a line,
 * `{id, role, content: block[] | string, metadata?: {input_tokens, output_tokens, …}, timestamp?}`.
 * See README "Canonical session format".
 */
import { z } from 'zod';
import { InputError } from '../errors.js';
import type { ContentBlock, Diagnostic, Message, Session, Usage } from '../session/model.js';
import { parseLine } from './convert.js';
import { forEachJsonLine } from './jsonl-lines.js';
import type { FormatReader } from './reader.js';

const tokenCount = z.number().int().nonnegative();

const blockSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('thinking'), text: z.string() }),
  z.object({
    type: z.literal('tool_request'),
    id: z.string().min(1),
    name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()),
  }),
  z.object({
    type: z.literal('tool_result'),
    tool_request_id: z.string().min(1),
    output: z.string(),
    is_error: z.boolean().default(false),
  }),
]);

const lineSchema = z.object({
  id: z.string().min(1),
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(blockSchema)]),
  metadata: z
    .object({
      input_tokens: tokenCount.optional(),
      output_tokens: tokenCount.optional(),
      cache_read_input_tokens: tokenCount.optional(),
      cache_creation_input_tokens: tokenCount.optional(),
      model: z.string().optional(),
    })
    .optional(),
  timestamp: z.string().optional(),
});

type CanonicalLine = z.infer<typeof lineSchema>;

function usageOf(metadata: CanonicalLine['metadata']): Usage | undefined {
  if (!metadata || (metadata.input_tokens === undefined && metadata.output_tokens === undefined)) return undefined;
  return {
    input: metadata.input_tokens ?? 0,
    output: metadata.output_tokens ?? 0,
    cacheRead: metadata.cache_read_input_tokens ?? 0,
    cacheWrite: metadata.cache_creation_input_tokens ?? 0,
  };
}

function toMessage(line: CanonicalLine, lineNumber: number): Message {
  const content: ContentBlock[] = typeof line.content === 'string' ? [{ type: 'text', text: line.content }] : line.content;
  const usage = usageOf(line.metadata);
  return {
    id: line.id,
    role: line.role,
    content,
    line: lineNumber,
    ...(usage ? { usage } : {}),
    ...(line.metadata?.model ? { model: line.metadata.model } : {}),
    ...(line.timestamp ? { timestamp: line.timestamp } : {}),
  };
}

/** A block as only our format writes it (Anthropic's `thinking` has no `text`, its tools differ). */
function isCanonicalBlock(block: unknown): boolean {
  const record = block as Record<string, unknown> | null;
  if (!record || typeof record !== 'object') return false;
  switch (record['type']) {
    case 'text':
    case 'thinking':
      return typeof record['text'] === 'string';
    case 'tool_request':
      return typeof record['id'] === 'string' && typeof record['name'] === 'string';
    case 'tool_result':
      return typeof record['tool_request_id'] === 'string';
    default:
      return false;
  }
}

/** Keys that mark another format's line even when it also has `id`, `role` and `content`. */
const FOREIGN_KEYS = ['type', 'tool_calls', 'tool_call_id', 'message', 'payload'];

export const canonicalReader: FormatReader = {
  name: 'canonical',

  detect(firstLines) {
    const first = firstLines[0] as Record<string, unknown> | undefined;
    if (!first || typeof first !== 'object' || typeof first['id'] !== 'string') return false;
    if (!['user', 'assistant', 'system'].includes(first['role'] as string)) return false;
    if (FOREIGN_KEYS.some((key) => key in first)) return false;
    const content = first['content'];
    if (typeof content === 'string') return true;
    return Array.isArray(content) && content.every(isCanonicalBlock);
  },

  async read(path) {
    const messages: Message[] = [];
    const seen = new Set<string>();
    const warnings: Diagnostic[] = [];
    const readWarnings = await forEachJsonLine(path, (value, line) => {
      const parsed = parseLine(lineSchema, value, path, line);
      if (seen.has(parsed.id)) {
        throw new InputError(`duplicate message id ${JSON.stringify(parsed.id)}`, path, line);
      }
      seen.add(parsed.id);
      messages.push(toMessage(parsed, line));
    });
    warnings.push(...readWarnings);
    const model = messages.find((message) => message.model)?.model;
    const session: Session = {
      path,
      format: 'canonical',
      messages,
      recordedCompactions: [],
      warnings,
      ...(model ? { model } : {}),
    };
    return session;
  },
};


/** A message as one canonical JSONL record (the inverse of the reader). */
export function toCanonicalRecord(message: Message): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  if (message.usage) {
    metadata['input_tokens'] = message.usage.input;
    metadata['output_tokens'] = message.usage.output;
    if (message.usage.cacheRead) metadata['cache_read_input_tokens'] = message.usage.cacheRead;
    if (message.usage.cacheWrite) metadata['cache_creation_input_tokens'] = message.usage.cacheWrite;
  }
  if (message.model) metadata['model'] = message.model;
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(message.timestamp ? { timestamp: message.timestamp } : {}),
  };
}
