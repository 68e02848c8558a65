/**
 * Token growth per turn (the trace audit bug.jsonl reproduces). A turn starts at a user message that is not a
 * tool result; its baseline is the input of its first provider call. Pure.
 */
import type { AbortedTurn, AnyMessage } from '../session/model.js';
import { isTurnStart } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';

export interface Turn {
  /** 1-based. */
  readonly turn: number;
  /** Index of the message that opens the turn. */
  readonly startIndex: number;
  readonly calls: readonly ProviderCall[];
  /** The agent recorded the turn as stopped before it finished (Session.abortedTurns). */
  readonly aborted: boolean;
}

export interface TurnUsage {
  readonly turn: number;
  /** Input of the turn's first provider call: the context before any tool output of the turn. */
  readonly baselineInputTokens: number;
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** True when any call of the turn had no reported usage. */
  readonly estimated: boolean;
  readonly aborted: boolean;
}

/**
 * Groups provider calls into turns. Calls before the first user message open turn 1. User
 * messages with no provider call between them (a slash command and its expansion, Codex's
 * injected environment context and the prompt) are one turn: the provider saw them together.
 * A turn the agent recorded as aborted (`aborted`, in file order) is over where the abort was
 * written: the next prompt opens a new turn even when the aborted one made no call.
 */
export function groupTurns(messages: readonly AnyMessage[], calls: readonly ProviderCall[], aborted: readonly AbortedTurn[] = []): Turn[] {
  const turns: { turn: number; startIndex: number; calls: ProviderCall[]; aborted: boolean }[] = [];
  let next = 0;
  let nextAbort = 0;
  /** The last turn was aborted: it takes no more prompts. */
  let closed = false;
  const abortsUpTo = (index: number) => {
    for (; nextAbort < aborted.length && aborted[nextAbort]!.atIndex <= index; nextAbort++) {
      const current = turns[turns.length - 1];
      if (!current) continue;
      current.aborted = true;
      closed = true;
    }
  };
  messages.forEach((message, index) => {
    abortsUpTo(index);
    const current = turns[turns.length - 1];
    const opens = current
      ? isTurnStart(message) && (current.calls.length > 0 || closed)
      : isTurnStart(message) || message.role === 'assistant';
    if (opens) {
      turns.push({ turn: turns.length + 1, startIndex: index, calls: [], aborted: false });
      closed = false;
    }
    while (next < calls.length && calls[next]!.index === index) {
      turns[turns.length - 1]!.calls.push(calls[next]!);
      next++;
    }
  });
  abortsUpTo(messages.length);
  // Each turn's calls at their exact size: grown by push, a list reserves up to 17 slots (about
  // 90 bytes a turn over a long session's turns, held as long as its calls are).
  for (const turn of turns) if (turn.calls.length > 0) turn.calls = turn.calls.slice();
  return turns;
}

export function turnUsage(turn: Turn): TurnUsage {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const call of turn.calls) {
    inputTokens += call.input;
    outputTokens += call.output;
  }
  return {
    turn: turn.turn,
    baselineInputTokens: turn.calls[0]?.input ?? 0,
    requests: turn.calls.length,
    inputTokens,
    outputTokens,
    estimated: turn.calls.some((call) => call.estimated),
    aborted: turn.aborted,
  };
}

export interface UsageTotals {
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export function totalUsage(turns: readonly TurnUsage[]): UsageTotals {
  return turns.reduce(
    (total, turn) => ({
      requests: total.requests + turn.requests,
      inputTokens: total.inputTokens + turn.inputTokens,
      outputTokens: total.outputTokens + turn.outputTokens,
    }),
    { requests: 0, inputTokens: 0, outputTokens: 0 },
  );
}
