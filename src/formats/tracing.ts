/**
 * JSON tracing logs (Rust tracing-subscriber `fmt().json()`, flattened or not) in which provider
 * calls log their token counts. Usage only, no text: enough for `inspect` and for `replay` by
 * numbers. See README "Formats" and FORMATS.md section e. How a log becomes a session:
 *
 * - every event with `input_tokens` (or `prompt_tokens`) in its fields is one provider call;
 *   cache reads/writes logged beside it (Anthropic style) are added, `cached_tokens` (OpenAI
 *   style, already inside the input) is not;
 * - a call's turn is the innermost span (or the event itself) carrying a turn id; calls with the
 *   same request id are one call logged again (a retry): the last one counts;
 * - calls are ordered by timestamp; a log with no turn ids is one turn;
 * - each turn opens with an empty user message, each call is an empty assistant message with
 *   its usage. Sizes are known from the numbers: a message weighs what the next call's prompt
 *   grew by (`knownTokens`), so cut points and replay work on real token counts; the first
 *   prompt (system prompt, tools, first request) is fixed overhead no compaction removes.
 */
import { InputError } from '../errors.js';
import type { AnyMessage, Diagnostic, Message, Session, Usage } from '../session/model.js';
import { promptTokens } from '../session/model.js';
import { asRecord, keepEach, lastModel, lineId, tokenCount } from './convert.js';
import { forEachJsonLine } from './json/jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

const TURN_KEYS = ['turn_id', 'turnId', 'turn', 'turn_number', 'turn_index'];
const REQUEST_KEYS = ['request_id', 'requestId', 'req_id', 'response_id'];

interface LoggedCall {
  readonly line: number;
  readonly timestamp: string;
  readonly usage: Usage;
  readonly turn: string | null;
  readonly request: string | null;
  readonly model: string | null;
}

function firstKey(record: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' || typeof value === 'number') return String(value);
  }
  return null;
}

