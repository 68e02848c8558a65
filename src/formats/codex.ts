/**
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one
 * `{timestamp, type, payload}` a line. See README "Formats". The traps handled here:
 *
 * - content comes from `response_item` lines only; `event_msg` lines repeat it for the UI;
 * - consecutive model outputs (reasoning, tool calls, assistant text) are one provider call
 *   until an input (user message, tool output) arrives;
 * - per-call usage is the `token_usage_record` line Codex writes after each response since 0.153
 *   (its `response_id` names the call), else `token_count.last_token_usage`; a `token_count` whose
 *   cumulative totals a record or an earlier event already gave is dropped (Codex repeats them at
 *   turn start and after a compaction, with a zero `last_token_usage`); `input_tokens` includes the cached part
 *   (`cached_input_tokens`, billed at the cache-read price) and what was written to the cache
 *   (`cache_write_input_tokens`, newest versions), so both are taken out of `Usage.input`;
 * - a `token_count` comes before its call's items (up to 0.58), while the call streams (0.125,
 *   0.130), or after the results of the call's tool requests (0.131 on, with no record before
 *   0.153): usage goes to the open call, else the call just closed, else the call whose tool
 *   results are all that followed it, else the next call to open;
 * - a `token_count` no model output takes was billed all the same: spend only (`offContext`,
 *   cause `unmatched`);
 * - a fork written by Codex up to 0.147 starts with a copy of its parent's rollout
 *   (codex-fork.ts): its calls are context here and were billed there (Message.copiedFrom), and
 *   what it bills off the context (reviews, compactions, unmatched usage) is the parent's;
 * - a review (`entered_review_mode` … `exited_review_mode`, or 0.169's `item_completed`
 *   EnteredReviewMode … ExitedReviewMode) is a conversation of its own, with token totals that
 *   restart: its items are not context and its calls are spend only (cause `review`); the
 *   review's outcome Codex writes into the main thread is context; 0.169 runs it in a rollout of
 *   its own beside the session's (codex-reviews.ts), whose calls are this session's `review` spend;
 * - the call whose output a `compacted` item replaced (the summary request, the last call since
 *   the turn started or an input arrived) is spend only (cause `compaction`);
 * - `turn_aborted` closes its turn (Session.abortedTurns);
 * - `turn_context` is written once per request by older versions: it is not a turn boundary,
 *   only the model name is taken from it; the window comes from `model_context_window`;
 * - `ghost_snapshot` (undo state) is not context; a `compacted` item is a compaction Codex
 *   recorded, and its summary (with any replacement history) becomes one user message.
 *
 * Codex lines carry no ids: messages get stable line-based ids (`L<line>`). Each message goes to
 * ReadOptions.keep as soon as it is final, so the lean read never holds a whole rollout.
 * A read that only measures text, of a file large enough, takes its lines from the WebAssembly
 * scanner (codex-scanned.ts): the lines it reads reach readItem as their type, time and the keys
 * read here; the others are parsed here as always.
 */
import * as z from 'zod';
import { InputError } from '../errors.js';
import type { AbortedTurn, AnyMessage, ContentBlock, Diagnostic, Message, OffContextCall, RecordedCompaction, Role, Session, Usage } from '../session/model.js';
import { ForkReplay } from './codex-fork.js';
import { reviewRolloutsOf } from './codex-reviews.js';
import { asRecord, callKeyOf, lastModel, lineId, nonZeroUsage, outputText, parseLine, partsText, toolArguments, tokenCount } from './convert.js';
import { READY_BYTES } from './claude-code-scanned.js';
import { scanCodexLines } from './codex-scanned.js';
import { holdInput, inputShape } from './json/input-source.js';
import { forEachJsonLine } from './json/jsonl-lines.js';
import type { ClaudeScanner } from '../scan/scanner.js';
import { borrowScanner, returnScanner, scannerReady } from '../scan/scanner.js';
import type { FormatReader, ReadOptions } from './reader.js';

