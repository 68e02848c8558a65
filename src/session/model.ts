/**
 * The session model every format reader produces and every command consumes.
 *
 * A session is an ordered list of messages as the model saw them (one provider call per assistant
 * message). Readers translate their on-disk format into this; nothing downstream knows which
 * format a session came from, except through `Session.format` for reporting.
 */

export type Role = 'user' | 'assistant' | 'system';

export interface TextBlock {
  readonly type: 'text';
  readonly text: string;
}

export interface ThinkingBlock {
  readonly type: 'thinking';
  readonly text: string;
}

export interface ToolRequestBlock {
  readonly type: 'tool_request';
  readonly id: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

export interface ToolResultBlock {
  readonly type: 'tool_result';
  readonly tool_request_id: string;
  readonly output: string;
  readonly is_error: boolean;
}

export type ContentBlock = TextBlock | ThinkingBlock | ToolRequestBlock | ToolResultBlock;

/**
 * What the provider reported for the call that produced an assistant message, split the way it
 * is billed: `input` is the uncached part only (Anthropic style). A reader whose format reports
 * a total that includes the cached parts (Codex, Gemini CLI) subtracts them; one whose format
 * does not say which part was cached (plain OpenAI chat logs) puts it all in `input`.
 */
export interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /**
   * The part of `cacheWrite` written with a one-hour lifetime (Claude Code 2.x), billed at twice
   * the input price where five-minute writes cost 1.25 times. Absent: every write is five-minute.
   */
  readonly cacheWrite1h?: number;
}

/** Prompt size of the call: everything the provider read, cached or not. */
export function promptTokens(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite;
}

export interface Message {
  /** The format's own id (canonical id, Claude uuid, pi entry id, or a stable line-based id). */
  readonly id: string;
  readonly role: Role;
  readonly content: readonly ContentBlock[];
  /** Reported usage of the provider call that produced this (assistant) message. */
  readonly usage?: Usage;
  readonly model?: string;
  readonly timestamp?: string;
  /** 1-based line in the source file, for error messages. */
  readonly line: number;
  /**
   * The provider's name for the call that produced this (assistant) message, where the file
   * records one (Claude Code `message.id` + `requestId`, Codex `response_id`, pi `responseId`):
   * one call found in two sessions (a fork's copy) is billed once.
   */
  readonly callKey?: string;
  /**
   * Set on an assistant message whose call was billed in another session, not this one (a fork's
   * copy of its parent's call): the session that billed it, as the file names it (a path or a
   * session id). Context, not spend.
   */
  readonly copiedFrom?: string;
  /**
   * Tokens the message is known to take when the file records sizes but no text (usage-only
   * tracing logs). Estimators use it instead of counting characters.
   */
  readonly knownTokens?: number;
  /**
   * Set on an assistant message the agent wrote into the history itself, with no provider call
   * behind it (Codex's rendering of a finished review): context the model sees as its own turn,
   * never a call.
   */
  readonly rendered?: true;
  /** Never set on a full message: the mark that tells a slim one (SlimMessage) apart. */
  readonly [TEXT_LEFT_OUT]?: never;
}

/**
 * Marks a slim message. A symbol key (not a WeakSet: a million weak entries slow every garbage
 * collection) that object spread copies along and JSON never shows.
 */
export const TEXT_LEFT_OUT: unique symbol = Symbol('slim message');

/**
 * A tool result on a slim message: which call it answers and whether it failed, without its output
 * (what the output weighs is the message's estimate, taken before the text was left out).
 */
export interface SlimToolResultBlock {
  readonly type: 'tool_result';
  readonly tool_request_id: string;
  readonly is_error: boolean;
}

/** The blocks a slim message keeps: tool requests (file arguments only) and results without their output. */
export type SlimBlock = ToolRequestBlock | SlimToolResultBlock;

/** A block of a full or a slim message: what code that reads only structure takes. */
export type AnyBlock = ContentBlock | SlimToolResultBlock;

/**
 * A message read on the lean path (read/slim.ts) with its text left out: ids, roles, usage, tool
 * names and file arguments stay. What derives from structure (turns, provider calls, cuts, tool
 * pairing, file lists) takes either kind (`AnyMessage`); what reads text (hashes, estimates,
 * serializing, the provider view, summarizing) takes `Message` only, so the type checker refuses
 * a slim message there.
 */
export interface SlimMessage extends Omit<Message, typeof TEXT_LEFT_OUT | 'content'> {
  /** No text or thinking; tool results without their output. */
  readonly content: readonly SlimBlock[];
  readonly [TEXT_LEFT_OUT]: true;
}

/** A full or a slim message: what code that reads only structure takes. */
export type AnyMessage = Message | SlimMessage;

/**
 * Full messages [from, from + messages.length) of a session whose other messages may be slim: the
 * ones a compaction reads the text of (compact's second read keeps only those in full).
 */
export interface TextSpan {
  readonly from: number;
  readonly messages: readonly Message[];
}

/** True for a slim message (or a spread copy of one): its text is not there to read. */
export function isSlim(message: AnyMessage): message is SlimMessage {
  return message[TEXT_LEFT_OUT] === true;
}

