/**
 * The parent chain of a Claude Code file: every line that can be a link, held until the end of
 * the file, then the current conversation picked from it and planned into messages. What a line
 * says is claude-code.ts's (it parses the lines and hands over what the chain needs); building the
 * messages is claude-code-messages.ts's.
 *
 * A 1 GB session has about 200,000 such lines, so a line is kept in columns (typed arrays of
 * line numbers, parents, flags and response ids) rather than as objects: about 25 bytes a line
 * besides its uuid's entry in the table of uuids (28 bytes: uuid-table.ts), and nothing the
 * garbage collector must trace. The walk and the plan at the end of the file, which run while
 * all of it is still held, keep their lists in typed arrays too.
 * What few lines have (a boundary's facts, a summary, unknown block types, an error) sits in a
 * side table. A parent read before its child is stored as its index; a parent named before it is
 * read is resolved at the end.
 *
 * The rules (README "Formats"): lines are ordered by the parent chain from the newest
 * main-chain line, not by time, following `logicalParentUuid` across compact boundaries; the
 * results of parallel tool calls the chain passes by join it after their response; a file whose
 * uuids repeat keeps its file order.
 */
import type { InputError } from '../errors.js';
import type { Diagnostic } from '../session/model.js';
import type { CallKeys } from './claude-code-call-keys.js';
import { callKey } from './claude-code-spend.js';
import { sortUnlessOrdered } from './convert.js';
import { grown } from './grown.js';
import { UuidTable } from './uuid-table.js';

const NONE: readonly string[] = [];

/**
 * A line's ids as the WebAssembly scanner gives them (claude-code-scanned.ts): a uuid in its usual
 * spelling as four words of `words` (at `uuidAt`, `parentAt`; -1 where the scanner read no such
 * uuid), any other as its string, decoded only when asked for.
 */
export interface ScannedIds {
  readonly words: Int32Array;
  readonly uuidAt: number;
  readonly parentAt: number;
  readonly uuid: string | null;
  readonly parent: string | null;
}

/** What few lines have: kept in a side table. */
export interface RareFacts {
  /** Set on compact boundaries: the message before the boundary (their `parentUuid` is null). */
  readonly logicalParent?: string;
  /** A message line that failed to parse: an error only if it is part of the current chain. */
  readonly invalid?: InputError;
  readonly boundary?: BoundaryFacts;
  /** The summary's text, on an `isCompactSummary` line. */
  readonly summary?: string;
  readonly unknownTypes?: readonly string[];
  /** Tool ids of the other kind than the line's role has (a user line that calls, an assistant line that answers). */
  readonly otherTools?: readonly string[];
}

export interface BoundaryFacts {
  readonly preTokens?: number;
  readonly preservedHead?: string;
}

/** What the chain needs of a user or assistant line. */
export interface ChatFacts {
  readonly role: 'user' | 'assistant';
  /** `message.id` + `requestId`; null when the line has none. */
  readonly responseKey: string | null;
  readonly synthetic: boolean;
  readonly summary?: string;
  readonly unknownTypes: readonly string[];
  /** The ids of the tool calls the line makes. */
  readonly calls: readonly string[];
  /** The ids of the tool calls its results answer. */
  readonly answers: readonly string[];
}

const SIDECHAIN = 1;
const CHAT = 2;
const ASSISTANT = 4;
const SYNTHETIC = 8;
const BOUNDARY = 16;
const INVALID = 32;

/** No `parentUuid`. */
const NO_PARENT = -1;
/** A `parentUuid` no line of the file has. */
const PARENT_MISSING = -2;
/** A `parentUuid` not read yet when the line was (resolved at the end). */
const PARENT_LATER = -3;

/** Room made first (doubled as needed): small, since an archive holds many small sessions, each read with columns of its own. */
const FIRST_CAPACITY = 64;

/** One compaction in the plan: the line that records it (a boundary, or a summary without one). */
export interface PlannedCompaction {
  readonly line: number;
  readonly boundary: BoundaryFacts | undefined;
  readonly atIndex: number;
}

