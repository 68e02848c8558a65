/**
 * Token estimates for messages. Pure: a `TextCounter` turns text into tokens (chars/4 by
 * default, an exact tokenizer when asked), and everything else is arithmetic over messages.
 */
import type { AnyMessage, ContentBlock, Message, RecordedCompaction } from '../session/model.js';
import { promptTokens, windowStartAt } from '../session/model.js';

/** Counts the tokens of a piece of text. */
export type TextCounter = (text: string) => number;

/** The heuristic: about four characters a token. */
export const CHARS_PER_TOKEN = 4;

export const heuristicCounter: TextCounter = (text) => Math.ceil(text.length / CHARS_PER_TOKEN);

/** The text a block contributes to the prompt (a tool request is its name + serialized arguments). */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
    case 'thinking':
      return block.text;
    case 'tool_request':
      return block.name + JSON.stringify(block.arguments);
    case 'tool_result':
      return block.output;
  }
}

/** Characters in a message's blocks, summed (what chars/4 divides). */
export function messageChars(message: Message): number {
  let chars = 0;
  for (const block of message.content) chars += blockText(block).length;
  return chars;
}

/**
 * The length of each block's text (blockText), in block order, into `into` (emptied first): what
 * chars/4 divides, taken once for a message's estimate and for a reader of each block's size.
 */
export function blockLengths(message: Message, into: number[]): number[] {
  into.length = 0;
  for (const block of message.content) into.push(blockText(block).length);
  return into;
}

/** estimateMessageTokens by chars/4 from the message's blockLengths. */
export function estimateFromLengths(message: Message, lengths: readonly number[]): number {
  if (message.knownTokens !== undefined) return message.knownTokens;
  return Math.ceil(sum(lengths) / CHARS_PER_TOKEN);
}

/** Estimated tokens of one message: all its blocks, counted together (or its known size). */
export function estimateMessageTokens(message: Message, count: TextCounter = heuristicCounter): number {
  if (message.knownTokens !== undefined) return message.knownTokens;
  if (count === heuristicCounter) return Math.ceil(messageChars(message) / CHARS_PER_TOKEN);
  let tokens = 0;
  for (const block of message.content) tokens += count(blockText(block));
  return tokens;
}

/** Per-message estimates, computed once and shared by cut point, replay and reports. */
export function estimateAll(messages: readonly Message[], count: TextCounter = heuristicCounter): number[] {
  return messages.map((message) => estimateMessageTokens(message, count));
}

export function sum(values: readonly number[], from = 0, to = values.length): number {
  let total = 0;
  for (let i = from; i < to; i++) total += values[i] ?? 0;
  return total;
}

/** Does this message report the prompt its call sent? (The hybrid estimate starts from the last one.) */
export function reportsPrompt(message: AnyMessage | undefined): boolean {
  const usage = message?.usage;
  return usage !== undefined && promptTokens(usage) > 0;
}

/**
 * What the hybrid estimate reads besides the messages. Directly (the default) each is a scan;
 * a caller estimating many prefixes of one session passes indexed ones (compaction/session-index.ts).
 */
export interface ContextLookups {
  /** Σ tokens over [from, to). */
  readonly sum: (from: number, to: number) => number;
  /** Index of the last message before `end` that reports its prompt, or -1. */
  readonly lastReported: (end: number) => number;
}

export function directContextLookups(messages: readonly AnyMessage[], tokens: readonly number[]): ContextLookups {
  return {
    sum: (from, to) => sum(tokens, from, to),
    lastReported: (end) => {
      for (let i = end - 1; i >= 0; i--) if (reportsPrompt(messages[i])) return i;
      return -1;
    },
  };
}

/**
 * The hybrid context estimate: the prompt size the provider last reported,
 * plus that call's own output, plus estimates of every message after it. With no report at
 * all, every message is estimated. `end` (exclusive) measures a prefix of the session.
 *
 * With compactions the agent recorded, only messages from the window start at `end` count:
 * estimates of messages the reported prompt still held but a later recorded compaction
 * dropped are taken off, and messages before the window are not added.
 */
export function estimateContextTokens(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  end = messages.length,
  compactions: readonly RecordedCompaction[] = [],
  lookups: ContextLookups = directContextLookups(messages, tokens),
): number {
  const from = windowStartAt(compactions, end);
  const i = lookups.lastReported(end);
  if (i < 0) return lookups.sum(from, end);
  const usage = messages[i]!.usage!;
  // The call's own output stays in context unless a later compaction dropped it too.
  const own = i < from ? 0 : usage.output > 0 ? usage.output : lookups.sum(i, i + 1);
  const dropped = lookups.sum(windowStartAt(compactions, i), Math.min(from, i));
  return Math.max(0, promptTokens(usage) + own - dropped) + lookups.sum(Math.max(i + 1, from), end);
}
