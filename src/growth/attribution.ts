/**
 * Growth attribution: what each turn added to the context, by kind of content, which tool
 * outputs weigh most on the session's cost, and which files were read again and again. Pure;
 * rendering is left to src/growth/text.ts (JSON: json.ts).
 *
 * Sizes are token estimates of each block (the same counter as everywhere else). A message
 * stays in every later prompt, so an output's weight is its size times the provider calls
 * that re-sent it (`carried`).
 */
import type { AnyMessage, Message, Role, ToolRequestBlock } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { heuristicCounter } from '../tokens/estimate.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import { GrowthFacts } from './facts.js';
import type { Turn } from './turns.js';
import { classifyToolRequest } from '../session/tool-files.js';

export { GrowthFacts, toolTarget } from './facts.js';

export const GROWTH_KINDS = ['userText', 'assistantText', 'thinking', 'toolCalls', 'toolResults', 'system'] as const;
export type GrowthKind = (typeof GROWTH_KINDS)[number];
export type KindTokens = Readonly<Record<GrowthKind, number>>;

export interface TurnGrowth {
  readonly turn: number;
  readonly added: KindTokens;
  readonly total: number;
  /** Tool-result tokens by tool name, largest first. */
  readonly toolResults: readonly { readonly tool: string; readonly tokens: number }[];
}

export interface ToolOutput {
  readonly turn: number;
  readonly messageId: string;
  readonly tool: string;
  /** The file path, command, pattern or URL the call named ('' when none). */
  readonly target: string;
  readonly tokens: number;
  /** Provider calls after this output, each of which re-sent it. */
  readonly callsAfter: number;
  readonly carried: number;
}

export interface ToolTotal {
  readonly tool: string;
  readonly results: number;
  readonly tokens: number;
}

export interface RepeatedRead {
  readonly path: string;
  readonly reads: number;
  readonly tokens: number;
  readonly turns: readonly number[];
}

export interface GrowthReport {
  readonly turns: readonly TurnGrowth[];
  readonly tools: readonly ToolTotal[];
  /** Every tool output (or the first `outputsKept`: growthFromFacts), heaviest (most tokens re-sent) first. */
  readonly outputs: readonly ToolOutput[];
  /** Files read two or more times, most reads first. */
  readonly repeatedReads: readonly RepeatedRead[];
}

function textKind(role: Role): GrowthKind {
  return role === 'user' ? 'userText' : role === 'assistant' ? 'assistantText' : 'system';
}

function emptyKinds(): Record<GrowthKind, number> {
  return { userText: 0, assistantText: 0, thinking: 0, toolCalls: 0, toolResults: 0, system: 0 };
}

/** Heaviest first: most tokens re-sent, then most tokens; ties in session order. */
function heaviestFirst(a: ToolOutput, b: ToolOutput): number {
  return b.carried - a.carried || b.tokens - a.tokens;
}

/**
 * The first `limit` outputs of a stable sort by heaviestFirst, kept as they are met: a long
 * session has an output per tool result (about 100 bytes each), the report shows a few.
 */
class HeaviestOutputs {
  readonly kept: ToolOutput[] = [];
  constructor(private readonly limit: number) {}

  /** Whether an output this heavy would be kept: one that would not is never built. */
  takes(carried: number, tokens: number): boolean {
    const last = this.kept.length < this.limit ? undefined : this.kept[this.limit - 1];
    // heaviestFirst(last, output) > 0: it sorts before the last kept one.
    return last === undefined || (carried - last.carried || tokens - last.tokens) > 0;
  }

  offer(output: ToolOutput): void {
    const { kept } = this;
    // It goes after every kept output it does not sort before (a stable sort's place: it came last).
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (heaviestFirst(kept[middle]!, output) <= 0) low = middle + 1;
      else high = middle;
    }
    if (low >= this.limit) return;
    kept.splice(low, 0, output);
    if (kept.length > this.limit) kept.pop();
  }
}

function byTokens<T extends { tokens: number }>(entries: Iterable<T>): T[] {
  return [...entries].sort((a, b) => b.tokens - a.tokens);
}

