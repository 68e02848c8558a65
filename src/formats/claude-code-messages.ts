/**
 * Claude Code lines into messages: one API response split over several lines (sharing
 * `message.id` and `requestId`) becomes one assistant message. Which lines belong to the session,
 * and in what order, is claude-code.ts's (the parent chain, known only at the end of the file);
 * this file builds the messages.
 *
 * It builds them while the file is read, in file order, and hands each to ReadOptions.keep as
 * soon as it is settled, so the lean read holds slim messages instead of the whole file (a 1 GB
 * session needed 1.1 GB). A response is settled when the next response on its side (main chain or
 * sidechain) starts; the messages after it wait until then, so `keep` sees them in file order,
 * which is the session's order when the file has no abandoned branches. The chain then picks the
 * built messages it needs; a message whose lines turn out different from the chain's (a
 * response's line written after the next response began) is not used, and the reader rebuilds
 * every message from the chain's plan instead (`rebuildMessages`).
 */
import type { AnyMessage, ContentBlock, Message, Usage } from '../session/model.js';
import type { AnthropicUsage } from './anthropic-content.js';
import { anthropicUsage } from './anthropic-content.js';
import type { BilledLine } from './claude-code-spend.js';
import { mergeUsage } from './claude-code-spend.js';
import { callKeyOf, nonZeroUsage } from './convert.js';

/** A user or assistant line, parsed; its billing fields are the response's (claude-code-spend.ts). */
export interface ChatLine extends BilledLine {
  readonly role: 'user' | 'assistant';
  readonly uuid: string;
  readonly blocks: ContentBlock[];
  readonly compactSummary: boolean;
  /** Block types this reader does not know, reported if the line is read. */
  readonly unknownTypes: readonly string[];
}

interface Draft {
  id: string;
  role: 'user' | 'assistant';
  blocks: ContentBlock[];
  line: number;
  model: string | null;
  usage: AnthropicUsage | null;
  final: boolean;
  timestamp: string | null;
  readonly callKey: string | null;
  readonly copiedFrom: string | null;
}

function newDraft(chat: ChatLine, line: number): Draft {
  return {
    id: chat.uuid,
    role: chat.role,
    blocks: [...chat.blocks],
    line,
    model: chat.model,
    usage: chat.usage,
    final: chat.final,
    timestamp: chat.timestamp,
    callKey: chat.role === 'assistant' ? (callKeyOf(chat.responseKey, chat.timestamp) ?? null) : null,
    copiedFrom: chat.copiedFrom,
  };
}

/** The field that tells two blocks of a type apart; blocks whose keys differ are different. */
function blockKey(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
    case 'thinking':
      return block.text;
    case 'tool_request':
      return block.id;
    case 'tool_result':
      return block.tool_request_id;
  }
}

/**
 * Whether an equal block (same JSON) is among the first `count`; serializes only blocks with the
 * same key (serializing every block on every merge was most of the merging time).
 */
function hasBlock(blocks: readonly ContentBlock[], count: number, block: ContentBlock): boolean {
  const key = blockKey(block);
  let json: string | undefined;
  for (let index = 0; index < count; index++) {
    const known = blocks[index]!;
    if (known.type !== block.type || blockKey(known) !== key) continue;
    json ??= JSON.stringify(block);
    if (JSON.stringify(known) === json) return true;
  }
  return false;
}

/** A later line of the same response: its new blocks join, its usage replaces a partial one. */
function mergeInto(draft: Draft, chat: ChatLine): void {
  const before = draft.blocks.length;
  for (const block of chat.blocks) if (!hasBlock(draft.blocks, before, block)) draft.blocks.push(block);
  mergeUsage(draft, chat);
}

