/**
 * Slim messages: the lean read's light message representation (SlimMessage, session/model.ts).
 * Text and thinking blocks are dropped, tool results keep their id and error flag but not their
 * output (SlimToolResultBlock), and tool requests keep their id, name and only the arguments that name files (what
 * compaction/file-ops reads). Ids, roles, usage, model and lines stay.
 *
 * So everything the core derives from structure works unchanged on slim messages: turns, provider
 * calls, cut points, tool pairing, truncate's role counts and file lists. What needs text takes
 * `Message` and refuses a slim one at compile time: token estimates and prefix hashes are taken
 * from the full message before it is slimmed (read/index.ts keeps them as data).
 */
import type { ContentBlock, Message, SlimBlock, SlimMessage, ToolRequestBlock } from '../session/model.js';
import { TEXT_LEFT_OUT } from '../session/model.js';
import { fileToolKind, PATH_ARGUMENTS, PATCH_FILE_LINE } from '../session/tool-files.js';

/**
 * What a slim message without tool blocks holds: one empty list (32 bytes a message less). Not
 * frozen, and emptied from a list of objects: V8 gives a frozen list, or an empty literal, an
 * elements kind of its own, and the loops over every message's content (cut points' tool checks,
 * replay's hottest) took about 4% more of replay's CPU on the mix (paired runs).
 */
const NO_BLOCKS: readonly SlimBlock[] = emptiedListOfBlocks();

function emptiedListOfBlocks(): SlimBlock[] {
  const list: SlimBlock[] = [{ type: 'tool_result', tool_request_id: '', is_error: false }];
  list.length = 0;
  return list;
}

/** Most tool calls are not file calls: they share one empty, frozen arguments object. */
const NO_ARGUMENTS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The arguments of a file tool call that name its files (one string a path: `names`); nothing for
 * other tools. Calls that name the same files share one object (`kept`): a long session reads and
 * edits the same few files again and again, and an object each took 56 bytes a call.
 */
function fileArguments(block: ToolRequestBlock, names: Interned, kept: SharedObjects<Readonly<Record<string, unknown>>>): Readonly<Record<string, unknown>> {
  // Whether it is a file tool only: its paths are not listed here (the arguments below are kept whole).
  if (fileToolKind(block) === null) return NO_ARGUMENTS;
  const named: Record<string, unknown> = {};
  /** The kept keys and values (JSON strings: nothing else reads as the same), to find an equal object already kept. */
  let key = '';
  for (const [name, value] of Object.entries(block.arguments)) {
    if (typeof value !== 'string') continue;
    // `command` decides whether str_replace_based_edit_tool reads or writes.
    if (PATH_ARGUMENTS.includes(name) || name === 'command') named[name] = names.intern(value);
    else if (value.includes('*** ')) named[name] = [...value.matchAll(PATCH_FILE_LINE)].map((match) => match[0]).join('\n');
    else continue;
    key += JSON.stringify(name) + JSON.stringify(named[name]);
  }
  return kept.get(key, named);
}

/** What a read's slim blocks share: tool names and file paths once each, a result's call id its call's. */
interface Shared {
  readonly names: Interned;
  /** File arguments by their keys and values (fileArguments). */
  readonly fileArguments: SharedObjects<Readonly<Record<string, unknown>>>;
  readonly requestId: (id: string) => string;
}

function slimBlock(block: ContentBlock, shared: Shared): SlimBlock | null {
  switch (block.type) {
    case 'text':
    case 'thinking':
      return null;
    case 'tool_request':
      return { type: 'tool_request', id: block.id, name: shared.names.intern(block.name), arguments: fileArguments(block, shared.names, shared.fileArguments) };
    case 'tool_result':
      return { type: 'tool_result', tool_request_id: shared.requestId(block.tool_request_id), is_error: block.is_error };
  }
}

/** Values a read keeps one copy of, known by a string that tells unequal ones apart, up to a bound (nothing outlives the read). */
class SharedObjects<Value> {
  protected readonly known = new Map<string, Value>();
  constructor(private readonly bound: number) {}

  /** The copy kept of `value` (known by `key`), keeping this one when there is none yet. */
  get(key: string, value: Value): Value {
    const known = this.known.get(key);
    if (known !== undefined) return known;
    if (this.known.size < this.bound) this.known.set(key, value);
    return value;
  }
}