/**
 * Each message's line numbers, in two columns (message `m`'s are `lines[starts[m]]` up to
 * `lines[starts[m + 1]]`): an array of lines a message was about 60 bytes for the one line most
 * messages have, 100,000 of them in a 1 GB session while its whole read is still held.
 */
export class MessageLines {
  constructor(
    private readonly starts: Int32Array,
    private readonly lines: Int32Array,
  ) {}

  get count(): number {
    return this.starts.length - 1;
  }

  first(message: number): number {
    return this.lines[this.starts[message]!]!;
  }

  /** The message's lines: its first line's, then the later lines of its response, in file order. */
  of(message: number): Int32Array {
    return this.lines.subarray(this.starts[message]!, this.starts[message + 1]!);
  }

  /** Every line of every message. */
  all(): Int32Array {
    return this.lines;
  }
}

/** The session's shape, from the chain alone: which lines make each message, and the compactions. */
export interface Plan {
  readonly messages: MessageLines;
  readonly compactions: readonly PlannedCompaction[];
  readonly summaries: ReadonlyMap<number, string>;
  readonly unknownTypes: readonly string[];
  /** Whether the call with this number (CallKeys) is one the messages stand for: the context's part of the spend. */
  readonly inContext: (call: number) => boolean;
}

/** The lines of a file that can be links of the chain, in file order (a line's index is its place here). */
export class ChainLines {
  count = 0;
  private lineNo = new Int32Array(FIRST_CAPACITY);
  private parentAt = new Int32Array(FIRST_CAPACITY);
  private flagsAt = new Uint8Array(FIRST_CAPACITY);
  /** The response's number in `keys` (shared with the spend: the lines of one response and its call name it once), or -1. */
  private responseAt = new Int32Array(FIRST_CAPACITY);
  /** The tool ids of the line's role (calls of an assistant line, answers of a user line): one id as itself. */
  private readonly toolsAt: (string | readonly string[] | null)[] = [];
  /** The first line with each uuid (kept as its 16 bytes: uuid-table.ts). */
  private readonly byUuid = new UuidTable();
  private duplicates = 0;
  private readonly later = new Map<number, string>();
  private readonly rare = new Map<number, RareFacts>();

  constructor(private readonly keys: CallKeys) {}

  /**
   * Whether the messages' ids are unique as read: no uuid repeats and every one is spelled as
   * usual (so none can be a line's own id, `L<line>`, which the rest are).
   */
  get uniqueIds(): boolean {
    return this.duplicates === 0 && this.byUuid.otherKeys === 0;
  }

  /** A line the chain runs through without a message of its own (progress, system, a line that failed to parse). */
  addLink(uuid: string | null, parent: string | null, line: number, sidechain: boolean, rare: RareFacts | null = null): void {
    let flags = sidechain ? SIDECHAIN : 0;
    if (rare?.boundary) flags |= BOUNDARY;
    if (rare?.invalid) flags |= INVALID;
    const index = this.add(line, flags, -1, null, rare);
    this.linkStrings(index, uuid, parent);
  }

  /** addLink of a line the WebAssembly scanner read: its ids as the scanner gives them (ScannedIds). */
  addScannedLink(ids: ScannedIds, line: number, sidechain: boolean): void {
    const index = this.add(line, sidechain ? SIDECHAIN : 0, -1, null, null);
    this.linkScanned(index, ids);
  }

  addChat(uuid: string | null, parent: string | null, line: number, sidechain: boolean, chat: ChatFacts): void {
    this.linkStrings(this.addChatLine(line, sidechain, chat), uuid, parent);
  }

  /** addChat of a line the WebAssembly scanner read (ScannedIds). */
  addScannedChat(ids: ScannedIds, line: number, sidechain: boolean, chat: ChatFacts): void {
    this.linkScanned(this.addChatLine(line, sidechain, chat), ids);
  }