function toMessage(draft: Draft): Message {
  const usage: Usage | undefined = draft.usage ? nonZeroUsage(anthropicUsage(draft.usage)) : undefined;
  return {
    id: draft.id,
    role: draft.role,
    content: draft.blocks,
    line: draft.line,
    ...(usage ? { usage } : {}),
    ...(draft.model ? { model: draft.model } : {}),
    ...(draft.timestamp ? { timestamp: draft.timestamp } : {}),
    ...(draft.callKey !== null ? { callKey: draft.callKey } : {}),
    ...(draft.copiedFrom !== null && usage ? { copiedFrom: draft.copiedFrom } : {}),
  };
}

interface Pending {
  readonly draft: Draft;
  readonly lines: number[];
  /** A response that may still get lines. */
  open: boolean;
}

/** One side's messages not yet handed over (the oldest open response and what followed it). */
interface Side {
  readonly waiting: Pending[];
  readonly open: Map<string, Pending>;
}

/** Builds messages in file order as lines arrive, handing each to `keep` once it is settled. */
export class MessageAssembler {
  /** What `keep` returned, by the message's first line: what the chain's plan picks from. */
  readonly built = new Map<number, AnyMessage>();
  /**
   * The lines of each message built from more than one (a split response), by its first line;
   * a message of one line has none here (most of them: no array of one line each to hold).
   */
  readonly lines = new Map<number, readonly number[]>();
  private readonly sides: readonly [Side, Side] = [
    { waiting: [], open: new Map() },
    { waiting: [], open: new Map() },
  ];

  constructor(private readonly keep: (message: Message) => AnyMessage = (message) => message) {}

  add(chat: ChatLine, line: number, sidechain: boolean): void {
    const side = this.sides[sidechain ? 1 : 0];
    const key = chat.responseKey;
    const response = key === null ? undefined : side.open.get(key);
    if (response) {
      mergeInto(response.draft, chat);
      response.lines.push(line);
      return;
    }
    // A new response: the ones before it on this side are complete.
    if (key !== null) this.settle(side);
    const pending: Pending = { draft: newDraft(chat, line), lines: [line], open: key !== null };
    side.waiting.push(pending);
    if (key !== null) side.open.set(key, pending);
    this.handOver(side);
  }

  /** The end of the file: every message is settled. */
  finish(): void {
    for (const side of this.sides) {
      this.settle(side);
      this.handOver(side);
    }
  }

  private settle(side: Side): void {
    for (const pending of side.open.values()) pending.open = false;
    side.open.clear();
  }

  private handOver(side: Side): void {
    let settled = 0;
    while (settled < side.waiting.length && !side.waiting[settled]!.open) {
      const { draft, lines } = side.waiting[settled++]!;
      this.built.set(lines[0]!, this.keep(toMessage(draft)));
      // A copy: the array merges pushed to keeps spare room, held until the end of the file.
      if (lines.length > 1) this.lines.set(lines[0]!, lines.slice());
    }
    if (settled > 0) side.waiting.splice(0, settled);
  }
}

function sameLines(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((line, index) => line === b[index]);
}

/**
 * The session's messages from those built while reading, given the chain's plan (the lines of
 * each message, in session order); null when one was built from other lines than planned.
 */
export function pickBuilt(plan: readonly (readonly number[])[], assembler: MessageAssembler): AnyMessage[] | null {
  const messages: AnyMessage[] = [];
  for (const lines of plan) {
    const first = lines[0]!;
    const message = assembler.built.get(first);
    if (!message) return null;
    const builtFrom = assembler.lines.get(first);
    if (builtFrom ? !sameLines(builtFrom, lines) : lines.length !== 1) return null;
    messages.push(message);
  }
  return messages;
}

/** The plan's messages from its lines parsed again (`chats` by line number), merged in plan order. */
export function rebuildMessages(plan: readonly (readonly number[])[], chats: ReadonlyMap<number, ChatLine>): Message[] {
  return plan.map((lines) => {
    const [first, ...rest] = lines;
    const draft = newDraft(chats.get(first!)!, first!);
    for (const line of rest) mergeInto(draft, chats.get(line)!);
    return toMessage(draft);
  });
}