const ROLLOUT_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted', 'world_state', 'token_usage_record']);

const lineSchema = z.looseObject({ type: z.string(), payload: z.looseObject({}) });

/** A model output being collected into one assistant message (one provider call). */
interface OpenCall {
  readonly id: string;
  readonly line: number;
  readonly blocks: ContentBlock[];
  usage?: Usage;
  callKey?: string;
  copiedFrom?: string;
  model?: string;
  timestamp?: string;
}

/** Billed usage read before the model output it belongs to (older versions write it first). */
interface PendingUsage {
  readonly usage: Usage;
  readonly callKey?: string;
  /** Set when the usage is in a fork's copy of its parent's history: billed there. */
  readonly copiedFrom?: string;
  readonly line: number;
  readonly timestamp?: string;
}

/** A call's usage as one of the two kinds of line reports it. */
interface ReportedUsage {
  readonly usage: Usage | undefined;
  readonly callKey?: string;
  /** The thread's cumulative totals after the call (totalsKey), when the line gives them. */
  readonly totals: string | null;
  readonly line: number;
  readonly timestamp: string | undefined;
}

/** Cumulative totals as a key: `token_count` and `token_usage_record` lines that agree give the same one. */
function totalsKey(totals: unknown): string | null {
  const record = asRecord(totals);
  if (!record) return null;
  return ['input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_output_tokens'].map((name) => tokenCount(record[name]) ?? 0).join('/');
}

/** A review in progress: its own token totals, and its model if a turn_context names one. */
interface ReviewThread {
  lastTotals: string | null;
  model?: string;
}

/** The cumulative totals of a thread: a report whose totals were already given is a repeat. */
function isRepeat(thread: { lastTotals: string | null }, totals: string | null): boolean {
  if (totals === null) return false;
  if (totals === thread.lastTotals) return true;
  thread.lastTotals = totals;
  return false;
}

/** True when `message` holds only results of tool requests `call` made. */
function answersToolRequests(call: AnyMessage, message: Message): boolean {
  const asked = new Set(call.content.flatMap((block) => (block.type === 'tool_request' ? [block.id] : [])));
  return message.content.length > 0 && message.content.every((block) => block.type === 'tool_result' && asked.has(block.tool_request_id));
}

/** Codex's record of a review's outcome in the main thread (its exit templates open so). */
const REVIEW_OUTCOME = '<user_action>';

/**
 * One call's usage from a `last_token_usage`, split as billed: `input_tokens` holds the cached
 * part and the part written to the cache, so the prompt (input + cacheRead + cacheWrite) stays
 * `input_tokens`. Parts larger than the input (a malformed count) are capped at it.
 */
export function codexCallUsage(last: Record<string, unknown>): Usage | undefined {
  const prompt = tokenCount(last['input_tokens']) ?? 0;
  const cacheRead = Math.min(tokenCount(last['cached_input_tokens']) ?? 0, prompt);
  const cacheWrite = Math.min(tokenCount(last['cache_write_input_tokens']) ?? 0, prompt - cacheRead);
  return nonZeroUsage({ input: prompt - cacheRead - cacheWrite, output: tokenCount(last['output_tokens']) ?? 0, cacheRead, cacheWrite });
}

