/**
 * opencode's messages and parts, as either storage holds them (the SQLite database since 1.2,
 * the JSON files before: opencode-db.ts, opencode-json.ts), turned into the session model. What
 * the model saw follows opencode's own conversion to provider messages (1.18.33):
 *
 * - a user message sends its text parts (not `ignored`, not empty; `synthetic` ones too), a
 *   `compaction` part as "What did we do so far?", a `subtask` part as "The following tool was
 *   executed by the user"; files and images carry no text we count;
 * - an assistant message is one provider call per step: its parts up to each `step-finish`,
 *   whose `tokens` are that call's usage (the message's own `tokens` when it has no step-finish);
 *   `reasoning` parts are thinking, `tool` parts a tool request and, in a user message right after
 *   the step, their result: the output (or "[Old tool result content cleared]" once opencode
 *   pruned it), the error, or "[Tool execution was interrupted]" for a call left pending;
 * - an assistant message with an error is not sent again, unless it was aborted after writing
 *   something; usage it reports is spend only (`aborted`);
 * - tokens are `{total, input, output, reasoning, cache: {read, write}}` with `input` the uncached
 *   part: `Usage.input` = input, cache read and write as they are, `output` with the reasoning
 *   (billed as output; whether `output` already holds it depends on the version: billedOutput);
 * - `/compact` (and auto-compaction) is a user message with a `compaction` part, then an
 *   assistant message with `summary: true` holding the summary: its call is spend only
 *   (`compaction`, its prompt was the whole history), its text is context the model reads as its
 *   own turn (`rendered`). From then on the model sees the compaction's prompt and summary, the
 *   tail it kept (`tail_start_id`: the messages from there up to the compaction) and what follows.
 *
 * Pure: the readers hand over rows already parsed from JSON; errors name the session's address
 * and the message's position in the session (its `line`: opencode has no lines).
 */
import * as z from 'zod';
import type { AnyMessage, ContentBlock, Diagnostic, Message, OffContextCall, RecordedCompaction, Session, Usage } from '../session/model.js';
import { lastModel, nonZeroUsage, outputText, parseLine, toolArguments } from './convert.js';
import type { ReadOptions } from './reader.js';

const count = z.number().nonnegative();

const tokensSchema = z.looseObject({
  total: count.nullish(),
  input: count.nullish(),
  output: count.nullish(),
  reasoning: count.nullish(),
  cache: z.looseObject({ read: count.nullish(), write: count.nullish() }).nullish(),
});

const infoSchema = z.looseObject({
  role: z.string(),
  time: z.looseObject({ created: z.number() }).nullish(),
  modelID: z.string().nullish(),
  parentID: z.string().nullish(),
  tokens: tokensSchema.nullish(),
  summary: z.unknown().optional(),
  finish: z.string().nullish(),
  error: z.looseObject({ name: z.string().nullish() }).nullish(),
});

const partSchema = z.looseObject({ type: z.string() });
const textPartSchema = z.looseObject({ text: z.string(), ignored: z.boolean().nullish() });
const toolPartSchema = z.looseObject({
  tool: z.string(),
  callID: z.string(),
  state: z.looseObject({
    status: z.string(),
    input: z.unknown().optional(),
    output: z.unknown().optional(),
    error: z.unknown().optional(),
    time: z.looseObject({ compacted: z.number().nullish() }).nullish(),
  }),
});
const compactionPartSchema = z.looseObject({ tail_start_id: z.string().nullish() });

type Info = z.infer<typeof infoSchema>;
type Tokens = z.infer<typeof tokensSchema>;

/** One opencode message as a storage holds it: its id, its info (`data`) and its parts in order. */
export interface OpencodeMessageRows {
  readonly id: string;
  readonly info: unknown;
  readonly parts: readonly unknown[];
}

/** What the session around the messages says: where it is read from, its project folder. */
export interface OpencodeSessionHead {
  /** The session's address (formats/store-address.ts): every error and call names it. */
  readonly path: string;
  readonly format: string;
  readonly directory?: string;
}

const COMPACTION_PROMPT = 'What did we do so far?';
const SUBTASK_PROMPT = 'The following tool was executed by the user';
const PRUNED_OUTPUT = '[Old tool result content cleared]';
const INTERRUPTED_OUTPUT = '[Tool execution was interrupted]';
const ABORTED_ERROR = 'MessageAbortedError';

