/**
 * Our canonical format (the Message model, as JSON): one message a line,
 * `{id, role, content: block[] | string, metadata?: {input_tokens, output_tokens, …}, timestamp?}`.
 * A thinking block is `{type: "thinking", text}`, or as Anthropic writes it, `{thinking,
 * signature?}`; `redacted_thinking` (its text encrypted) is a thinking block with no text.
 * See README "Canonical session format" and "Bad input" for what is an error and what a warning:
 * a line we cannot interpret is an error; one we can read with a repair is a warning.
 */
import * as z from 'zod';
import { InputError } from '../errors.js';
import type { AnyMessage, ContentBlock, Diagnostic, Message, Role, Session, Usage } from '../session/model.js';
import { CanonicalMeasuringCutter } from './canonical-lengths.js';
import { forEachJsonLine, isJsonObject, jsonKind } from './jsonl-lines.js';
import type { FormatReader } from './reader.js';

/** For a read that only measures text (ReadOptions.textLengthsOnly): long texts are sized from their bytes. */
const MEASURED_TEXTS = new CanonicalMeasuringCutter();

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

const CANONICAL_BLOCK_TYPES = new Set(['text', 'thinking', 'redacted_thinking', 'tool_request', 'tool_result']);

/**
 * A thinking block in the model's own shape (`{type: "thinking", text}`): Anthropic's field name
 * (`thinking`) read as its text when `text` is absent, a redacted one as no text.
 */
function asThinking(block: Record<string, unknown>): Record<string, unknown> {
  if (block['type'] === 'redacted_thinking') return { type: 'thinking', text: '' };
  if (block['type'] !== 'thinking' || block['text'] !== undefined || typeof block['thinking'] !== 'string') return block;
  return { type: 'thinking', text: block['thinking'] };
}
const ROLES: ReadonlySet<string> = new Set<Role>(['user', 'assistant', 'system']);
const TOKEN_FIELDS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
type TokenField = (typeof TOKEN_FIELDS)[number];

/** Reads one line at a time, collecting warnings; throws InputError for lines it cannot use. */
class LineReader {
  readonly messages: AnyMessage[] = [];
  readonly warnings: Diagnostic[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly path: string,
    /** ReadOptions.keep: what to store of each message (the lean path's slim copy). */
    private readonly keep: (message: Message) => AnyMessage = (message) => message,
  ) {}

  private warn(line: number, message: string): void {
    this.warnings.push({ file: this.path, line, message });
  }

  read(value: unknown, line: number): void {
    if (!isJsonObject(value)) throw new InputError(`expected a JSON object, got ${jsonKind(value)}`, this.path, line);
    const role = value['role'];
    if (typeof role !== 'string' || !ROLES.has(role)) {
      const what = role === undefined ? 'no role' : `unknown role ${JSON.stringify(role)}`;
      this.warn(line, `${what} (expected user, assistant or system); line skipped`);
      return;
    }
    const content = this.content(value['content'], line);
    const usage = this.usage(value['metadata'], line);
    const model = isJsonObject(value['metadata']) ? this.optionalString(value['metadata'], 'model', line) : undefined;
    const timestamp = this.optionalString(value, 'timestamp', line);
    this.messages.push(this.keep({
      id: this.id(value['id'], line),
      role: role as Role,
      content,
      line,
      ...(usage ? { usage } : {}),
      ...(model ? { model } : {}),
      ...(timestamp ? { timestamp } : {}),
    }));
  }

  /** Ids anchor the sidecar, so each must be unique: a missing or repeated one gets a line-based id. */
  private id(raw: unknown, line: number): string {
    let id: string;
    if (typeof raw === 'string' && raw !== '') {
      id = raw;
    } else {
      id = `line-${line}`;
      const given = raw === undefined || raw === null || raw === '' ? 'message has no id' : `id: expected a string, got ${jsonKind(raw)}`;
      this.warn(line, `${given}; using ${JSON.stringify(id)}`);
    }
    if (this.seen.has(id)) {
      const original = id;
      for (let n = 1; this.seen.has(id); n++) id = `${original}@line-${line}${n > 1 ? `-${n}` : ''}`;
      this.warn(line, `duplicate message id ${JSON.stringify(original)}; using ${JSON.stringify(id)}`);
    }
    this.seen.add(id);
    return id;
  }