class RolloutBuilder {
  /** The messages handed to `keep` (what it returned), in session order. */
  private readonly kept: AnyMessage[] = [];
  /**
   * The messages after them, as built (full): the last closed call may still get its usage, so it
   * and what follows wait here before `keep` has them (a few at most).
   */
  private readonly open: Message[] = [];
  readonly compactions: RecordedCompaction[] = [];
  readonly offContext: OffContextCall[] = [];
  readonly abortedTurns: AbortedTurn[] = [];
  readonly warnings: Diagnostic[] = [];
  private call: OpenCall | null = null;
  /** Index in `messages` of the last closed call, while no input has followed it yet. */
  private lastCall: number | null = null;
  /**
   * Index in `messages` of the last closed call, without usage, while only results of its own
   * tool requests have followed it: Codex 0.131 on writes the call's usage after them.
   */
  private answered: number | null = null;
  private pendingUsage: PendingUsage | null = null;
  /** The main thread's cumulative totals, as last reported. */
  private readonly thread: { lastTotals: string | null } = { lastTotals: null };
  /**
   * `messages.length` when the current turn started (`task_started`, newer versions only): a call
   * before it is not this turn's; null while no turn runs, or none was seen.
   */
  private turnStart: number | null = null;
  /** The thread id of the first session_meta: the thread review rollouts name. */
  threadId: string | undefined;
  /** A fork's copy of its parent's history, if the rollout starts with one. */
  readonly replay = new ForkReplay();
  /** The review in progress, or null in the main thread. */
  private review: ReviewThread | null = null;
  /** Set at a review's exit: the next item may be Codex's rendering of the review (no call made it). */
  private reviewJustEnded = false;
  /** The model of the latest turn_context. */
  model: string | undefined;
  /** The latest `model_context_window` of the main thread. */
  contextWindow: number | undefined;
  /** The first `session_meta`'s working directory. */
  cwd: string | undefined;

  constructor(
    private readonly file: string,
    private readonly keep: (message: Message) => AnyMessage = (message) => message,
  ) {}

  /** Hands the messages before `end` to `keep` as soon as nothing can change them (ReadOptions.keep). */
  private settle(end: number): void {
    while (this.kept.length < end) {
      const message = this.open.shift();
      if (!message) return;
      this.kept.push(this.keep(message));
    }
  }

  /** How many messages the session has so far. */
  private get length(): number {
    return this.kept.length + this.open.length;
  }

  /** Message `index` while it is open (not handed to `keep` yet: the last closed call, or what follows it). */
  private openAt(index: number): Message | undefined {
    return this.open[index - this.kept.length];
  }

  get inReview(): boolean {
    return this.review !== null;
  }

  setModel(model: unknown): void {
    if (typeof model !== 'string' || model === '') return;
    if (this.review) this.review.model = model;
    else this.model = model;
  }

  /** A `model_context_window` (token_count info, task_started, turn_context): the latest counts; a review's is its own. */
  setWindow(value: unknown): void {
    const window = tokenCount(value);
    if (window && !this.review) this.contextWindow = window;
  }

  enterReview(): void {
    this.closeCall();
    this.review = { lastTotals: null };
    this.reviewJustEnded = false;
  }

  exitReview(): void {
    if (!this.review) return;
    this.review = null;
    this.reviewJustEnded = true;
  }

  /**
   * What the main thread makes of a response item. Inside a review: only Codex's record of its
   * outcome (a user message written before the exit) is read, the rest is the review's own.
   * Right after the exit, an assistant message is Codex's rendering of the review, written
   * without a provider call: context, an assistant message as Codex sends it, marked `rendered`
   * so it does not pass for a call.
   */
  classify(payload: Record<string, unknown>): 'read' | 'skip' | 'rendering' {
    const afterReview = this.reviewJustEnded;
    this.reviewJustEnded = false;
    const message = payload['type'] === 'message';
    if (this.review) return message && payload['role'] === 'user' && partsText(payload['content']).trimStart().startsWith(REVIEW_OUTCOME) ? 'read' : 'skip';
    return afterReview && message && payload['role'] === 'assistant' ? 'rendering' : 'read';
  }

  /** `task_started`: what follows is a new turn's. */
  startTurn(): void {
    this.closeCall();
    this.turnStart = this.length;
  }

  /** `task_complete`: no turn runs until the next starts (a compaction then is no call of it). */
  endTurn(): void {
    this.closeCall();
    this.turnStart = null;
  }

  /** `turn_aborted`: the open call is final and the turn is over (a review's abort ends with its exit). */
  abort(reason: unknown, line: number): void {
    if (this.review) return;
    this.closeCall();
    this.abortedTurns.push({ atIndex: this.length, line, ...(typeof reason === 'string' && reason !== '' ? { reason } : {}) });
  }