/** Strings a read keeps one copy of, each its own key. */
class Interned extends SharedObjects<string> {
  /** The copy kept of `value`, keeping this one when there is none yet. */
  intern(value: string): string {
    return this.get(value, value);
  }

  /** The copy kept of `value`, which is then forgotten (a call's id, once its result is met). */
  take(value: string): string {
    const known = this.known.get(value);
    if (known === undefined) return value;
    this.known.delete(value);
    return known;
  }
}

/**
 * A call key as one flat string. Readers build it by concatenation (response id, request id and
 * timestamp), and V8 keeps a concatenation as a tree over its parts: about 250 bytes a call key
 * where its characters take 100. Splitting it and joining the parts again gives the same
 * characters in one new string, and frees the tree once the reader drops its parts.
 */
function flatKey(key: string): string {
  return key.split('@').join('@');
}

/** A record filled in field by field: its fields writable. */
type Building<T> = { -readonly [Key in keyof T]: T[Key] };

/** How many keys the message has (own, enumerable, not symbols): which literal fits it. */
function keyCount(message: Message): number {
  let count = 0;
  for (const _ in message) count++;
  return count;
}

/**
 * A slimmer for one read: `slim(message)` is the message without its text (see the header for
 * what stays). Model names, tool names and file paths repeat from message to message, so each
 * read interns them (one string each keeps a long session small); a tool result's call id is its
 * call's string (a read file names each twice, once per line); nothing outlives the read.
 */
export function slimmer(): (message: Message) => SlimMessage {
  const models = new Interned(1000);
  /** The ids of calls not answered yet (a bound keeps a session of unanswered calls small). */
  const calls = new Interned(10_000);
  const shared: Shared = { names: new Interned(10_000), fileArguments: new SharedObjects(10_000), requestId: (id) => calls.take(id) };
  /** The kept blocks of the message being slimmed (one array, reused). */
  const scratch: SlimBlock[] = [];
  return (message) => {
    for (const block of message.content) {
      const kept = slimBlock(block, shared);
      if (kept) scratch.push(kept);
      if (block.type === 'tool_request') calls.intern(block.id);
    }
    // Copied out at its exact size: an array grown by push reserves 17 slots, 150 bytes a message.
    // A message without tool blocks (a prompt, a reply in text) shares one empty list.
    const content = scratch.length === 0 ? NO_BLOCKS : scratch.slice();
    scratch.length = 0;
    const { id, role, line, usage, model, timestamp } = message;
    // The two shapes most messages have (a user line, an assistant response with its call) as
    // literals: V8 then holds every field in the object itself, not in a second array beside it
    // (about 24 bytes a message). The keys stay in the order the general case gives them.
    const keys = 'line' in message ? keyCount(message) : 0;
    if (keys === 5 && timestamp !== undefined) {
      return { id, role, content, line, timestamp, [TEXT_LEFT_OUT]: true } as SlimMessage;
    }
    if (keys === 8 && usage !== undefined && model && timestamp !== undefined && message.callKey !== undefined) {
      return { id, role, content, line, usage, model: models.intern(model), timestamp, callKey: flatKey(message.callKey), [TEXT_LEFT_OUT]: true } as SlimMessage;
    }
    // A response without a call key (the canonical format's): built field by field it kept its
    // last fields in a property array beside it, 64 bytes a response.
    if (keys === 7 && usage !== undefined && model && timestamp !== undefined) {
      return { id, role, content, line, usage, model: models.intern(model), timestamp, [TEXT_LEFT_OUT]: true } as SlimMessage;
    }
    // Built field by field in one order, not spread: V8 gave each spread copy (with `model`
    // replaced) a hidden class of its own once optimized, 300 bytes a message in a long session.
    const slim: Building<SlimMessage> = { id, role, content, line, [TEXT_LEFT_OUT]: true };
    if (usage !== undefined) slim.usage = usage;
    if (model !== undefined) slim.model = model ? models.intern(model) : model;
    if (timestamp !== undefined) slim.timestamp = timestamp;
    if (message.knownTokens !== undefined) slim.knownTokens = message.knownTokens;
    // The message's other fields (callKey, copiedFrom, rendered, a reader's own), by name.
    for (const key in message) if (!(key in slim)) Reflect.set(slim, key, Reflect.get(message, key));
    return slim;
  };
}

/** One message without its text (a slimmer of its own: for a single message, as tests build them). */
export function slimMessage(message: Message): SlimMessage {
  return slimmer()(message);
}
