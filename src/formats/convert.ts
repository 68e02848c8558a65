/**
 * Small conversions the format readers share: stable line-based ids, tool arguments, tool
 * output text, token counts that arrive as numbers or strings, the session's model name, a list
 * sorted only when it is out of order. Pure; each reader owns the shape of its own format.
 */
import type * as z from 'zod';
import { InputError } from '../errors.js';
import type { AnyMessage, Message, Usage } from '../session/model.js';
import type { ReadOptions } from './reader.js';

/**
 * A line's value checked against its format's schema; a mismatch is an InputError naming file,
 * line and the first bad field (`where` is prepended to the field's path, `label` to the message).
 */
export function parseLine<T>(
  schema: z.ZodType<T>,
  value: unknown,
  file: string,
  line: number,
  { label, where = [] }: { label?: string; where?: readonly (string | number)[] } = {},
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = [...where, ...(issue?.path ?? [])].map(String).join('.') || 'line';
  throw new InputError(`${label ? `${label}: ` : ''}${field}: ${issue?.message ?? 'invalid'}`, file, line);
}

/**
 * Message.callKey: the provider's id for a call (a response id) with the time the file wrote it.
 * A fork copies both; the time keeps apart calls of unrelated sessions whose ids repeat (a local
 * server, a scripted provider). Null without an id.
 */
export function callKeyOf(id: unknown, timestamp: unknown): string | undefined {
  return typeof id === 'string' && id !== '' ? `${id}@${typeof timestamp === 'string' ? timestamp : ''}` : undefined;
}

/** The id of a message that has none in its file: `L<line>` (plus a part for several per line). */
/** An array or a typed array: what sortUnlessOrdered reads and sorts. */
interface Sortable<T> {
  readonly length: number;
  readonly [index: number]: T;
  sort(compare: (a: T, b: T) => number): unknown;
}

/**
 * Sorts `list` in place by `compare`, unless it is in order already: the readers' lists mostly
 * are (a file is written in order), and a sort allocates its work array even then.
 */
export function sortUnlessOrdered<T>(list: Sortable<T>, compare: (a: T, b: T) => number): void {
  for (let index = 1; index < list.length; index++) {
    if (compare(list[index - 1]!, list[index]!) > 0) {
      list.sort(compare);
      return;
    }
  }
}

export function lineId(line: number, part?: string | number): string {
  return part === undefined ? `L${line}` : `L${line}-${part}`;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * Tool arguments as an object: formats store them as an object or a JSON string (OpenAI, Codex).
 * Anything else (a patch body, invalid JSON) is kept whole under `input`, so it is still counted.
 */
export function toolArguments(value: unknown): Record<string, unknown> {
  const record = asRecord(value);
  if (record) return record;
  if (typeof value === 'string') {
    try {
      const parsed = asRecord(JSON.parse(value));
      if (parsed) return parsed;
    } catch {
      // Not JSON: keep the raw text below.
    }
    return value === '' ? {} : { input: value };
  }
  return value === undefined || value === null ? {} : { input: value };
}

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text', 'summary_text', 'refusal']);

/**
 * The text of a content value: a string, or the text parts of a part list joined by newlines.
 * Images and other binary parts carry no text and are left out.
 */
export function partsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) {
    const record = asRecord(value);
    if (record && typeof record['text'] === 'string') return record['text'];
    return '';
  }
  const texts: string[] = [];
  for (const part of value) {
    if (typeof part === 'string') texts.push(part);
    const record = asRecord(part);
    if (!record) continue;
    const text = record['text'] ?? record['refusal'];
    if (typeof text === 'string' && (record['type'] === undefined || TEXT_PART_TYPES.has(String(record['type'])))) texts.push(text);
  }
  return texts.join('\n');
}

/**
 * A tool's output as the model read it: a string as is, a part list as its text, any other
 * object as JSON (what a harness would serialize).
 */
export function outputText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return partsText(value);
  const record = asRecord(value);
  if (record && typeof record['content'] === 'string') return record['content'];
  if (record && typeof record['text'] === 'string') return record['text'];
  return JSON.stringify(value);
}

/**
 * A token count from a log field: a non-negative integer, or a string holding one (tracing's
 * `%`/`?` recording writes `"1234"` or `"Some(1234)"`). Anything else is undefined.
 */
export function tokenCount(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(?:Some\()?\s*(\d+)\s*\)?\s*$/.exec(value);
  return match ? Number(match[1]) : undefined;
}

/** Usage, or undefined when every figure is zero (a call that never reached the provider). */
export function nonZeroUsage(usage: Usage): Usage | undefined {
  return usage.input + usage.output + usage.cacheRead + usage.cacheWrite > 0 ? usage : undefined;
}

/** The session's model: the last one an assistant message names, else `fallback`. */
export function lastModel(messages: readonly AnyMessage[], fallback?: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const model = messages[i]!.model;
    if (model) return model;
  }
  return fallback;
}

/**
 * The message a renamed copy (withUniqueIds) was made from, kept on the copy under this symbol (not
 * enumerable: JSON and a spread copy never see it). The lean read (read/index.ts) finds each
 * message's estimate by the object its `keep` hook returned; a renamed copy leads back to it, so a
 * session with a repeated id is not read a second time in full.
 */
const RENAMED_FROM: unique symbol = Symbol('renamed from');

/** A message that may be a renamed copy. */
interface MaybeRenamed {
  readonly [RENAMED_FROM]?: AnyMessage;
}

/** The message `message` was renamed from by withUniqueIds, or undefined when it is no renamed copy. */
export function renamedSource(message: AnyMessage & MaybeRenamed): AnyMessage | undefined {
  return message[RENAMED_FROM];
}

/**
 * Message ids unique within the session, as sidecars and the provider view need: a repeated
 * id (a hand-edited or trimmed file) gives way to the line-based id of its line.
 */
export function withUniqueIds<M extends AnyMessage>(messages: readonly M[]): M[] {
  const seen = new Set<string>();
  return messages.map((message) => {
    let id = message.id;
    for (let part = 0; seen.has(id); part++) id = part === 0 ? lineId(message.line) : lineId(message.line, part);
    seen.add(id);
    if (id === message.id) return message;
    const renamed = { ...message, id };
    Object.defineProperty(renamed, RENAMED_FROM, { value: message });
    return renamed;
  });
}

/**
 * ReadOptions.keep on each finished message, in session order (what the lean path stores:
 * read/slim.ts). For readers that settle their messages only once the whole file is read.
 */
export function keepEach(messages: Message[], options: ReadOptions | undefined): AnyMessage[] {
  const keep = options?.keep;
  return keep ? messages.map((message) => keep(message)) : messages;
}