  private addChatLine(line: number, sidechain: boolean, chat: ChatFacts): number {
    const assistant = chat.role === 'assistant';
    const flags = CHAT | (sidechain ? SIDECHAIN : 0) | (assistant ? ASSISTANT : 0) | (chat.synthetic ? SYNTHETIC : 0);
    const own = assistant ? chat.calls : chat.answers;
    const other = assistant ? chat.answers : chat.calls;
    const rare: RareFacts | null =
      chat.summary !== undefined || chat.unknownTypes.length > 0 || other.length > 0
        ? {
            ...(chat.summary !== undefined ? { summary: chat.summary } : {}),
            ...(chat.unknownTypes.length > 0 ? { unknownTypes: chat.unknownTypes } : {}),
            ...(other.length > 0 ? { otherTools: other } : {}),
          }
        : null;
    const response = chat.responseKey === null ? -1 : this.keys.add(chat.responseKey);
    return this.add(line, flags, response, own.length === 0 ? null : own.length === 1 ? own[0]! : own, rare);
  }

  /** The line's columns; its links are set next (linkStrings, linkScanned). */
  private add(line: number, flags: number, response: number, tools: string | readonly string[] | null, rare: RareFacts | null): number {
    const index = this.count++;
    if (index === this.lineNo.length) {
      const length = index * 2;
      this.lineNo = grown(this.lineNo, length);
      this.parentAt = grown(this.parentAt, length);
      this.flagsAt = grown(this.flagsAt, length);
      this.responseAt = grown(this.responseAt, length);
    }
    this.lineNo[index] = line;
    this.flagsAt[index] = flags;
    this.responseAt[index] = response;
    this.toolsAt.push(tools);
    if (rare) this.rare.set(index, rare);
    return index;
  }

  /** The line's parent, then its own uuid (a line naming itself as its parent is not its own parent). */
  private linkStrings(index: number, uuid: string | null, parent: string | null): void {
    if (parent === null) this.parentAt[index] = NO_PARENT;
    else this.parentFound(index, this.byUuid.get(parent), parent);
    if (uuid !== null) this.own(index, this.byUuid.get(uuid), uuid);
  }

  /** linkStrings from the scanner's words where it has them; a string is made only where it has none, or for a parent not read yet. */
  private linkScanned(index: number, ids: ScannedIds): void {
    const { words } = ids;
    if (ids.parentAt >= 0) {
      const known = this.byUuid.getWords(words, ids.parentAt);
      this.parentFound(index, known, known === undefined ? ids.parent! : '');
    } else {
      const parent = ids.parent;
      if (parent === null) this.parentAt[index] = NO_PARENT;
      else this.parentFound(index, this.byUuid.get(parent), parent);
    }
    if (ids.uuidAt >= 0) {
      const at = ids.uuidAt;
      if (this.byUuid.getWords(words, at) !== undefined) this.duplicates++;
      else this.byUuid.setWords(words, at, index);
    } else {
      const uuid = ids.uuid;
      if (uuid !== null) this.own(index, this.byUuid.get(uuid), uuid);
    }
  }

  /** A parent's line as looked up (`known`), or the parent kept to be resolved at the end. */
  private parentFound(index: number, known: number | undefined, parent: string): void {
    if (known === undefined) {
      this.parentAt[index] = PARENT_LATER;
      this.later.set(index, parent);
    } else this.parentAt[index] = known;
  }

  /** The line's own uuid (`known`: the line that has it already, if one does). */
  private own(index: number, known: number | undefined, uuid: string): void {
    if (known !== undefined) this.duplicates++;
    else this.byUuid.set(uuid, index);
  }

  /** Parents named before they were read, now that every line is. */
  private resolveLater(): void {
    for (const [index, parent] of this.later) this.parentAt[index] = this.byUuid.get(parent) ?? PARENT_MISSING;
    this.later.clear();
  }

  line(index: number): number {
    return this.lineNo[index]!;
  }

  private has(index: number, flag: number): boolean {
    return (this.flagsAt[index]! & flag) !== 0;
  }

  isChat(index: number): boolean {
    return this.has(index, CHAT);
  }

  isAssistant(index: number): boolean {
    return this.has(index, CHAT) && this.has(index, ASSISTANT);
  }

  isUser(index: number): boolean {
    return this.has(index, CHAT) && !this.has(index, ASSISTANT);
  }