/** Growth attribution of full messages (each block counted with `count` on its own). */
export function analyzeGrowth(
  messages: readonly Message[],
  turns: readonly Turn[],
  calls: readonly ProviderCall[],
  count: TextCounter = heuristicCounter,
): GrowthReport {
  const facts = new GrowthFacts(count);
  for (const message of messages) facts.observe(message);
  return growthFromFacts(messages, facts, turns, calls);
}

/**
 * Growth attribution from facts gathered from the full messages (growth/facts.ts), over
 * the messages themselves or their slim copies: tool names, ids and the files read tools read
 * are all slim messages keep (read/slim.ts). `outputsKept`: how many of the heaviest outputs
 * the report keeps (default: every one).
 */
export function growthFromFacts(
  messages: readonly AnyMessage[],
  facts: GrowthFacts,
  turns: readonly Turn[],
  calls: readonly ProviderCall[],
  outputsKept = Infinity,
): GrowthReport {
  const requests = new Map<string, ToolRequestBlock>();
  for (const message of messages) for (const block of message.content) if (block.type === 'tool_request') requests.set(block.id, block);

  const growth: TurnGrowth[] = [];
  const outputs: ToolOutput[] = [];
  const heaviest = Number.isFinite(outputsKept) ? new HeaviestOutputs(outputsKept) : null;
  const tools = new Map<string, { tool: string; results: number; tokens: number }>();
  const reads = new Map<string, { path: string; reads: number; tokens: number; turns: Set<number> }>();
  let callsSeen = 0;
  // Turns run from message 0 on without gaps, so results are met in the order they were gathered.
  let resultsSeen = 0;

  turns.forEach((turn, position) => {
    const start = position === 0 ? 0 : turn.startIndex;
    const end = turns[position + 1]?.startIndex ?? messages.length;
    const added = emptyKinds();
    const perTool = new Map<string, { tool: string; tokens: number }>();
    for (let index = start; index < end; index++) {
      const message = messages[index]!;
      while (callsSeen < calls.length && calls[callsSeen]!.index <= index) callsSeen++;
      added[textKind(message.role)] += facts.text.at(index)!;
      added.thinking += facts.thinking.at(index)!;
      added.toolCalls += facts.toolCalls.at(index)!;
      for (const block of message.content) {
        if (block.type !== 'tool_result') continue;
        const tokens = facts.results.at(resultsSeen++)!;
        added.toolResults += tokens;
        const request = requests.get(block.tool_request_id);
        const tool = request?.name ?? '(unknown tool)';
        const entry = perTool.get(tool) ?? { tool, tokens: 0 };
        entry.tokens += tokens;
        perTool.set(tool, entry);
        const total = tools.get(tool) ?? { tool, results: 0, tokens: 0 };
        total.results++;
        total.tokens += tokens;
        tools.set(tool, total);
        const callsAfter = calls.length - callsSeen;
        const carried = tokens * callsAfter;
        if (!heaviest || heaviest.takes(carried, tokens)) {
          const target = request ? (facts.targets.get(request.id) ?? '') : '';
          const output = { turn: turn.turn, messageId: message.id, tool, target, tokens, callsAfter, carried };
          if (heaviest) heaviest.offer(output);
          else outputs.push(output);
        }
        const op = request ? classifyToolRequest(request) : null;
        if (op?.kind !== 'read') continue;
        for (const path of op.paths) {
          const read = reads.get(path) ?? { path, reads: 0, tokens: 0, turns: new Set<number>() };
          read.reads++;
          read.tokens += tokens;
          read.turns.add(turn.turn);
          reads.set(path, read);
        }
      }
    }
    const total = GROWTH_KINDS.reduce((sum, kind) => sum + added[kind], 0);
    growth.push({ turn: turn.turn, added, total, toolResults: byTokens(perTool.values()) });
  });

  return {
    turns: growth,
    tools: byTokens(tools.values()),
    outputs: heaviest ? heaviest.kept : outputs.sort(heaviestFirst),
    repeatedReads: [...reads.values()]
      .filter((read) => read.reads >= 2)
      .sort((a, b) => b.reads - a.reads || b.tokens - a.tokens)
      .map((read) => ({ path: read.path, reads: read.reads, tokens: read.tokens, turns: [...read.turns].sort((a, b) => a - b) })),
  };
}