/**
 * The output billed for a call: reasoning is billed as output. opencode 1.18 counts it apart
 * from `output` (its `total` adds both); 1.1 kept it inside `output` and reported it again as
 * `reasoning` (its `total` leaves `reasoning` out). `total` tells which; without it, apart.
 */
function billedOutput(tokens: Tokens, input: number, cacheRead: number, cacheWrite: number): number {
  const output = tokens.output ?? 0;
  const reasoning = tokens.reasoning ?? 0;
  const reasoningInside = reasoning > 0 && tokens.total === input + output + cacheRead + cacheWrite;
  return reasoningInside ? output : output + reasoning;
}

/** A step's or a message's tokens as billed (see the header). */
export function opencodeUsage(tokens: Tokens | null | undefined): Usage | undefined {
  if (!tokens) return undefined;
  const input = tokens.input ?? 0;
  const cacheRead = tokens.cache?.read ?? 0;
  const cacheWrite = tokens.cache?.write ?? 0;
  return nonZeroUsage({ input, output: billedOutput(tokens, input, cacheRead, cacheWrite), cacheRead, cacheWrite });
}

interface Parsed {
  readonly id: string;
  readonly info: Info;
  readonly parts: readonly { readonly type: string; readonly value: unknown }[];
  readonly line: number;
}

/** A user message's blocks, as opencode sends them. */
function userBlocks(message: Parsed, path: string): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const [index, part] of message.parts.entries()) {
    const where = { label: `message ${message.id}`, where: ['parts', index] };
    if (part.type === 'text') {
      const text = parseLine(textPartSchema, part.value, path, message.line, where);
      if (!text.ignored && text.text !== '') blocks.push({ type: 'text', text: text.text });
    } else if (part.type === 'compaction') blocks.push({ type: 'text', text: COMPACTION_PROMPT });
    else if (part.type === 'subtask') blocks.push({ type: 'text', text: SUBTASK_PROMPT });
  }
  return blocks;
}

/** What the model read back from a tool part, as opencode renders each state. */
function toolResult(tool: z.infer<typeof toolPartSchema>): ContentBlock {
  const { state } = tool;
  if (state.status === 'completed') {
    const output = state.time?.compacted ? PRUNED_OUTPUT : outputText(state.output ?? '');
    return { type: 'tool_result', tool_request_id: tool.callID, output, is_error: false };
  }
  const output = state.status === 'error' ? outputText(state.error ?? '') : INTERRUPTED_OUTPUT;
  return { type: 'tool_result', tool_request_id: tool.callID, output, is_error: true };
}

interface Step {
  readonly blocks: ContentBlock[];
  readonly results: ContentBlock[];
  usage?: Usage;
}

/** An assistant message's steps: one provider call each, split at its `step-finish` parts. */
function assistantSteps(message: Parsed, path: string): Step[] {
  const steps: Step[] = [];
  let step: Step = { blocks: [], results: [] };
  let finished = false;
  for (const [index, part] of message.parts.entries()) {
    const where = { label: `message ${message.id}`, where: ['parts', index] };
    if (part.type === 'text') {
      const { text } = parseLine(textPartSchema, part.value, path, message.line, where);
      if (text !== '') step.blocks.push({ type: 'text', text });
    } else if (part.type === 'reasoning') {
      const { text } = parseLine(textPartSchema, part.value, path, message.line, where);
      if (text.trim() !== '') step.blocks.push({ type: 'thinking', text });
    } else if (part.type === 'tool') {
      const tool = parseLine(toolPartSchema, part.value, path, message.line, where);
      step.blocks.push({ type: 'tool_request', id: tool.callID, name: tool.tool, arguments: toolArguments(tool.state.input) });
      step.results.push(toolResult(tool));
    } else if (part.type === 'step-finish') {
      const { tokens } = parseLine(z.looseObject({ tokens: tokensSchema.nullish() }), part.value, path, message.line, where);
      const usage = opencodeUsage(tokens);
      if (usage) step.usage = usage;
      steps.push(step);
      step = { blocks: [], results: [] };
      finished = true;
    }
  }
  if (step.blocks.length > 0 || !finished) {
    // A message without step-finish parts (older versions, an interrupted step): its own tokens.
    if (!finished) {
      const usage = opencodeUsage(message.info.tokens);
      if (usage) step.usage = usage;
    }
    steps.push(step);
  }
  return steps;
}

const timestampOf = (info: Info) => (info.time ? { timestamp: new Date(info.time.created).toISOString() } : {});