  sidechain(index: number): boolean {
    return this.has(index, SIDECHAIN);
  }

  /** The response's key, or null for a line without `message.id`. */
  responseKey(index: number): string | null {
    const response = this.responseAt[index]!;
    return response < 0 ? null : this.keys.key(response);
  }

  /** A response's identity: its id, or the line itself (as -1 - index) when it has no `message.id`. */
  responseOf(index: number): number {
    const response = this.responseAt[index]!;
    return response < 0 ? -1 - index : response;
  }

  private tools(index: number, own: boolean): readonly string[] {
    if (!own) return this.rare.get(index)?.otherTools ?? NONE;
    const tools = this.toolsAt[index];
    return tools === null || tools === undefined ? NONE : typeof tools === 'string' ? [tools] : tools;
  }

  calls(index: number): readonly string[] {
    return this.tools(index, this.has(index, ASSISTANT));
  }

  answers(index: number): readonly string[] {
    return this.tools(index, !this.has(index, ASSISTANT));
  }

  private parentOf(index: number): number {
    const parent = this.parentAt[index]!;
    return parent >= 0 ? parent : -1;
  }

  /** The nearest user or assistant line up the parents, through progress and other non-message lines. */
  private nearestChat(index: number): number {
    let next = this.parentOf(index);
    for (let steps = 0; next >= 0 && !this.isChat(next) && steps < this.byUuid.size; steps++) next = this.parentOf(next);
    return next >= 0 && this.isChat(next) ? next : -1;
  }

  /**
   * The lines of the current conversation, oldest first: from the newest main-chain message back
   * along `parentUuid` (across compact boundaries by `logicalParentUuid`), with the results of
   * parallel tool calls it passes by. Files whose uuids are not unique (hand-edited or trimmed
   * fixtures) cannot be chained and keep their file order. The lists here are typed arrays: a
   * 1 GB session has about 200,000 lines on its chain, and this runs while the whole read is
   * still held.
   */
  currentChain(file: string, warnings: Diagnostic[]): { readonly chain: Int32Array; readonly sidechain: boolean } {
    this.resolveLater();
    let leaf = -1;
    let lastAny = -1;
    for (let index = this.count - 1; index >= 0 && leaf < 0; index--) {
      if (!this.has(index, CHAT) && !this.has(index, INVALID)) continue;
      if (lastAny < 0) lastAny = index;
      if (!this.sidechain(index)) leaf = index;
    }
    if (leaf < 0) leaf = lastAny;
    if (leaf < 0) return { chain: new Int32Array(0), sidechain: false };
    const side = this.sidechain(leaf);
    const sameSide = (index: number) => this.sidechain(index) === side && this.has(index, CHAT | BOUNDARY | INVALID);
    if (this.duplicates > 0) {
      warnings.push({ file, message: `${this.duplicates} lines repeat another line's uuid; messages kept in file order` });
      const chain: number[] = [];
      for (let index = 0; index < this.count; index++) if (sameSide(index)) chain.push(index);
      return { chain: Int32Array.from(chain), sidechain: side };
    }
    const walked = this.walkBack(leaf, file, warnings).reverse();
    let length = 0;
    for (const index of walked) if (sameSide(index)) walked[length++] = index;
    return { chain: this.withParallelResults(walked.subarray(0, length), side), sidechain: side };
  }

  /**
   * The lines from `leaf` back to the root of its chain; a chain that loops stops before the first
   * line it meets again. A set of visited lines took most of the chain's time over 200,000 lines,
   * so one is kept only once the walk is longer than the file (then it has met a loop).
   */
  private walkBack(leaf: number, file: string, warnings: Diagnostic[]): Int32Array {
    const up = (index: number): number => {
      const parent = this.parentAt[index]!;
      if (parent !== NO_PARENT) return parent >= 0 ? parent : -1;
      const logical = this.rare.get(index)?.logicalParent;
      return logical === undefined ? -1 : (this.byUuid.get(logical) ?? -1);
    };
    const chain = new Int32Array(this.count + 1);
    let length = 0;
    for (let index = leaf; index >= 0 && length <= this.count; index = up(index)) chain[length++] = index;
    if (length <= this.count) return chain.subarray(0, length);
    const seen = new Uint8Array(this.count);
    length = 0;
    for (let index = leaf; index >= 0 && seen[index] === 0; index = up(index)) {
      seen[index] = 1;
      chain[length++] = index;
    }
    // A boundary's logicalParentUuid may name a line later in a resumed file (real Claude Code
    // files do): that stop is expected. A loop of parentUuid links is a broken file: said.
    const last = chain[length - 1]!;
    if (this.parentAt[last] !== NO_PARENT) warnings.push({ file, line: this.line(last), message: "parentUuid leads back to a later line of the conversation (a cycle); the conversation is read from this line on" });
    return chain.subarray(0, length);
  }