/** True when no message is slim: a read that gave every message in full (a reader without the keep hook). */
export function allFull(messages: readonly AnyMessage[]): messages is readonly Message[] {
  return !messages.some(isSlim);
}

/**
 * A compaction the agent itself recorded in the file (Claude Code, Codex, pi). From `atIndex`
 * on, the provider saw only messages [firstKeptIndex, …): the agent's summary message (a user
 * message in `messages`, at `atIndex`) and what it kept. pi keeps messages written before the
 * compaction, so there `firstKeptIndex < atIndex`; elsewhere they are equal.
 */
export interface RecordedCompaction {
  /** Index into `Session.messages` of the first message in the context after this compaction. */
  readonly firstKeptIndex: number;
  /** Index of the first message written after the compaction (its summary message, if any). */
  readonly atIndex: number;
  readonly summary: string;
  /** The context size the agent itself reported before compacting (Claude preTokens, pi tokensBefore). */
  readonly tokensBefore?: number;
  /** Line of the compaction record in the file. */
  readonly line: number;
}

/**
 * First message the provider could see when the message at `index` was sent: the first kept
 * message of the last recorded compaction written before it, or 0. Compactions are in file order.
 */
export function windowStartAt(compactions: readonly RecordedCompaction[], index: number): number {
  let start = 0;
  for (const compaction of compactions) {
    if (compaction.atIndex <= index) start = Math.max(start, compaction.firstKeptIndex);
  }
  return start;
}

/**
 * Why a call the provider billed is not part of the context ledger: the session's spend counts
 * it, its live conversation does not.
 * - `abandoned-branch`: a rewind or an edited prompt left the branch behind (Claude Code, pi);
 * - `subagent`: a subagent's own conversation (inline sidechains, `subagents/agent-*.jsonl`);
 * - `review`: a separate thread inside the session (Codex review mode);
 * - `aborted`: a call whose reply the agent dropped (pi aborted or error messages with usage);
 * - `unmatched`: usage the file reports that matches no message (a Codex token_count alone);
 * - `compaction`: the call the agent made to write its own compaction summary (Claude Code's
 *   `subagents/agent-acompact-*.jsonl`, the Codex call whose output a `compacted` item replaced).
 */
export type SpendCause = 'abandoned-branch' | 'subagent' | 'review' | 'aborted' | 'unmatched' | 'compaction';

/** A billed provider call that is not a message of the session's context. */
export interface OffContextCall {
  readonly cause: SpendCause;
  readonly usage: Usage;
  readonly model?: string;
  readonly timestamp?: string;
  /** Where the usage was read: a subagent's calls come from files beside the session. */
  readonly file: string;
  readonly line: number;
  /** The provider's name for the call, where the file records one (Message.callKey). */
  readonly callKey?: string;
}

/**
 * A turn the agent recorded as stopped before it finished (Codex `turn_aborted`: the user
 * interrupted it). The stop was written when the session held `atIndex` messages: the turn
 * holding message `atIndex - 1` is the one stopped, and the next prompt opens a turn of its own
 * even when no provider call came in between.
 */
export interface AbortedTurn {
  readonly atIndex: number;
  /** The agent's reason (`interrupted`, …), when it gives one. */
  readonly reason?: string;
  readonly line: number;
}

export interface Diagnostic {
  readonly file: string;
  readonly line?: number;
  readonly message: string;
}

/** A session as read: full messages, or (`Session<AnyMessage>`) a lean read's slim ones. */
export interface Session<M extends AnyMessage = Message> {
  readonly path: string;
  readonly format: string;
  readonly messages: readonly M[];
  /** The model named by the session, when the format records one. */
  readonly model?: string;
  readonly recordedCompactions: readonly RecordedCompaction[];
  /**
   * Calls the provider billed that are not messages of the context (spend only), each with its
   * cause; empty for formats that hold one conversation and nothing else.
   */
  readonly offContext: readonly OffContextCall[];
  /** The context window the agent ran the session with, when the file records it (Codex). */
  readonly contextWindow?: number;
  /**
   * The project the session belongs to, when the file names one: Codex's and pi's working
   * directory (`cwd`), Gemini CLI's `projectHash`. Absent otherwise (a Claude Code session's
   * project is the directory it is stored in).
   */
  readonly project?: string;
  /** Turns the agent recorded as stopped before they finished, in file order (Codex); absent: none recorded. */
  readonly abortedTurns?: readonly AbortedTurn[];
  /** Recoverable oddities met while reading (skipped lines, orphan results…). */
  readonly warnings: readonly Diagnostic[];
}

export function isToolResultMessage(message: AnyMessage): boolean {
  return message.content.some((block) => block.type === 'tool_result');
}

export function hasToolRequests(message: AnyMessage): boolean {
  return message.content.some((block) => block.type === 'tool_request');
}

/** A turn starts at a user message that is not a tool result. */
export function isTurnStart(message: AnyMessage): boolean {
  return message.role === 'user' && !isToolResultMessage(message);
}

/** Each assistant message stands for one provider call. */
export function isProviderCall(message: AnyMessage): boolean {
  return message.role === 'assistant' && message.rendered !== true;
}
