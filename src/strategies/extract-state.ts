/**
 * What `extract` takes from a span, and how it merges with the previous compaction's: the
 * user's requests verbatim, commands with their outcome, error lines, and the assistant's
 * stated decisions. Stored in the sidecar's `details.extract` so the next compaction adds to it
 * instead of starting over. Pure; rendering is left to checkpoint.ts.
 */
import * as z from 'zod';
import {
  commandHead,
  errorLinesOf,
  errorSource,
  exitCodeOf,
  HUGE_USER_TEXT_CHARS,
  shellCommandOf,
  toolRequestsById,
  userText,
  userTextHead,
} from '../compaction/facts.js';
import type { Message, ToolResultBlock } from '../session/model.js';

export interface CommandRun {
  /** The command's first line (later lines are a heredoc or script body). */
  readonly command: string;
  /** `exit 0`, `exit 101, error`, `error`, `ok`, or `no result` (the outcome of its last run). */
  readonly outcome: string;
  readonly runs: number;
}

export interface ExtractState {
  /** The user's requests, oldest first, verbatim unless pasted material made them huge. */
  readonly requests: readonly string[];
  /** Distinct commands in order of their last run. */
  readonly commands: readonly CommandRun[];
  /** Distinct error lines, oldest first, verbatim. */
  readonly errors: readonly string[];
  /** Sentences in which the assistant said what it will do or chose, oldest first. */
  readonly decisions: readonly string[];
  /** A previous summary written by another strategy, kept verbatim. */
  readonly earlier: string | null;
}

export const EMPTY_EXTRACT_STATE: ExtractState = { requests: [], commands: [], errors: [], decisions: [], earlier: null };

/** Lists stop growing here so a sidecar stays small over hundreds of compactions (oldest go first). */
const MAX_ITEMS = 1_000;
const MAX_DECISIONS = 50;
/** Assistant sentences that state a plan or a choice. */
const DECISION =
  /\b(?:I'll|I will|I'm going to|we'll|we will|let's|decided|decision|chose|choose|instead of|rather than|the plan is|approach)\b/i;
const MAX_DECISION_CHARS = 300;

/** A request as the checkpoint carries it: whole, or the head of a paste with a note. */
export function shortenRequest(text: string): string {
  if (text.length < HUGE_USER_TEXT_CHARS) return text;
  const head = userTextHead(text);
  return `${head}\n[… ${text.length - head.length} more characters of pasted text cut]`;
}

function outcomeOf(result: ToolResultBlock | undefined): string {
  if (!result) return 'no result';
  const code = exitCodeOf(result.output);
  if (code !== null) return result.is_error ? `exit ${code}, error` : `exit ${code}`;
  return result.is_error ? 'error' : 'ok';
}

/** Sentences ending in a colon announce the next tool call ("Now let's check it compiles:"): narration, not decisions. */
function decisionsOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0 && sentence.length <= MAX_DECISION_CHARS && !sentence.endsWith(':') && DECISION.test(sentence));
}

/** Everything `extract` keeps from these messages, in session order. */
export function extractSpan(messages: readonly Message[]): ExtractState {
  const results = new Map<string, ToolResultBlock>();
  for (const message of messages) {
    for (const block of message.content) if (block.type === 'tool_result') results.set(block.tool_request_id, block);
  }
  const requestsById = toolRequestsById(messages);
  const requests: string[] = [];
  const commands: CommandRun[] = [];
  const errors: string[] = [];
  const decisions: string[] = [];
  for (const message of messages) {
    const text = userText(message);
    if (text) requests.push(shortenRequest(text));
    for (const block of message.content) {
      if (block.type === 'text' && message.role === 'assistant') decisions.push(...decisionsOf(block.text));
      if (block.type === 'tool_request') {
        const command = shellCommandOf(block);
        if (command) commands.push({ command: commandHead(command), outcome: outcomeOf(results.get(block.id)), runs: 1 });
      }
      if (block.type === 'tool_result' && errorSource(block, requestsById.get(block.tool_request_id))) {
        errors.push(...errorLinesOf(block.output, block.is_error));
      }
    }
  }
  return { requests, commands, errors, decisions, earlier: null };
}

/** Later occurrences win: an item seen again moves to the end. */
function lastOccurrences<T>(items: readonly T[], key: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    byKey.delete(k);
    byKey.set(k, item);
  }
  return [...byKey.values()];
}

function mergeCommands(previous: readonly CommandRun[], current: readonly CommandRun[]): CommandRun[] {
  const runs = new Map<string, number>();
  for (const run of [...previous, ...current]) runs.set(run.command, (runs.get(run.command) ?? 0) + run.runs);
  return lastOccurrences([...previous, ...current], (run) => run.command).map((run) => ({ ...run, runs: runs.get(run.command)! }));
}

/** The previous state with this span's added: nothing previous is dropped but by the size caps. */
export function mergeExtractStates(previous: ExtractState, current: ExtractState): ExtractState {
  return {
    requests: [...previous.requests, ...current.requests].slice(-MAX_ITEMS),
    commands: mergeCommands(previous.commands, current.commands).slice(-MAX_ITEMS),
    errors: lastOccurrences([...previous.errors, ...current.errors], (line) => line).slice(-MAX_ITEMS),
    decisions: lastOccurrences([...previous.decisions, ...current.decisions], (line) => line).slice(-MAX_DECISIONS),
    earlier: previous.earlier ?? current.earlier,
  };
}

const stateSchema = z.object({
  requests: z.array(z.string()),
  commands: z.array(z.object({ command: z.string(), outcome: z.string(), runs: z.number().int().positive() })),
  errors: z.array(z.string()),
  decisions: z.array(z.string()),
  earlier: z.string().nullable(),
});

/** The extract state in a previous sidecar's details, or null when another strategy wrote it (or it is damaged). */
export function storedExtractState(details: Readonly<Record<string, unknown>> | undefined): ExtractState | null {
  const parsed = stateSchema.safeParse(details?.['extract']);
  return parsed.success ? parsed.data : null;
}
