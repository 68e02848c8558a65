/**
 * The rules a provider holds a conversation to, checked on the messages we are about to show or
 * send: the provider view `context` prints and a sidecar defines, the span a summarizer gets, and
 * the summarizer's own requests. Pure: it lists violations; callers decide (at run time every
 * violation is a bug of ours and fails the session: ViewRuleError).
 *
 * The rules are the ones both the Anthropic Messages API and OpenAI's Chat Completions reject a
 * request for, as far as our message model can express them:
 * - every tool call is answered by its result after the call and before the next assistant
 *   message (Anthropic: in the very next user turn; OpenAI: the tool messages right after);
 * - a result answers a call of the assistant message before it, once; and results come first
 *   after that message, before any other content (Anthropic: "tool_result blocks must come
 *   first"; OpenAI: nothing between the calls and their tool messages);
 * - tool call ids are unique, and so are message ids (ours: a sidecar names messages by id);
 * - calls only in assistant messages, results only in user messages;
 * - no message without content (no block, or only blank text).
 * Consecutive messages of one role are not a violation: both providers merge them (Anthropic) or
 * accept them (OpenAI). A message whose text we do not hold (a slim message, or a usage-only log
 * that records sizes and no text) is not judged empty.
 */
import type { AnyMessage, ToolRequestBlock } from './model.js';
import { isSlim } from './model.js';

export type ViewRule =
  | 'unanswered-call'
  | 'result-without-call'
  | 'second-result'
  | 'result-after-content'
  | 'duplicate-call-id'
  | 'duplicate-message-id'
  | 'misplaced-block'
  | 'empty-message';

export interface ViewViolation {
  readonly rule: ViewRule;
  /** The offending message: its id, position in the view, and line in the session (0: one we made). */
  readonly messageId: string;
  readonly index: number;
  readonly line: number;
  /** The tool call the violation is about, when it is about one. */
  readonly toolCallId?: string;
  /** What is wrong, in one line (`tool call "toolu_…" (Bash) has no result before the next assistant message`). */
  readonly message: string;
}

const quote = (id: string) => JSON.stringify(id);

/**
 * True for a message with nothing a provider accepts as content: no block, or only blank text.
 * Not for one whose text we do not hold (slim messages, usage-only logs): that cannot be judged.
 */
export function holdsNothing(message: AnyMessage): boolean {
  if (message.content.some((block) => block.type !== 'text' || block.text.trim() !== '')) return false;
  return !isSlim(message) && !(message.knownTokens !== undefined && message.content.length === 0);
}

interface PendingCall {
  readonly block: ToolRequestBlock;
  readonly message: AnyMessage;
  readonly index: number;
  answered: boolean;
}

/** Every violation of the rules above, in view order. */
export function viewViolations(messages: readonly AnyMessage[]): ViewViolation[] {
  const violations: ViewViolation[] = [];
  const messageIds = new Set<string>();
  const callIds = new Set<string>();
  /** Calls of the latest assistant message, by id. */
  let pending = new Map<string, PendingCall>();
  /** Calls of earlier assistant messages: a result for one of them comes too late. */
  const closed = new Set<string>();
  const answered = new Set<string>();
  /** Still in the run of results right after the latest assistant message. */
  let resultsFirst = false;

  const report = (rule: ViewRule, message: AnyMessage, index: number, text: string, toolCallId?: string) =>
    violations.push({ rule, messageId: message.id, index, line: message.line, ...(toolCallId !== undefined ? { toolCallId } : {}), message: text });
  const closePending = () => {
    for (const call of pending.values()) {
      if (!call.answered) {
        report('unanswered-call', call.message, call.index, `tool call ${quote(call.block.id)} (${call.block.name}) has no result before the next assistant message`, call.block.id);
      }
      closed.add(call.block.id);
    }
    pending = new Map();
  };

  messages.forEach((message, index) => {
    if (messageIds.has(message.id)) report('duplicate-message-id', message, index, `message id ${quote(message.id)} is used twice`);
    messageIds.add(message.id);
    if (holdsNothing(message)) report('empty-message', message, index, `${message.role} message ${quote(message.id)} has no content`);

    if (message.role === 'assistant') {
      closePending();
      resultsFirst = true;
      for (const block of message.content) {
        if (block.type === 'tool_result') {
          report('misplaced-block', message, index, `tool result for ${quote(block.tool_request_id)} is in an assistant message`, block.tool_request_id);
        }
        if (block.type !== 'tool_request') continue;
        if (callIds.has(block.id)) report('duplicate-call-id', message, index, `tool call id ${quote(block.id)} (${block.name}) is used twice`, block.id);
        callIds.add(block.id);
        pending.set(block.id, { block, message, index, answered: false });
      }
      return;
    }
    for (const block of message.content) {
      if (block.type === 'tool_request') {
        report('misplaced-block', message, index, `tool call ${quote(block.id)} (${block.name}) is in a ${message.role} message`, block.id);
        continue;
      }
      if (block.type !== 'tool_result') {
        resultsFirst = false;
        continue;
      }
      const id = block.tool_request_id;
      if (message.role !== 'user') {
        report('misplaced-block', message, index, `tool result for ${quote(id)} is in a ${message.role} message`, id);
        continue;
      }
      const call = pending.get(id);
      if (call?.answered || (!call && answered.has(id))) {
        report('second-result', message, index, `tool call ${quote(id)} is answered a second time`, id);
      } else if (!call) {
        const why = closed.has(id) ? 'its call is in an earlier assistant message, not the one before it' : 'no tool call before it has this id';
        report('result-without-call', message, index, `tool result for ${quote(id)} has no call to answer: ${why}`, id);
      } else {
        call.answered = true;
        answered.add(id);
        if (!resultsFirst) {
          report('result-after-content', message, index, `tool result for ${quote(id)} (${call.block.name}) comes after other content; results must come first, right after their call`, id);
        }
      }
    }
  });
  closePending();
  return violations.sort((a, b) => a.index - b.index);
}

/**
 * A view we built breaks a provider's rules: a bug of ours, never the user's input. Its message
 * is one line: what broke, which rule, and that it is ours to fix.
 */
export class ViewRuleError extends Error {
  override name = 'ViewRuleError';
  constructor(
    /** What was checked: `the compacted view`, `the summarizer's input`, … */
    readonly what: string,
    readonly violations: readonly ViewViolation[],
    /** The session, when the thrower knows it (the message then starts with it). */
    readonly file?: string,
  ) {
    super(describeViolations(what, violations, file));
  }
}

function describeViolations(what: string, violations: readonly ViewViolation[], file?: string): string {
  const first = violations[0]!;
  const where = first.line > 0 ? ` (line ${first.line})` : '';
  const more = violations.length > 1 ? `, and ${violations.length - 1} more violation${violations.length > 2 ? 's' : ''}` : '';
  const text = `${what} breaks the provider's rules: ${first.message}${where} [rule ${first.rule}]${more}; this is a bug in compactor, please report it`;
  return file ? `${file}: ${text}` : text;
}

/** Throws ViewRuleError when `messages` break any rule; `what` names them in the message. */
export function assertViewRules(messages: readonly AnyMessage[], what: string, file?: string): void {
  const violations = viewViolations(messages);
  if (violations.length > 0) throw new ViewRuleError(what, violations, file);
}