  /** A model output: joins the open call, or opens one. */
  output(block: ContentBlock, line: number, timestamp: string | undefined): void {
    if (!this.call) {
      this.call = { id: lineId(line), line, blocks: [], ...(this.model ? { model: this.model } : {}), ...(timestamp ? { timestamp } : {}) };
      this.answered = null; // usage from now on is this call's
      const pending = this.pendingUsage;
      if (pending) {
        Object.assign(this.call, { usage: pending.usage }, pending.copiedFrom ? { copiedFrom: pending.copiedFrom } : {});
        this.pendingUsage = null;
      }
    }
    this.call.blocks.push(block);
  }

  /**
   * An input message: closes the open call first; usage still waiting for a call was for none.
   * Results of the last call's tool requests keep it waiting for its usage (held back from `keep`).
   */
  input(message: Message): void {
    this.closeCall();
    const previous = this.lastCall ?? this.answered;
    const waiting = previous === null ? undefined : this.openAt(previous);
    this.answered = waiting && !waiting.usage && answersToolRequests(waiting, message) ? previous : null;
    this.lastCall = null;
    this.flushPending();
    this.open.push(message);
    this.settle(this.answered ?? this.length);
  }

  closeCall(): void {
    if (!this.call) return;
    const { id, line, blocks, usage, callKey, copiedFrom, model, timestamp } = this.call;
    this.open.push({
      id,
      role: 'assistant',
      content: blocks,
      line,
      ...(usage ? { usage } : {}),
      ...(model ? { model } : {}),
      ...(timestamp ? { timestamp } : {}),
      ...(callKey ? { callKey } : {}),
      ...(copiedFrom ? { copiedFrom } : {}),
    });
    this.lastCall = this.length - 1;
    this.call = null;
    this.settle(this.lastCall);
  }

  /** A token_count event: the call's usage, unless a record or an earlier event gave these totals. */
  tokenCount(info: Record<string, unknown> | undefined, line: number, timestamp: string | undefined): void {
    const last = asRecord(info?.['last_token_usage']);
    if (!info || !last) return;
    this.setWindow(info['model_context_window']);
    const totals = totalsKey(info['total_token_usage']) ?? totalsKey(last);
    this.reported({ usage: codexCallUsage(last), totals, line, timestamp }, false);
  }

  /** A token_usage_record (0.169): one response's usage, named by its id; the response is complete. */
  usageRecord(payload: Record<string, unknown>, line: number, timestamp: string | undefined): void {
    const usage = asRecord(payload['usage']);
    if (!usage) return;
    const callKey = callKeyOf(payload['response_id'], timestamp);
    const totals = totalsKey(payload['thread_token_usage']);
    this.reported({ usage: codexCallUsage(usage), ...(callKey ? { callKey } : {}), totals, line, timestamp }, true);
  }

  /**
   * A call's usage. Versions write it before the call's items, while they stream, or after the
   * results of its tool requests: it belongs to the open call, else the call just closed, else
   * the call only its tool results followed, else the next call to open. A record ends its
   * response: the next output is another call. Usage in a fork's copy of its parent was billed
   * there: its call is marked a copy, and a copied review's calls are not this session's.
   */
  private reported(report: ReportedUsage, endsResponse: boolean): void {
    const { usage, callKey, line, timestamp } = report;
    const stamp = timestamp ? { timestamp } : {};
    const copiedFrom = this.replay.copiedFrom;
    if (this.review) {
      // The review's totals restart from zero: repeats are dropped against its own.
      if (isRepeat(this.review, report.totals)) return;
      const model = this.review.model;
      if (usage && !copiedFrom) this.offContext.push({ cause: 'review', usage, ...(model ? { model } : {}), ...stamp, file: this.file, line, ...(callKey ? { callKey } : {}) });
      return;
    }
    if (isRepeat(this.thread, report.totals)) return; // repeated event, same call
    this.reviewJustEnded = false; // a call of the main thread: what follows is its output
    if (!usage) return;
    const marks = { ...(callKey ? { callKey } : {}), ...(copiedFrom ? { copiedFrom } : {}) };
    if (this.call && !this.call.usage) {
      Object.assign(this.call, { usage }, marks);
      if (endsResponse) this.closeCall();
      return;
    }
    if (!this.call) {
      const waiting = this.lastCall ?? this.answered;
      const closed = waiting === null ? undefined : this.openAt(waiting);
      if (waiting !== null && closed && !closed.usage) {
        this.open[waiting - this.kept.length] = { ...closed, usage, ...marks };
        this.answered = null;
        this.settle(this.lastCall ?? this.length);
        return;
      }
    }
    this.flushPending();
    this.pendingUsage = { usage, line, ...stamp, ...marks };
  }

