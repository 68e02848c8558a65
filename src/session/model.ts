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
 * What the provider reported for the call that produced an assistant message.
 * `input` is the uncached part only (Anthropic style); formats whose input already includes
 * cached tokens (OpenAI, Codex) put everything in `input` and 0 in `cacheRead`.
 */
export interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
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
   * Tokens the message is known to take when the file records sizes but no text (usage-only
   * tracing logs). Estimators use it instead of counting characters.
   */
  readonly knownTokens?: number;
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

export interface Diagnostic {
  readonly file: string;
  readonly line?: number;
  readonly message: string;
}

export interface Session {
  readonly path: string;
  readonly format: string;
  readonly messages: readonly Message[];
  /** The model named by the session, when the format records one. */
  readonly model?: string;
  readonly recordedCompactions: readonly RecordedCompaction[];
  /** Recoverable oddities met while reading (skipped lines, orphan results…). */
  readonly warnings: readonly Diagnostic[];
}

export function isToolResultMessage(message: Message): boolean {
  return message.content.some((block) => block.type === 'tool_result');
}

export function hasToolRequests(message: Message): boolean {
  return message.content.some((block) => block.type === 'tool_request');
}

/** A turn starts at a user message that is not a tool result. */
export function isTurnStart(message: Message): boolean {
  return message.role === 'user' && !isToolResultMessage(message);
}

/** Each assistant message stands for one provider call. */
export function isProviderCall(message: Message): boolean {
  return message.role === 'assistant';
}
