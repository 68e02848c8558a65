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
import type { MessageLines } from './claude-code-chain.js';
import type { BilledLine } from './claude-code-spend.js';
import { mergeUsage } from './claude-code-spend.js';
import { callKeyOf, nonZeroUsage } from './convert.js';
import { grown } from './grown.js';

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

/**
 * The draft's message. Its optional fields are set one by one, in the order they are declared:
 * spread in, each was an object made and copied (a few per message, over every message read).
 */
function toMessage(draft: Draft): Message {
  const usage: Usage | undefined = draft.usage ? nonZeroUsage(anthropicUsage(draft.usage)) : undefined;
  const message: { -readonly [Key in keyof Message]: Message[Key] } = { id: draft.id, role: draft.role, content: draft.blocks, line: draft.line };
  if (usage) message.usage = usage;
  if (draft.model) message.model = draft.model;
  if (draft.timestamp) message.timestamp = draft.timestamp;
  if (draft.callKey !== null) message.callKey = draft.callKey;
  if (draft.copiedFrom !== null && usage) message.copiedFrom = draft.copiedFrom;
  return message;
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

/** Room made first (doubled as needed): small, since an archive holds many small sessions, each read with columns of its own. */
const FIRST_CAPACITY = 64;

/**
 * Builds messages in file order as lines arrive, handing each to `keep` once it is settled. What
 * `keep` returned is kept in the order handed over, with the lines each was built from in two
 * columns (message `m`'s are `lines[starts[m]]` up to `lines[starts[m + 1]]`): a map by first
 * line and an array of lines for each split response were about 50 bytes a message.
 */
export class MessageAssembler {
  private readonly built: AnyMessage[] = [];
  private starts = new Int32Array(FIRST_CAPACITY);
  private lines = new Int32Array(FIRST_CAPACITY);
  private lineCount = 0;
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
      const message = this.built.push(this.keep(toMessage(draft))) - 1;
      if (message + 1 >= this.starts.length) this.starts = grown(this.starts, 2 * this.starts.length);
      if (this.lineCount + lines.length > this.lines.length) this.lines = grown(this.lines, Math.max(2 * this.lines.length, this.lineCount + lines.length));
      this.lines.set(lines, this.lineCount);
      this.lineCount += lines.length;
      this.starts[message + 1] = this.lineCount;
    }
    if (settled > 0) side.waiting.splice(0, settled);
  }

  /**
   * The session's messages from those built while reading, given the chain's plan (the lines of
   * each message, in session order); null when one was built from other lines than planned.
   * The plan mostly follows the order they were built in (a chain runs down the file); a message
   * found elsewhere is looked up by its first line.
   */
  pick(plan: MessageLines): AnyMessage[] | null {
    const messages: AnyMessage[] = [];
    let atLine: Int32Array | null = null;
    let next = 0;
    for (let planned = 0; planned < plan.count; planned++) {
      const first = plan.first(planned);
      let message = next < this.built.length && this.firstLine(next) === first ? next : -1;
      if (message < 0) {
        atLine ??= this.byFirstLine();
        message = first < atLine.length ? atLine[first]! : -1;
        if (message < 0) return null;
      }
      if (!sameLines(this.lines.subarray(this.starts[message]!, this.starts[message + 1]!), plan.of(planned))) return null;
      messages.push(this.built[message]!);
      next = message + 1;
    }
    return messages;
  }

  private firstLine(message: number): number {
    return this.lines[this.starts[message]!]!;
  }

  /** Each message by its first line (-1 where none starts). */
  private byFirstLine(): Int32Array {
    let last = 0;
    for (let message = 0; message < this.built.length; message++) last = Math.max(last, this.firstLine(message));
    const atLine = new Int32Array(last + 1).fill(-1);
    for (let message = 0; message < this.built.length; message++) atLine[this.firstLine(message)] = message;
    return atLine;
  }
}

function sameLines(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/** The plan's messages from its lines parsed again (`chats` by line number), merged in plan order. */
export function rebuildMessages(plan: MessageLines, chats: ReadonlyMap<number, ChatLine>): Message[] {
  const messages: Message[] = [];
  for (let planned = 0; planned < plan.count; planned++) {
    const [first, ...rest] = plan.of(planned);
    const draft = newDraft(chats.get(first!)!, first!);
    for (const line of rest) mergeInto(draft, chats.get(line)!);
    messages.push(toMessage(draft));
  }
  return messages;
}
