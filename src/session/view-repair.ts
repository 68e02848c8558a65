/**
 * What our views do with a session's own tool-pairing breakage, the kind no cut can fix, so that
 * every view we build keeps the provider's rules (view-rules.ts). The session is never changed;
 * only the messages we show or send. Pure.
 *
 * Decided over the session's context window (from the agent's own last compaction on), the way
 * the agents themselves repair a history when they resume it:
 * - a call never answered (an interrupted session, the last message still mid-call, a result the
 *   file lost) gets a result of ours right after its message, an error saying no result was
 *   recorded (Codex inserts an "aborted" output, pi an error "No result provided", Claude Code an
 *   error result; none sends the call bare);
 * - a result that comes late (after the next assistant message, or after other content) moves up
 *   into that same message after its call, so it is kept rather than lost;
 * - a result with no call before it in the window, or a second result for one call, is left out
 *   (Codex and Claude Code drop such outputs); a message left with nothing is left out too;
 * - a message with nothing in it (no block, or blank text: a prompt that was only an image, whose
 *   block the reader skipped) is left out, as Claude Code drops blank assistant messages and pi
 *   empty ones;
 * - a call id used by an earlier call gets a new id in the view (`<id>@<n>`), with its result.
 * A result answers the latest earlier call with its id, as the cut point pairs them
 * (compaction/cut-sites.ts insideToolPairs), so cuts never fall between a call and its result and
 * the repair of a span is the repair of the whole window, cut. A result whose call sits before
 * the span is therefore our cut's fault, not the session's: it is left as it is, for the
 * validator to report.
 */
import type { AnyBlock, AnyMessage, ContentBlock, Message, SlimBlock, SlimMessage, ToolRequestBlock, ToolResultBlock } from './model.js';
import { isSlim, TEXT_LEFT_OUT } from './model.js';
import { holdsNothing } from './view-rules.js';

/** The output of the result we add for a call the session never answered. */
export const MISSING_RESULT_OUTPUT = '[no result: the session records no result for this tool call (interrupted or lost)]';

/** Where a block is: its message's index in the session and its index in that message. */
interface BlockAt {
  readonly index: number;
  readonly block: number;
}

/** A call whose result is not where the provider wants it, and the result to put there (null: none recorded). */
interface Answer {
  readonly call: ToolRequestBlock;
  readonly block: number;
  readonly result: BlockAt | null;
}

export interface ViewRepair {
  /** First message of the window the repair was decided over. */
  readonly from: number;
  /**
   * Result blocks not shown where they are: message index → block index → the index of the call
   * message they move to, or -1 when they are left out (no call, or a second result).
   */
  readonly moved: ReadonlyMap<number, ReadonlyMap<number, number>>;
  /** After each call message whose results are not all in place: those calls' results, in call order. */
  readonly answers: ReadonlyMap<number, readonly Answer[]>;
  /** New ids of calls that reuse an earlier call's id (and of their results): `index:block` → id. */
  readonly renamed: ReadonlyMap<string, string>;
  /** Messages with nothing in them, left out. */
  readonly blank: ReadonlySet<number>;
}

const NO_REPAIR: Omit<ViewRepair, 'from'> = { moved: new Map(), answers: new Map(), renamed: new Map(), blank: new Set() };

const at = (index: number, block: number) => `${index}:${block}`;

/** True when the repair changes nothing: the session's pairing is sound. */
export function isSound(repair: ViewRepair): boolean {
  return repair.moved.size === 0 && repair.answers.size === 0 && repair.renamed.size === 0 && repair.blank.size === 0;
}

interface OpenCall {
  readonly index: number;
  readonly block: number;
  /** The call as the view shows it (a copy with its new id when renamed). */
  readonly call: ToolRequestBlock;
  readonly renamed: boolean;
}