  /**
   * The chain with the parts of parallel tool calls it passes by. One response with N tool calls
   * is N lines, and each result's parent is its own call's line, so the chain from the leaf goes
   * through the last result only; it can also pass by a call's line itself (when the next call's
   * line hangs off an earlier result). So every line of a response on the chain joins it, and a
   * user line off the chain joins when its results answer calls of one response on the chain that
   * nothing on the chain answers, and its parent (through non-message lines) is a line of that
   * response. What joins is placed after the response's last line on the chain, among the results
   * there before the next call, in file order (the order it was written).
   */
  private withParallelResults(chain: Int32Array, sidechain: boolean): Int32Array {
    // Flags and positions by line index, not sets and maps of numbers.
    const onChain = new Uint8Array(this.count);
    for (const index of chain) onChain[index] = 1;
    /** The last position on the chain of each response's lines, by response (responseOf: -1 - index for a line without an id), + 1. */
    const endOfResponse = new Int32Array(this.keys.size);
    const endOfLine = new Map<number, number>();
    const setEnd = (response: number, position: number) => {
      if (response >= 0) endOfResponse[response] = position + 1;
      else endOfLine.set(response, position);
    };
    const endOf = (response: number): number | undefined => {
      if (response < 0) return endOfLine.get(response);
      const end = endOfResponse[response]!;
      return end === 0 ? undefined : end - 1;
    };
    for (let position = 0; position < chain.length; position++) {
      const index = chain[position]!;
      if (this.isAssistant(index)) setEnd(this.responseOf(index), position);
    }
    /** What joins the chain, by the position it joins after. */
    const joining = new Map<number, number[]>();
    let joins = 0;
    const join = (index: number, response: number) => {
      const end = endOf(response)!;
      const parts = joining.get(end);
      if (parts) parts.push(index);
      else joining.set(end, [index]);
      onChain[index] = 1;
      joins++;
    };
    const offChain: number[] = [];
    for (let index = 0; index < this.count; index++) if (this.isChat(index) && this.sidechain(index) === sidechain && onChain[index] === 0) offChain.push(index);
    /** The lines of responses on the chain that join it, in the order they join. */
    const responseParts: number[] = [];
    for (const index of offChain) {
      const key = this.isAssistant(index) ? this.responseAt[index]! : -1;
      if (key >= 0 && endOf(key) !== undefined) {
        join(index, key);
        responseParts.push(index);
      }
    }
    // Only the ids that lines off the chain answer are looked up: tables of every call and
    // answer on the chain (about 35,000 each in a 1 GB session) for the few lines off it.
    const asked = new Set<string>();
    for (const index of offChain) for (const id of this.answers(index)) asked.add(id);
    const callers = new Map<string, number>();
    const answered = new Set<string>();
    const onChainTools = (index: number) => {
      if (!this.isChat(index)) return;
      for (const id of this.calls(index)) if (asked.has(id)) callers.set(id, index);
      for (const id of this.answers(index)) if (asked.has(id)) answered.add(id);
    };
    if (asked.size > 0) {
      for (const index of chain) onChainTools(index);
      for (const index of responseParts) onChainTools(index);
    }
    for (const index of offChain) {
      const answers = this.answers(index);
      const caller = answers.length > 0 ? callers.get(answers[0]!) : undefined;
      if (caller === undefined) continue;
      const response = this.responseOf(caller);
      const answersOthers = (id: string) => {
        const other = callers.get(id);
        return answered.has(id) || other === undefined || this.responseOf(other) !== response;
      };
      const parent = this.nearestChat(index);
      if (answers.some(answersOthers) || parent < 0 || this.responseOf(parent) !== response) continue;
      for (const id of answers) answered.add(id);
      join(index, response);
    }
    if (joins === 0) return chain;
    const joined = new Int32Array(chain.length + joins);
    let length = 0;
    for (let position = 0; position < chain.length; position++) {
      joined[length++] = chain[position]!;
      const parts = joining.get(position);
      if (!parts) continue;
      let next = position + 1;
      while (next < chain.length && this.isUser(chain[next]!)) next++;
      for (const index of [...chain.subarray(position + 1, next), ...parts].sort((a, b) => this.line(a) - this.line(b))) joined[length++] = index;
      position = next - 1;
    }
    return joined;
  }

