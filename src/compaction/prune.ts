/**
 * Pruning: the conversation stays, and old tool outputs are replaced by a placeholder. One model,
 * its rules a plain record, two presets: KEEP_WINDOW_PRUNE (`compact --strategy prune`: every
 * output before the keep window that is longer than a placeholder naming its call) and
 * OPENCODE_PRUNE (replay's opencode policy: its `SessionCompaction.prune` constants and fixed
 * placeholder). Pure: choosing the outputs, the placeholder, applying it, and what it saves. The
 * sidecar stores the list; the provider view applies it; replay keeps its own marks.
 */
import type { AnyBlock, AnyMessage, Message, TextSpan, ToolRequestBlock } from '../session/model.js';
import { isSlim, isTurnStart } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { CHARS_PER_TOKEN, estimateMessageTokens, heuristicCounter } from '../tokens/estimate.js';
import { toolRequestsById } from './facts.js';
import { formatArguments } from './serialize.js';

/**
 * Which old tool outputs give way. The walk goes back from the newest message of the range: the
 * last `protectTurns` user turns are never touched; once the outputs seen pass `protectTokens`,
 * every older one is marked (messages whose outputs are all of `protectedTools` are passed over);
 * the walk stops at an output already pruned; the marks apply only if they free more than
 * `minimumTokens`.
 */
export interface PruneRules {
  readonly protectTurns: number;
  readonly protectTokens: number;
  readonly minimumTokens: number;
  readonly protectedTools: readonly string[];
  /** The text that replaces every output; null: a placeholder naming the call (prunedPlaceholder). */
  readonly placeholder: string | null;
}

/** `compact --strategy prune`: everything before the keep window, each output in a line naming its call. */
export const KEEP_WINDOW_PRUNE: PruneRules = {
  protectTurns: 0,
  protectTokens: 0,
  minimumTokens: 0,
  protectedTools: [],
  placeholder: null,
};

/** Rules whose placeholder is one fixed text (replay's presets). */
export type FixedPlaceholderPrune = PruneRules & { readonly placeholder: string };

/** opencode's constants (PRUNE_PROTECT, PRUNE_MINIMUM, the last two turns, `skill`) and placeholder. */
export const OPENCODE_PRUNE: FixedPlaceholderPrune = {
  protectTokens: 40_000,
  minimumTokens: 20_000,
  protectTurns: 2,
  protectedTools: ['skill'],
  placeholder: '[Old tool result content cleared]',
};

/** One pruned output, as the sidecar records it (snake_case: on disk). */
export interface PrunedOutput {
  readonly tool_request_id: string;
  /** The message holding the result, so a reused call id elsewhere is never touched. */
  readonly message_id: string;
  readonly tool: string;
  /** The call's arguments on one line, each value cut to PLACEHOLDER_ARGUMENT_CHARS. */
  readonly arguments: string;
  /** Estimated tokens of the output that was removed. */
  readonly tokens: number;
}

/** Argument values longer than this are cut in the placeholder (a write's content, a patch). */
export const PLACEHOLDER_ARGUMENT_CHARS = 80;

export function prunedPlaceholder(pruned: PrunedOutput): string {
  return `[tool output pruned: ${pruned.tool}(${pruned.arguments}), ${pruned.tokens} tokens removed]`;
}

/** A message the walk marked, and the tokens pruning it frees. */
export interface PruneMark {
  readonly index: number;
  readonly saved: number;
}

interface PruneWalk {
  readonly messages: readonly AnyMessage[];
  readonly range: { readonly start: number; readonly end: number };
  readonly rules: PruneRules;
  /** toolRequestsById over the session up to the range's end (or the whole session). */
  readonly requests: ReadonlyMap<string, ToolRequestBlock>;
  /** Tokens each message carries now; read only when the rules protect some. */
  readonly tokens?: readonly number[];
  readonly alreadyPruned?: { has(index: number): boolean };
  /** Tokens pruning this message frees. */
  readonly saving: (index: number) => number;
}

/** The messages whose outputs the rules prune, newest first; [] when they would free too little. */
function walkPrunable(walk: PruneWalk): PruneMark[] {
  const { messages, range, rules } = walk;
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
    if (walk.alreadyPruned?.has(index)) break;
    const isProtected = results.every((block) => rules.protectedTools.includes(walk.requests.get(block.tool_request_id)?.name ?? ''));
    if (isProtected) continue;
    if (rules.protectTokens > 0) {
      seen += walk.tokens?.[index] ?? 0;
      if (seen <= rules.protectTokens) continue;
    }
    const saved = walk.saving(index);
    if (saved <= 0) continue;
    marks.push({ index, saved });
    freed += saved;
  }
  return freed > rules.minimumTokens ? marks : [];
}

/** Each output of the message that a placeholder naming its call would shorten. */
function namedCandidates(message: Message, requests: ReadonlyMap<string, ToolRequestBlock>, count: TextCounter): PrunedOutput[] {
  const candidates: PrunedOutput[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_result') continue;
    const request = requests.get(block.tool_request_id);
    const candidate: PrunedOutput = {
      tool_request_id: block.tool_request_id,
      message_id: message.id,
      tool: request?.name ?? 'unknown',
      arguments: request ? formatArguments(request.arguments, PLACEHOLDER_ARGUMENT_CHARS) : '',
      tokens: count(block.output),
    };
    if (prunedPlaceholder(candidate).length < block.output.length) candidates.push(candidate);
  }
  return candidates;
}