/** Decides the repair of messages [from, messages.length): a walk over their structure only (slim messages will do). */
export function planViewRepair(messages: readonly AnyMessage[], from = 0): ViewRepair {
  const moved = new Map<number, Map<number, number>>();
  const answers = new Map<number, Answer[]>();
  const renamed = new Map<string, string>();
  const blank = new Set<number>();
  /** The latest unanswered call with each id (the one a result with that id answers). */
  const open = new Map<string, OpenCall>();
  const usedIds = new Set<string>();
  /** The assistant message whose results may still follow in place, or -1. */
  let runOwner = -1;

  const move = (index: number, block: number, to: number) => {
    let blocks = moved.get(index);
    if (!blocks) moved.set(index, (blocks = new Map()));
    blocks.set(block, to);
  };
  const answer = (call: OpenCall, result: BlockAt | null) => {
    let list = answers.get(call.index);
    if (!list) answers.set(call.index, (list = []));
    list.push({ call: call.call, block: call.block, result });
  };

  for (let index = from; index < messages.length; index++) {
    const message = messages[index]!;
    // A blank message is not in the view: it neither opens nor ends a run of results.
    if (holdsNothing(message)) {
      blank.add(index);
      continue;
    }
    if (message.role === 'assistant') runOwner = index;
    message.content.forEach((block, position) => {
      if (block.type === 'tool_request' && message.role === 'assistant') {
        const earlier = open.get(block.id);
        // An earlier call with this id and no result yet never gets one: the id now means this call.
        if (earlier) answer(earlier, null);
        let id = block.id;
        for (let n = 2; usedIds.has(id); n++) id = `${block.id}@${n}`;
        usedIds.add(id);
        if (id !== block.id) renamed.set(at(index, position), id);
        open.set(block.id, { index, block: position, call: id === block.id ? block : { ...block, id }, renamed: id !== block.id });
        return;
      }
      if (block.type !== 'tool_result' || message.role !== 'user') {
        // Other content ends the results that may follow a call message in place.
        if (message.role !== 'assistant') runOwner = -1;
        return;
      }
      const call = open.get(block.tool_request_id);
      if (!call) {
        move(index, position, -1);
        return;
      }
      open.delete(block.tool_request_id);
      if (call.renamed) renamed.set(at(index, position), call.call.id);
      if (runOwner === call.index) return;
      move(index, position, call.index);
      answer(call, { index, block: position });
    });
  }
  for (const call of open.values()) answer(call, null);
  for (const list of answers.values()) list.sort((a, b) => a.block - b.block);
  if (moved.size === 0 && answers.size === 0 && renamed.size === 0 && blank.size === 0) return { from, ...NO_REPAIR };
  return { from, moved, answers, renamed, blank };
}

function withId<B extends AnyBlock>(block: B, id: string | undefined): B {
  if (id === undefined) return block;
  if (block.type === 'tool_request') return { ...block, id };
  if (block.type === 'tool_result') return { ...block, tool_request_id: id };
  return block;
}

function missingResult(call: ToolRequestBlock): ToolResultBlock {
  return { type: 'tool_result', tool_request_id: call.id, output: MISSING_RESULT_OUTPUT, is_error: true };
}

/** The id of the message of results we add after a call message. */
export function answersMessageId(callMessage: AnyMessage): string {
  return `${callMessage.id}#results`;
}

/**
 * Messages session[start, start + span.length), given as `span` (the session's messages, or
 * copies with the same blocks: redacted, filtered, pruned), with `repair` applied. `end`: where
 * the session stands (replay's earlier call); a result at or after it has not happened yet.
 * Messages the repair leaves alone are returned as they are (the same objects).
 */
export function applyViewRepair<M extends AnyMessage>(span: readonly M[], start: number, repair: ViewRepair, end = Infinity): (M | Message)[] {
  if (isSound(repair)) return [...span];
  const out: (M | Message)[] = [];
  repairInto(span, start, repair, end, (message) => out.push(message));
  return out;
}

/**
 * applyViewRepair, in two parts: what comes from the session before message `split` (results
 * moved up to a call before it included), and what comes from it on. The summarizer gets a split
 * turn's prefix apart from the history: a repair of each alone could not move a result across.
 */
export function applyViewRepairSplit<M extends AnyMessage>(
  span: readonly M[],
  start: number,
  repair: ViewRepair,
  split: number,
  end = Infinity,
): [(M | Message)[], (M | Message)[]] {
  const before: (M | Message)[] = [];
  const after: (M | Message)[] = [];
  if (isSound(repair)) return [span.slice(0, split - start), span.slice(split - start)];
  repairInto(span, start, repair, end, (message, from) => (from < split ? before : after).push(message));
  return [before, after];
}

/** Hands each message of the repaired span to `emit`, with the index of the session message it comes from. */
function repairInto<M extends AnyMessage>(
  span: readonly M[],
  start: number,
  repair: ViewRepair,
  end: number,
  emit: (message: M | Message, from: number) => void,
): void {
  const stop = start + span.length;
  const messageAt = (index: number) => span[index - start]!;
  span.forEach((message, offset) => repairOne(message, start + offset, start, stop, repair, end, messageAt, emit));
}