  /** Which lines make each message of the chain, and the compactions (a line that failed to parse throws here). */
  plan(chain: Int32Array, file: string): Plan {
    /** Each chain position's message, or -1 (a boundary, a synthetic line). */
    const messageAt = new Int32Array(chain.length);
    /** Each message's number of lines, then (below) where its lines start. */
    const starts = new Int32Array(chain.length + 1);
    let messages = 0;
    /** Each response's message + 1, by its number (0: none yet). */
    const byResponse = new Int32Array(this.keys.size);
    const inContext = new Uint8Array(this.keys.size);
    const compactions: PlannedCompaction[] = [];
    const summaries = new Map<number, string>();
    const unknownTypes: string[] = [];
    for (let position = 0; position < chain.length; position++) {
      const index = chain[position]!;
      messageAt[position] = -1;
      const rare = this.rare.get(index);
      const line = this.line(index);
      if (this.has(index, BOUNDARY)) {
        compactions.push({ line, boundary: rare?.boundary, atIndex: messages });
        continue;
      }
      if (this.has(index, INVALID)) throw rare!.invalid!;
      if (this.has(index, SYNTHETIC)) continue;
      const response = this.responseAt[index]!;
      if (this.has(index, ASSISTANT)) {
        const call = response >= 0 ? response : this.keys.find(callKey(null, file, line));
        if (call >= 0) inContext[call] = 1;
      }
      if (rare?.unknownTypes) unknownTypes.push(...rare.unknownTypes);
      const earlier = response >= 0 ? byResponse[response]! - 1 : -1;
      if (earlier >= 0) {
        messageAt[position] = earlier;
        starts[earlier] = starts[earlier]! + 1;
        continue;
      }
      if (rare?.summary !== undefined) {
        summaries.set(messages, rare.summary);
        // A summary with no boundary before it (1.0.x starts a new file with one) is a compaction too.
        if (compactions.at(-1)?.atIndex !== messages) compactions.push({ line, boundary: undefined, atIndex: messages });
      }
      messageAt[position] = messages;
      starts[messages] = 1;
      if (response >= 0) byResponse[response] = messages + 1;
      messages++;
    }
    // Counts into starts, then each message's lines in chain order, then (a response's lines in
    // the order they were written, as they were merged while reading) sorted where they are not.
    let total = 0;
    for (let message = 0; message <= messages; message++) {
      const size = starts[message]!;
      starts[message] = total;
      total += size;
    }
    const lines = new Int32Array(total);
    const filled = starts.slice(0, messages);
    for (let position = 0; position < chain.length; position++) {
      const message = messageAt[position]!;
      if (message < 0) continue;
      lines[filled[message]!] = this.line(chain[position]!);
      filled[message] = filled[message]! + 1;
    }
    const byMessage = new MessageLines(starts.slice(0, messages + 1), lines);
    for (let message = 0; message < messages; message++) {
      const own = byMessage.of(message);
      sortUnlessOrdered(own, (a, b) => a - b);
    }
    return { messages: byMessage, compactions, summaries, unknownTypes, inContext: (call) => call < inContext.length && inContext[call] === 1 };
  }
}