/** The session model of an opencode session: messages, compactions, off-context calls (see the header). */
export function opencodeSession(head: OpencodeSessionHead, rows: readonly OpencodeMessageRows[], options?: ReadOptions): Session<AnyMessage> {
  const { path } = head;
  const keep = options?.keep ?? ((message: Message) => message);
  const messages: AnyMessage[] = [];
  const offContext: OffContextCall[] = [];
  const recordedCompactions: RecordedCompaction[] = [];
  const warnings: Diagnostic[] = [];
  /** Index in `messages` of each opencode message's first message (for a compaction's kept tail). */
  const indexOf = new Map<string, number>();
  /** The compaction user messages waiting for their summary: id → {index, tail}. */
  const pending = new Map<string, { readonly atIndex: number; readonly tail?: string; readonly line: number }>();
  const add = (message: Message) => messages.push(keep(message));
  for (const [position, row] of rows.entries()) {
    const line = position + 1;
    const info = parseLine(infoSchema, row.info, path, line, { label: `message ${row.id}` });
    const parts = row.parts.map((value, index) => ({ type: parseLine(partSchema, value, path, line, { label: `message ${row.id}`, where: ['parts', index] }).type, value }));
    const message: Parsed = { id: row.id, info, parts, line };
    const stamp = timestampOf(info);
    indexOf.set(row.id, messages.length);
    if (info.role === 'user') {
      const compaction = parts.find((part) => part.type === 'compaction');
      if (compaction) {
        const { tail_start_id: tail } = parseLine(compactionPartSchema, compaction.value, path, line, { label: `message ${row.id}` });
        pending.set(row.id, { atIndex: messages.length, line, ...(tail ? { tail } : {}) });
      }
      const blocks = userBlocks(message, path);
      if (blocks.length > 0) add({ id: row.id, role: 'user', content: blocks, line, ...stamp });
      continue;
    }
    if (info.role !== 'assistant') {
      warnings.push({ file: path, line, message: `message ${row.id}: role ${JSON.stringify(info.role)} is not read` });
      continue;
    }
    const model = info.modelID ? { model: info.modelID } : {};
    const steps = assistantSteps(message, path);
    const spendOnly = (usage: Usage | undefined, cause: 'aborted' | 'compaction', key: string) => {
      if (usage) offContext.push({ cause, usage, file: path, line, callKey: key, ...model, ...stamp });
    };
    if (info.summary === true) {
      // The compaction's summary: its call read the whole history; the model reads its text after.
      const text = steps.flatMap((step) => step.blocks).filter((block) => block.type === 'text');
      steps.forEach((step, index) => spendOnly(step.usage, 'compaction', callKey(row.id, index)));
      // A summary that failed is never sent; its call was billed all the same.
      if (!info.finish || info.error) continue;
      add({ id: row.id, role: 'assistant', content: text, line, rendered: true, ...model, ...stamp });
      const opened = info.parentID ? pending.get(info.parentID) : undefined;
      if (opened) {
        const kept = opened.tail ? indexOf.get(opened.tail) : undefined;
        const summary = text.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
        recordedCompactions.push({ atIndex: opened.atIndex, firstKeptIndex: kept !== undefined && kept < opened.atIndex ? kept : opened.atIndex, summary, line: opened.line });
      }
      continue;
    }
    const sent = !info.error || (info.error.name === ABORTED_ERROR && parts.some((part) => part.type !== 'step-start' && part.type !== 'reasoning'));
    for (const [index, step] of steps.entries()) {
      const key = callKey(row.id, index);
      if (!sent) {
        spendOnly(step.usage, 'aborted', key);
        continue;
      }
      // A step that wrote nothing and reported nothing is no call (opencode sends no empty message).
      if (step.blocks.length === 0 && !step.usage) continue;
      const id = index === 0 ? row.id : `${row.id}:${index}`;
      add({ id, role: 'assistant', content: step.blocks, line, callKey: key, ...(step.usage ? { usage: step.usage } : {}), ...model, ...stamp });
      if (step.results.length > 0) add({ id: `${id}:results`, role: 'user', content: step.results, line, ...stamp });
    }
  }
  const model = lastModel(messages);
  return {
    path,
    format: head.format,
    messages,
    recordedCompactions,
    offContext,
    warnings,
    ...(model ? { model } : {}),
    ...(head.directory ? { project: head.directory } : {}),
  };
}

/** Message.callKey: opencode records no provider response id; its message id (and step) names the call. */
function callKey(messageId: string, step: number): string {
  return step === 0 ? `opencode:${messageId}` : `opencode:${messageId}:${step}`;
}