/**
 * The repair of one message of a span [start, stop): what it becomes in the view (nothing, itself
 * or a copy) and the results added after it. `messageAt` gives a later message of the span, whose
 * result moved up to this message's calls (repairNeeds says which).
 */
function repairOne<M extends AnyMessage>(
  message: M,
  index: number,
  start: number,
  stop: number,
  repair: ViewRepair,
  end: number,
  messageAt: (index: number) => M,
  emit: (message: M | Message, from: number) => void,
): void {
  if (repair.blank.has(index)) return;
  const moved = repair.moved.get(index);
  const renames = repair.renamed.size > 0 && message.content.some((_, block) => repair.renamed.has(at(index, block)));
  if (!moved && !renames) emit(message, index);
  else {
    const content: AnyBlock[] = [];
    message.content.forEach((block, position) => {
      const to = moved?.get(position);
      // Moved to a call outside the span: our cut separated them; left for the validator to see.
      if (to !== undefined && (to === -1 || to >= start)) return;
      content.push(withId(block, repair.renamed.get(at(index, position))));
    });
    // Blocks moved or renamed, none changed: a slim message stays one.
    const rebuilt = { ...message, content } as M;
    if (content.length > 0 && !holdsNothing(rebuilt)) emit(rebuilt, index);
  }
  const answers = repair.answers.get(index);
  if (!answers) return;
  // The results moved up: a full message of them, or a slim one when any comes from a slim message.
  const blocks: SlimBlock[] = [];
  let full: ContentBlock[] | null = [];
  let slimSource: M | null = null;
  for (const answer of answers) {
    const result = answer.result;
    if (!result || result.index >= end) {
      const missing = missingResult(answer.call);
      blocks.push(missing);
      full?.push(missing);
    } else if (result.index < stop) {
      const source = messageAt(result.index);
      const renamed = repair.renamed.get(at(result.index, result.block));
      if (isSlim(source)) {
        const block = source.content[result.block];
        if (block?.type === 'tool_result') blocks.push(withId(block, renamed));
        full = null;
        slimSource = source;
      } else {
        const block = source.content[result.block];
        if (block?.type !== 'tool_result') continue;
        const moved = withId(block, renamed);
        blocks.push(moved);
        full?.push(moved);
      }
    }
    // A result after the span but before `end`: our cut separated them; the validator will say so.
  }
  if (blocks.length === 0) return;
  const head = { id: answersMessageId(message), role: 'user', line: message.line } as const;
  if (full) emit({ ...head, content: full }, index);
  else if (slimSource) {
    const results: SlimMessage = { ...head, content: blocks, [TEXT_LEFT_OUT]: true };
    // A slim message of the span (slimSource) is an M: so M takes a slim one.
    emit(results as M, index);
  }
}

/** The last message of [index, stop) whose blocks the repair of message `index` reads (a result moved up to it), or `index`. */
function repairNeeds(repair: ViewRepair, index: number, stop: number): number {
  let last = index;
  for (const answer of repair.answers.get(index) ?? []) {
    if (answer.result && answer.result.index < stop) last = Math.max(last, answer.result.index);
  }
  return last;
}

/** A repaired span fed one message at a time: see repairStream. */
export interface RepairStream<M extends AnyMessage> {
  /** The span's message at `index` (in order, from `start`). */
  push(message: M, index: number): void;
  /** How many messages are held, waiting for a later result or to be shown. */
  readonly holding: number;
}

/**
 * applyViewRepair over span [start, stop) whose messages come one at a time, in order: each
 * repaired message goes to `emit` as soon as the results moved up to it have come too. Only
 * the messages between a call and its late result are held; the rest pass straight through, so
 * a view can be written as the session is read again (`context`).
 */
export function repairStream<M extends AnyMessage>(
  start: number,
  stop: number,
  repair: ViewRepair,
  emit: (message: M | Message, from: number) => void,
): RepairStream<M> {
  const held = new Map<number, M>();
  let next = start;
  let last = start - 1;
  const messageAt = (index: number) => held.get(index)!;
  return {
    push(message, index) {
      if (index !== last + 1) throw new Error(`repairStream: message ${index} after ${last}`);
      last = index;
      if (isSound(repair)) {
        emit(message, index);
        next = index + 1;
        return;
      }
      held.set(index, message);
      while (next <= last && repairNeeds(repair, next, stop) <= last) {
        repairOne(held.get(next)!, next, start, stop, repair, Infinity, messageAt, emit);
        // Results move up only: no message after `next` reads its blocks.
        held.delete(next);
        next++;
      }
    },
    get holding() {
      return held.size;
    },
  };
}