  /** Usage no model output took: billed all the same, so spend only (with a warning); the parent's, in a fork's copy. */
  private flushPending(): void {
    const pending = this.pendingUsage;
    if (!pending) return;
    this.pendingUsage = null;
    if (pending.copiedFrom) return;
    this.warnings.push({ file: this.file, line: pending.line, message: 'token usage matches no model output; counted as spend only' });
    this.offContext.push(this.offCall('unmatched', pending));
  }

  private offCall(cause: 'unmatched' | 'compaction', { usage, callKey, line, timestamp }: PendingUsage): OffContextCall {
    const model = this.model;
    return { cause, usage, ...(model ? { model } : {}), ...(timestamp ? { timestamp } : {}), file: this.file, line, ...(callKey ? { callKey } : {}) };
  }

  /**
   * At a `compacted` item: the call that wrote the summary it holds is the last one since the
   * turn started or an input arrived (or usage no output took yet). Its output is not context
   * (the compacted item replaces the history), its usage is spend only.
   */
  private takeCompactionCall(): void {
    const pending = this.pendingUsage;
    if (pending) {
      this.pendingUsage = null;
      if (!pending.copiedFrom) this.offContext.push(this.offCall('compaction', pending));
      return;
    }
    // Without turn starts (older versions) a turn's last answer could pass for the summary's call.
    const index = this.lastCall;
    if (index === null || this.turnStart === null || index < this.turnStart || index !== this.length - 1) return;
    // The last closed call is open: nothing can change a message once `keep` has it.
    const summary = this.open.pop();
    if (!summary) return;
    this.lastCall = null;
    if (summary.usage && !summary.copiedFrom) {
      const { usage, line, timestamp, callKey } = summary;
      this.offContext.push(this.offCall('compaction', { usage, line, ...(timestamp ? { timestamp } : {}), ...(callKey ? { callKey } : {}) }));
    }
  }

  compacted(payload: Record<string, unknown>, line: number, timestamp: string | undefined): void {
    this.closeCall();
    this.takeCompactionCall();
    const summary = typeof payload['message'] === 'string' ? payload['message'] : '';
    const history = Array.isArray(payload['replacement_history']) ? payload['replacement_history'] : [];
    const texts = [summary, ...history.map(historyText)].filter((text) => text !== '');
    const atIndex = this.length;
    this.input({ id: lineId(line), role: 'user', content: texts.map((text) => ({ type: 'text', text })), line, ...(timestamp ? { timestamp } : {}) });
    this.compactions.push({ firstKeptIndex: atIndex, atIndex, summary, line });
  }

  finish(): AnyMessage[] {
    this.closeCall();
    this.flushPending();
    this.settle(this.length);
    return this.kept;
  }
}

/** A replacement-history item as text: the new context Codex built, whatever its item types. */
function historyText(item: unknown): string {
  const record = asRecord(item);
  if (!record) return '';
  if (record['type'] === 'message') {
    const text = partsText(record['content']);
    return text === '' ? '' : `[${String(record['role'] ?? 'user')}]: ${text}`;
  }
  if (record['type'] === 'function_call') return `[Tool call]: ${String(record['name'] ?? '')} ${String(record['arguments'] ?? '')}`;
  if (record['type'] === 'function_call_output' || record['type'] === 'custom_tool_call_output') return `[Tool result]: ${outputText(record['output'])}`;
  return '';
}

