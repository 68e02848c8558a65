/**
 * The real effect of the compactions an agent recorded in its own session file (Claude Code
 * compact boundaries, Codex `compacted` items, pi compaction entries): where each happened, the
 * context before it and the prompt the provider reported on the first call after it. Pure;
 * readers find the compactions, commands print them.
 */
import type { AnyMessage, RecordedCompaction } from '../session/model.js';
import { estimateContextTokens } from '../tokens/estimate.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import type { Turn } from './turns.js';

export interface RecordedCompactionEffect {
  /** Line of the compaction record in the session file. */
  readonly line: number;
  readonly firstKeptIndex: number;
  /** The session's own id of the first message in the new context; null when nothing followed. */
  readonly firstKeptMessageId: string | null;
  /** Index of the first message written after the compaction. */
  readonly atIndex: number;
  /** The context before: the agent's own figure when it wrote one, else our hybrid estimate. */
  readonly tokensBefore: number;
  /** Prompt tokens the provider reported on the first call after; null when none was reported. */
  readonly tokensAfter: number | null;
  /**
   * Reported prompt of the last call before minus that of the first call after: the drop in
   * baseline the provider really saw. Null when either call has no reported usage.
   */
  readonly reportedDrop: number | null;
}

function reportedBefore(calls: readonly ProviderCall[], index: number): ProviderCall | undefined {
  for (let i = calls.length - 1; i >= 0; i--) {
    const call = calls[i]!;
    if (call.index < index && !call.estimated) return call;
  }
  return undefined;
}

/** The first reported call in [from, to): a call after the next compaction measures that one. */
function reportedWithin(calls: readonly ProviderCall[], from: number, to: number): ProviderCall | undefined {
  return calls.find((call) => call.index >= from && call.index < to && !call.estimated);
}

export function recordedCompactionEffects(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  compactions: readonly RecordedCompaction[],
  calls: readonly ProviderCall[],
): RecordedCompactionEffect[] {
  return compactions.map((compaction, k) => {
    const next = compactions[k + 1]?.atIndex ?? messages.length;
    const before = reportedBefore(calls, compaction.atIndex);
    const after = reportedWithin(calls, compaction.atIndex, next);
    return {
      line: compaction.line,
      firstKeptIndex: compaction.firstKeptIndex,
      firstKeptMessageId: messages[compaction.firstKeptIndex]?.id ?? null,
      atIndex: compaction.atIndex,
      tokensBefore:
        compaction.tokensBefore ?? estimateContextTokens(messages, tokens, compaction.atIndex, compactions.slice(0, k)),
      tokensAfter: after ? after.input : null,
      reportedDrop: before && after ? before.input - after.input : null,
    };
  });
}

/** The effects that happened during `turn` (from its first message to the next turn's). */
export function effectsInTurn(
  effects: readonly RecordedCompactionEffect[],
  turns: readonly Turn[],
  position: number,
): RecordedCompactionEffect[] {
  const from = position === 0 ? 0 : turns[position]!.startIndex;
  const to = turns[position + 1]?.startIndex ?? Number.POSITIVE_INFINITY;
  return effects.filter((effect) => effect.atIndex >= from && effect.atIndex < to);
}