/** The event's own fields, then its spans from the innermost out. */
function scopes(record: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown>[] {
  const spans = Array.isArray(record['spans']) ? record['spans'].map(asRecord).filter((span) => span !== undefined) : [];
  const current = asRecord(record['span']);
  const chain = spans.length > 0 ? spans : current ? [current] : [];
  return [fields, ...chain.reverse()];
}

/** The innermost scope with one of `keys`, or named like `spanName` with an `id`: `name:value`. */
function findIn(scopeList: readonly Record<string, unknown>[], keys: readonly string[], spanName: RegExp): string | null {
  for (const scope of scopeList) {
    const named = typeof scope['name'] === 'string' && spanName.test(scope['name']);
    const value = firstKey(scope, keys) ?? (named ? firstKey(scope, ['id']) : null);
    if (value !== null) return `${String(scope['name'] ?? '')}:${value}`;
  }
  return null;
}

function loggedCall(value: unknown, line: number, file: string): LoggedCall | null {
  const record = asRecord(value);
  if (!record) throw new InputError('expected a JSON object', file, line);
  const fields = asRecord(record['fields']) ?? record;
  const input = tokenCount(fields['input_tokens'] ?? fields['prompt_tokens']);
  if (input === undefined) return null;
  const scopeList = scopes(record, fields);
  const model = scopeList.map((scope) => scope['model']).find((name) => typeof name === 'string') as string | undefined;
  return {
    line,
    timestamp: typeof record['timestamp'] === 'string' ? record['timestamp'] : '',
    usage: {
      input,
      output: tokenCount(fields['output_tokens'] ?? fields['completion_tokens']) ?? 0,
      cacheRead: tokenCount(fields['cache_read_input_tokens'] ?? fields['cache_read_tokens']) ?? 0,
      cacheWrite: tokenCount(fields['cache_creation_input_tokens'] ?? fields['cache_write_tokens']) ?? 0,
    },
    turn: findIn(scopeList, TURN_KEYS, /turn/i),
    request: findIn(scopeList, REQUEST_KEYS, /request/i),
    model: model ?? null,
  };
}

/** Later attempts of one request replace earlier ones; the rest keep their place. */
function dropRetries(calls: readonly LoggedCall[], file: string, warnings: Diagnostic[]): LoggedCall[] {
  const lastAttempt = new Map<string, LoggedCall>();
  for (const call of calls) if (call.request !== null) lastAttempt.set(call.request, call);
  const kept = calls.filter((call) => call.request === null || lastAttempt.get(call.request) === call);
  if (kept.length < calls.length) {
    const dropped = calls.length - kept.length;
    warnings.push({ file, message: `${dropped} repeated provider call${dropped === 1 ? '' : 's'} (same request id) dropped; the last attempt counts` });
  }
  return kept;
}

function byTimestamp(calls: readonly LoggedCall[]): LoggedCall[] {
  const times = calls.map((call) => Date.parse(call.timestamp));
  if (times.some(Number.isNaN)) return [...calls];
  return calls.map((call, index) => ({ call, time: times[index]! })).sort((a, b) => a.time - b.time).map(({ call }) => call);
}

/** Groups calls by turn id in order of first appearance; calls without one join the turn before. */
function groupByTurn(calls: readonly LoggedCall[]): LoggedCall[][] {
  const turns = new Map<string, LoggedCall[]>();
  let current: LoggedCall[] | undefined;
  for (const call of calls) {
    if (call.turn !== null) {
      current = turns.get(call.turn);
      if (!current) turns.set(call.turn, (current = []));
    } else if (!current) {
      turns.set('', (current = []));
    }
    current.push(call);
  }
  return [...turns.values()];
}

/** Empty messages whose sizes come from how the reported prompts grew (see the header). */
function toMessages(turns: readonly LoggedCall[][]): Message[] {
  const messages: Message[] = [];
  let previous: { call: LoggedCall; index: number } | null = null;
  for (const turn of turns) {
    const opener: Message = { id: `${lineId(turn[0]!.line)}-turn`, role: 'user', content: [], line: turn[0]!.line, knownTokens: 0 };
    messages.push(opener);
    for (const [position, call] of turn.entries()) {
      if (previous) {
        const growth = Math.max(0, promptTokens(call.usage) - promptTokens(previous.call.usage) - previous.call.usage.output);
        // Between turns the growth is the user's new request; within one, the tool results.
        const grown = position === 0 ? messages.length - 1 : previous.index;
        messages[grown] = { ...messages[grown]!, knownTokens: (messages[grown]!.knownTokens ?? 0) + growth };
      }
      messages.push({
        id: lineId(call.line),
        role: 'assistant',
        content: [],
        line: call.line,
        usage: call.usage,
        knownTokens: call.usage.output,
        ...(call.model ? { model: call.model } : {}),
        ...(call.timestamp ? { timestamp: call.timestamp } : {}),
      });
      previous = { call, index: messages.length - 1 };
    }
  }
  return messages;
}

export async function readTracing(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const logged: LoggedCall[] = [];
  const readWarnings = await forEachJsonLine(file, (value, line) => {
    const call = loggedCall(value, line, file);
    if (call) logged.push(call);
  });
  const warnings: Diagnostic[] = [...readWarnings];
  if (logged.length === 0) warnings.push({ file, message: 'no event logs input_tokens: no provider calls found' });
  const calls = byTimestamp(dropRetries(logged, file, warnings));
  if (calls.length > 0 && calls.every((call) => call.turn === null)) {
    warnings.push({ file, message: 'no span or field carries a turn id: all provider calls are one turn' });
  }
  const messages = toMessages(groupByTurn(calls));
  const model = lastModel(messages);
  return { path: file, format: 'tracing', messages: keepEach(messages, options), recordedCompactions: [], offContext: [], warnings, ...(model ? { model } : {}) };
}

function isTracingLine(value: unknown): boolean {
  const record = asRecord(value);
  return Boolean(
    record &&
      typeof record['timestamp'] === 'string' &&
      typeof record['level'] === 'string' &&
      (asRecord(record['fields']) !== undefined || typeof record['target'] === 'string'),
  );
}

export const tracingReader: FormatReader = {
  name: 'tracing',
  detect: (firstLines) => firstLines.some(isTracingLine),
  read: readTracing,
};