function messageRole(role: unknown): Role | 'assistant' {
  if (role === 'assistant') return 'assistant';
  if (role === 'developer' || role === 'system') return 'system';
  return 'user';
}

function toolResult(payload: Record<string, unknown>, line: number, file: string): ContentBlock {
  const callId = payload['call_id'];
  if (typeof callId !== 'string' || callId === '') throw new InputError(`${String(payload['type'])}: call_id: expected a string`, file, line);
  const output = payload['output'];
  // New versions write `{content, success}`: success false is an error result.
  const failed = asRecord(output)?.['success'] === false;
  return { type: 'tool_result', tool_request_id: callId, output: outputText(output), is_error: failed };
}

function toolRequest(payload: Record<string, unknown>, name: string, args: Record<string, unknown>, line: number, file: string): ContentBlock {
  const callId = payload['call_id'] ?? payload['id'];
  if (typeof callId !== 'string' || callId === '') throw new InputError(`${String(payload['type'])}: call_id: expected a string`, file, line);
  return { type: 'tool_request', id: callId, name, arguments: args };
}

/** One `response_item`: what the model saw or said. */
function responseItem(builder: RolloutBuilder, payload: Record<string, unknown>, line: number, file: string, timestamp?: string): void {
  const stamp = timestamp ? { timestamp } : {};
  switch (payload['type']) {
    case 'message': {
      const text = partsText(payload['content']);
      const role = messageRole(payload['role']);
      if (role === 'assistant') {
        if (text !== '') builder.output({ type: 'text', text }, line, timestamp);
        return;
      }
      builder.input({ id: lineId(line), role, content: text === '' ? [] : [{ type: 'text', text }], line, ...stamp });
      return;
    }
    case 'agent_message': // another agent's message, read as input
      builder.input({ id: lineId(line), role: 'user', content: [{ type: 'text', text: partsText(payload['content']) }], line, ...stamp });
      return;
    case 'reasoning':
      builder.output({ type: 'thinking', text: partsText(payload['summary']) }, line, timestamp);
      return;
    case 'function_call':
      builder.output(toolRequest(payload, String(payload['name'] ?? ''), toolArguments(payload['arguments']), line, file), line, timestamp);
      return;
    case 'custom_tool_call':
      builder.output(toolRequest(payload, String(payload['name'] ?? ''), toolArguments(payload['input']), line, file), line, timestamp);
      return;
    case 'local_shell_call':
      builder.output(toolRequest(payload, 'local_shell', asRecord(payload['action']) ?? {}, line, file), line, timestamp);
      return;
    case 'tool_search_call':
      builder.output(toolRequest(payload, 'tool_search', toolArguments(payload['arguments']), line, file), line, timestamp);
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'local_shell_call_output':
      builder.input({ id: lineId(line), role: 'user', content: [toolResult(payload, line, file)], line, ...stamp });
      return;
    case 'tool_search_output':
      builder.input({ id: lineId(line), role: 'user', content: [toolResult({ ...payload, output: payload['tools'] ?? [] }, line, file)], line, ...stamp });
      return;
    case 'web_search_call': // run by the provider inside the call: no result item to pair
      builder.output({ type: 'text', text: `[web search] ${JSON.stringify(payload['action'] ?? {})}` }, line, timestamp);
      return;
    case 'image_generation_call':
      builder.output({ type: 'text', text: `[image generation] ${String(payload['revised_prompt'] ?? '')}` }, line, timestamp);
      return;
    default:
      // ghost_snapshot (undo state) and types newer than this reader: not model context.
      return;
  }
}

