/**
 * Tool-output pruning as opencode does it before it summarizes (its `SessionCompaction.prune`),
 * for replay. Pure: says which tool-result messages lose their output and how many tokens that
 * saves; the replay applies it.
 *
 * Walking back from the newest message: the last `protectTurns` user turns are never touched;
 * older tool outputs are added up, and once that sum passes `protectTokens`, every older output
 * is marked; the marks apply only if they free more than `minimumTokens`. The walk stops at the
 * last summary (`start`) and at an output already pruned. A pruned output is replaced by
 * opencode's placeholder text, so the message keeps its place and its tool call.
 */
import type { Message } from '../session/model.js';
import { isTurnStart } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { estimateMessageTokens, heuristicCounter } from '../tokens/estimate.js';

export interface PruneRules {
  readonly protectTokens: number;
  readonly minimumTokens: number;
  readonly protectTurns: number;
  /** Tools whose outputs are never pruned (opencode: `skill`). */
  readonly protectedTools: readonly string[];
  readonly placeholder: string;
}

/** opencode's constants (PRUNE_PROTECT, PRUNE_MINIMUM, the last two turns, `skill`). */
export const OPENCODE_PRUNE: PruneRules = {
  protectTokens: 40_000,
  minimumTokens: 20_000,
  protectTurns: 2,
  protectedTools: ['skill'],
  placeholder: '[Old tool result content cleared]',
};

export interface PruneMark {
  readonly index: number;
  /** The message's estimate minus the estimate of its pruned form. */
  readonly saved: number;
}

/** The message with every tool output replaced by the placeholder. */
function prunedForm(message: Message, placeholder: string): Message {
  return {
    ...message,
    content: message.content.map((block) => (block.type === 'tool_result' ? { ...block, output: placeholder } : block)),
  };
}

/**
 * Outputs to prune in messages [start, end), given the tokens each message carries now and
 * which are already pruned (any set or map of indices). Returns [] when pruning would free too little.
 */
export function findPrunable(
  messages: readonly Message[],
  tokens: readonly number[],
  range: { readonly start: number; readonly end: number },
  alreadyPruned: { has(index: number): boolean },
  rules: PruneRules,
  toolNames: ReadonlyMap<string, string>,
  count: TextCounter = heuristicCounter,
): PruneMark[] {
  const marks: PruneMark[] = [];
  let turns = 0;
  let seen = 0;
  let freed = 0;
  for (let index = range.end - 1; index >= range.start; index--) {
    const message = messages[index]!;
    if (isTurnStart(message)) turns++;
    if (turns < rules.protectTurns) continue;
    const results = message.content.filter((block) => block.type === 'tool_result');
    if (results.length === 0) continue;
    if (alreadyPruned.has(index)) break;
    const isProtected = results.every((block) => rules.protectedTools.includes(toolNames.get(block.tool_request_id) ?? ''));
    if (isProtected) continue;
    const current = tokens[index] ?? 0;
    seen += current;
    if (seen <= rules.protectTokens) continue;
    const saved = current - estimateMessageTokens(prunedForm(message, rules.placeholder), count);
    if (saved <= 0) continue;
    marks.push({ index, saved });
    freed += saved;
  }
  return freed > rules.minimumTokens ? marks : [];
}

/** Tool request id → tool name, for every tool call of the session. */
export function toolNamesById(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const block of message.content) if (block.type === 'tool_request') names.set(block.id, block.name);
  }
  return names;
}