/**
 * Outputs of messages [from, to) that KEEP_WINDOW_PRUNE replaces, in session order: what the
 * sidecar records. `messages` gives the calls and turns; `text`, the messages whose outputs are
 * measured (a message outside it was read without its outputs: none of it is pruned).
 */
export function pruneOutputs(
  messages: readonly AnyMessage[],
  text: TextSpan,
  from: number,
  to: number,
  count: TextCounter = heuristicCounter,
): PrunedOutput[] {
  const requests = toolRequestsById(messages.slice(0, to));
  const candidates = new Map<number, PrunedOutput[]>();
  const candidatesOf = (index: number): PrunedOutput[] => {
    let found = candidates.get(index);
    if (!found) {
      const message = text.messages[index - text.from];
      candidates.set(index, (found = message ? namedCandidates(message, requests, count) : []));
    }
    return found;
  };
  const saving = (index: number) => candidatesOf(index).reduce((sum, candidate) => sum + candidate.tokens, 0);
  const marks = walkPrunable({ messages, range: { start: from, end: to }, rules: KEEP_WINDOW_PRUNE, requests, saving });
  return marks.reverse().flatMap((mark) => candidatesOf(mark.index));
}

/** The message with every tool output replaced by a fixed placeholder. */
function withPlaceholder(message: Message, placeholder: string): Message {
  return {
    ...message,
    content: message.content.map((block) => (block.type === 'tool_result' ? { ...block, output: placeholder } : block)),
  };
}

/** Estimated tokens of the message once `placeholder` replaces each of its tool outputs. */
export function placeholderTokens(message: Message, placeholder: string, count: TextCounter = heuristicCounter): number {
  return estimateMessageTokens(withPlaceholder(message, placeholder), count);
}

/**
 * placeholderTokens by chars/4 from the message's block lengths (tokens/estimate.ts
 * blockLengths), where the read hands over lengths and not the text: the same number.
 */
export function placeholderTokensFromLengths(message: Message, lengths: readonly number[], placeholder: string): number {
  if (message.knownTokens !== undefined) return message.knownTokens;
  let chars = 0;
  message.content.forEach((block, i) => {
    chars += block.type === 'tool_result' ? placeholder.length : lengths[i]!;
  });
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Messages of [start, end) whose outputs a fixed-placeholder preset (OPENCODE_PRUNE) prunes, newest
 * first, given the tokens each message carries now, which are already pruned (any set or map of
 * indices), and the tokens each would carry pruned (`placeholderTokens` of message i: read from the
 * message's text, or taken while reading, so the messages themselves may be slim); `requests` is
 * toolRequestsById(messages). Replay applies them as it goes.
 */
export function findPrunable(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  range: { readonly start: number; readonly end: number },
  alreadyPruned: { has(index: number): boolean },
  rules: FixedPlaceholderPrune,
  requests: ReadonlyMap<string, ToolRequestBlock>,
  pruned: (index: number) => number,
): PruneMark[] {
  const saving = (index: number) => (tokens[index] ?? 0) - pruned(index);
  return walkPrunable({ messages, range, rules, requests, tokens, alreadyPruned, saving });
}

const keyOf = (messageId: string, toolRequestId: string) => `${messageId}\u0000${toolRequestId}`;

function rewrite<M extends AnyMessage>(message: M, byKey: ReadonlyMap<string, PrunedOutput>): M {
  let changed = false;
  const content = message.content.map((block): AnyBlock => {
    if (block.type !== 'tool_result') return block;
    const pruned = byKey.get(keyOf(message.id, block.tool_request_id));
    if (!pruned) return block;
    changed = true;
    return { ...block, output: prunedPlaceholder(pruned) };
  });
  // Only outputs change: a slim message stays one (its blocks are replaced alike).
  return changed ? ({ ...message, content } as M) : message;
}

/** The messages with every pruned output replaced by its placeholder. */
export function applyPruning<M extends AnyMessage>(messages: readonly M[], pruned: readonly PrunedOutput[]): M[] {
  if (pruned.length === 0) return [...messages];
  const byKey = new Map(pruned.map((entry) => [keyOf(entry.message_id, entry.tool_request_id), entry]));
  return messages.map((message) => rewrite(message, byKey));
}

/**
 * Tokens pruning takes off every later call: each rewritten message's estimate before minus after,
 * over messages [0, end) (the session so far; replay's simulated compactions pass their call).
 */
export function pruningSavings(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  pruned: readonly PrunedOutput[],
  count: TextCounter = heuristicCounter,
  end = messages.length,
): number {
  const touched = new Set(pruned.map((entry) => entry.message_id));
  const byKey = new Map(pruned.map((entry) => [keyOf(entry.message_id, entry.tool_request_id), entry]));
  let saved = 0;
  for (let index = 0; index < end; index++) {
    const message = messages[index]!;
    if (!touched.has(message.id)) continue;
    // What stays of a pruned message is sized from its text: a session with a prune sidecar is
    // read in full (read/index.ts), and a slim message here is a bug, not an estimate.
    if (isSlim(message)) throw new Error(`pruning savings need message ${message.id} in full`);
    saved += (tokens[index] ?? 0) - estimateMessageTokens(rewrite(message, byKey), count);
  }
  return saved;
}