function textMessage(text: string, line: number, timestamp: string | undefined): Message {
  return { id: lineId(line), role: 'user', content: text === '' ? [] : [{ type: 'text', text }], line, ...(timestamp ? { timestamp } : {}) };
}

/** The `event_msg` lines the reader uses; the others repeat response items for the UI. */
function eventMessage(builder: RolloutBuilder, payload: Record<string, unknown>, line: number, timestamp: string | undefined): void {
  switch (payload['type']) {
    case 'token_count':
      builder.tokenCount(asRecord(payload['info']), line, timestamp);
      return;
    case 'task_started':
      builder.setWindow(payload['model_context_window']);
      if (!builder.inReview) builder.startTurn();
      return;
    case 'task_complete':
      if (!builder.inReview) builder.endTurn();
      return;
    case 'turn_aborted':
      builder.abort(payload['reason'], line);
      return;
    case 'entered_review_mode':
      builder.enterReview();
      return;
    case 'exited_review_mode':
      builder.exitReview();
      return;
    case 'item_completed': {
      // 0.169 records review mode as items of the turn.
      const item = asRecord(payload['item'])?.['type'];
      if (item === 'EnteredReviewMode') builder.enterReview();
      else if (item === 'ExitedReviewMode') builder.exitReview();
      return;
    }
    default:
      return;
  }
}

/** One line of a rollout, as JSON.parse gave it, into the builder. */
function readLine(builder: RolloutBuilder, value: unknown, line: number, file: string): void {
  const parsed = parseLine(lineSchema, value, file, line);
  readItem(builder, parsed.type, parsed.payload, typeof parsed['timestamp'] === 'string' ? parsed['timestamp'] : undefined, line, file);
}

/** A line's type, payload and time (a parsed line's, or what codex-scanned.ts makes of a scanned one) into the builder. */
function readItem(builder: RolloutBuilder, type: string, payload: Record<string, unknown>, timestamp: string | undefined, line: number, file: string): void {
  builder.replay.line(timestamp);
  if (type === 'session_meta') {
    builder.replay.meta(payload, timestamp);
    builder.cwd ??= typeof payload['cwd'] === 'string' && payload['cwd'] !== '' ? payload['cwd'] : undefined;
    builder.threadId ??= typeof payload['id'] === 'string' ? payload['id'] : undefined;
  } else if (type === 'turn_context') {
    builder.setModel(payload['model']);
    builder.setWindow(payload['model_context_window']);
  } else if (type === 'response_item') {
    const kind = builder.classify(payload);
    if (kind === 'read') responseItem(builder, payload, line, file, timestamp);
    else if (kind === 'rendering') builder.input({ ...textMessage(partsText(payload['content']), line, timestamp), role: 'assistant', rendered: true });
  } else if (type === 'event_msg') eventMessage(builder, payload, line, timestamp);
  else if (type === 'token_usage_record') builder.usageRecord(payload, line, timestamp);
  else if (type === 'compacted' && !builder.inReview) builder.compacted(payload, line, timestamp);
}

/**
 * A rollout this large is read with the scanner whatever this thread read before. A smaller one
 * (down to claude-code-scanned.ts's READY_BYTES) only once the thread has the scanner loaded, or
 * has read WARM_BYTES of rollouts without it (a bulk read: the scanner then pays for its start).
 * In a process that reads one rollout the scanner's start is not paid back below a few MB: the
 * scanner runs its first lines unoptimized while JSON.parse is at full speed from the start (a
 * 341 KB rollout read with it cost 1.12× the CPU, a 9 MB one 1.01×).
 */
const SCANNED_ROLLOUT_BYTES = 8 << 20;
const WARM_BYTES = 2 << 20;
/** Bytes of rollouts this thread read without the scanner (module state: a hint for the next read, nothing more). */
let unscannedBytes = 0;