  private content(raw: unknown, line: number): ContentBlock[] {
    if (typeof raw === 'string') return [{ type: 'text', text: raw }];
    if (!Array.isArray(raw)) {
      throw new InputError(`content: expected a string or a list of blocks, got ${raw === undefined ? 'nothing' : jsonKind(raw)}`, this.path, line);
    }
    const blocks: ContentBlock[] = [];
    raw.forEach((block, index) => {
      const type = isJsonObject(block) ? block['type'] : undefined;
      if (typeof type !== 'string') {
        throw new InputError(`content.${index}: expected a block with a "type", got ${jsonKind(block)}`, this.path, line);
      }
      if (!CANONICAL_BLOCK_TYPES.has(type)) {
        this.warn(line, `content.${index}: unknown block type ${JSON.stringify(type)}; block skipped`);
        return;
      }
      const parsed = blockSchema.safeParse(asThinking(block as Record<string, unknown>));
      if (!parsed.success) throw new InputError(`content.${index}.${describeIssue(parsed.error)}`, this.path, line);
      blocks.push(parsed.data);
    });
    return blocks;
  }

  /** Usage the provider reported. Odd numbers are repaired or dropped with a warning, never fatal. */
  private usage(metadata: unknown, line: number): Usage | undefined {
    if (metadata === undefined) return undefined;
    if (!isJsonObject(metadata)) {
      this.warn(line, `metadata: expected an object, got ${jsonKind(metadata)}; ignored`);
      return undefined;
    }
    const counts: Partial<Record<TokenField, number>> = {};
    for (const field of TOKEN_FIELDS) {
      const count = this.tokenCount(metadata[field], `metadata.${field}`, line);
      if (count !== undefined) counts[field] = count;
    }
    if (counts.input_tokens === undefined && counts.output_tokens === undefined) return undefined;
    return {
      input: counts.input_tokens ?? 0,
      output: counts.output_tokens ?? 0,
      cacheRead: counts.cache_read_input_tokens ?? 0,
      cacheWrite: counts.cache_creation_input_tokens ?? 0,
    };
  }

  private tokenCount(raw: unknown, name: string, line: number): number | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return raw;
    if (typeof raw === 'string' && /^\d+$/.test(raw.trim())) {
      const count = Number(raw.trim());
      this.warn(line, `${name}: a number written as a string (${JSON.stringify(raw)}); read as ${count}`);
      return count;
    }
    // JSON.stringify writes a number too large for a double (1e400, read as Infinity) as null.
    const what = typeof raw === 'number' && !Number.isFinite(raw) ? 'a number too large to be read (beyond 1.8e308)' : (JSON.stringify(raw) ?? String(raw));
    this.warn(line, `${name}: ${what} is not a token count (a whole number >= 0); ignored, estimated instead`);
    return undefined;
  }

  private optionalString(record: Record<string, unknown>, key: string, line: number): string | undefined {
    const raw = record[key];
    if (raw === undefined || raw === null || typeof raw === 'string') return raw ?? undefined;
    this.warn(line, `${key}: expected a string, got ${jsonKind(raw)}; ignored`);
    return undefined;
  }
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid block';
  return `${issue.path.join('.') || 'block'}: ${issue.message}`;
}


/**
 * A block as only our format writes it, for detection: Anthropic's thinking (`thinking`,
 * `redacted_thinking`) and tools differ, and a line holding them is Anthropic's (which the
 * canonical reader still reads, in a file detected as canonical by its first line).
 */
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

  async read(path, options) {
    const reader = new LineReader(path, options?.keep);
    const cutter = options?.textLengthsOnly === true && options.keep !== undefined ? MEASURED_TEXTS : undefined;
    const readWarnings = await forEachJsonLine(path, (value, line) => reader.read(value, line), cutter);
    const warnings = [...readWarnings, ...reader.warnings].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    const messages = reader.messages;
    const model = messages.find((message) => message.model)?.model;
    const session: Session<AnyMessage> = {
      path,
      format: 'canonical',
      messages,
      recordedCompactions: [],
      offContext: [],
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