/** Whether a read that only measures text reads `file` with the scanner (see SCANNED_ROLLOUT_BYTES). */
function scannedRollout(file: string): boolean {
  const { plain } = inputShape(file);
  if (plain === null) return false;
  if (plain.size >= SCANNED_ROLLOUT_BYTES || (plain.size >= READY_BYTES && (scannerReady() || unscannedBytes >= WARM_BYTES))) return true;
  unscannedBytes += plain.size;
  return false;
}

export async function readCodex(file: string, options?: ReadOptions & { readonly reviews?: boolean }): Promise<Session<AnyMessage>> {
  // A read that only measures text, of a file large enough, scans its lines (codex-scanned.ts).
  const scanner = options?.textLengthsOnly === true && options.keep !== undefined && scannedRollout(file) ? borrowScanner() : null;
  try {
    return await readCodexWith(file, options, scanner);
  } finally {
    if (scanner) returnScanner(scanner);
  }
}

/**
 * The reader, with the scanner a read uses (null: none, every line parsed in JavaScript). The
 * differential test (test/scan/scan-codex-diff.test.ts) reads each file both ways with it.
 */
export async function readCodexWith(file: string, options: (ReadOptions & { readonly reviews?: boolean }) | undefined, scanner: ClaudeScanner | null): Promise<Session<AnyMessage>> {
  const builder = new RolloutBuilder(file, options?.keep);
  const visit = (value: unknown, line: number) => readLine(builder, value, line, file);
  let readWarnings: Diagnostic[];
  if (scanner) {
    const release = await holdInput(file);
    try {
      readWarnings = scanCodexLines(file, scanner, { value: visit, item: (type, payload, timestamp, line) => readItem(builder, type, payload, timestamp, line, file) });
    } finally {
      release();
    }
  } else readWarnings = await forEachJsonLine(file, visit);
  const messages = builder.finish();
  if (options?.reviews !== false && builder.threadId) {
    for (const review of options?.companions?.reviewRollouts ?? reviewRolloutsOf(file, builder.threadId)) builder.offContext.push(...(await reviewSpend(review, builder.warnings)));
  }
  const model = lastModel(messages, builder.model);
  return {
    path: file,
    format: 'codex',
    messages,
    recordedCompactions: builder.compactions,
    offContext: builder.offContext,
    warnings: [...readWarnings, ...builder.warnings],
    ...(model ? { model } : {}),
    ...(builder.contextWindow ? { contextWindow: builder.contextWindow } : {}),
    ...(builder.cwd ? { project: builder.cwd } : {}),
    ...(builder.abortedTurns.length > 0 ? { abortedTurns: builder.abortedTurns } : {}),
  };
}

/**
 * The calls of a review rollout beside the session, as its `review` spend. One that cannot be
 * read is a warning, and none of its calls count: the session reads without them.
 */
async function reviewSpend(path: string, warnings: Diagnostic[]): Promise<OffContextCall[]> {
  let review: Session<AnyMessage>;
  try {
    review = await readCodex(path, { reviews: false });
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    warnings.push({ file: path, ...(error.line === undefined ? {} : { line: error.line }), message: `review rollout left out of the spend: ${error.message}` });
    return [];
  }
  warnings.push(...review.warnings);
  const calls: OffContextCall[] = review.messages.flatMap((message) =>
    message.usage
      ? [
          {
            cause: 'review' as const,
            usage: message.usage,
            file: path,
            line: message.line,
            ...(message.model ? { model: message.model } : {}),
            ...(message.timestamp ? { timestamp: message.timestamp } : {}),
            ...(message.callKey ? { callKey: message.callKey } : {}),
          },
        ]
      : [],
  );
  return [...calls, ...review.offContext.map((call) => ({ ...call, cause: 'review' as const }))];
}

function isRolloutLine(value: unknown): boolean {
  const record = asRecord(value);
  return Boolean(record && typeof record['type'] === 'string' && ROLLOUT_TYPES.has(record['type']) && asRecord(record['payload']));
}

export const codexReader: FormatReader = {
  name: 'codex',
  detect: (firstLines) => firstLines.some(isRolloutLine),
  read: readCodex,
};
