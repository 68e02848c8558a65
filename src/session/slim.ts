/**
 * Slim messages: the lean path's light message representation. A slim message is a `Message`
 * whose text is gone: text and thinking blocks are dropped, tool results keep their id and error
 * flag but not their output, and tool requests keep their id, name and only the arguments that
 * name files (what compaction/file-ops reads). Ids, roles, usage, model and lines stay.
 *
 * So everything the core derives from structure works unchanged on slim messages: turns, provider
 * calls, cut points, tool pairing, truncate's role counts and file lists. What needs text does
 * not: token estimates are taken before slimming (pipeline/load.ts keeps them), and hashes of
 * message prefixes are taken while reading (session/hash.ts remembers them); hashing slim text
 * anywhere else throws rather than produce a wrong sidecar. Serializing for an LLM or building
 * the provider view needs full messages: commands that do that do not use the lean path.
 */
import type { ContentBlock, Message, ToolRequestBlock } from './model.js';
import { classifyToolRequest, PATH_ARGUMENTS, PATCH_FILE_LINE } from './tool-files.js';

/**
 * Marks slim messages. A symbol key (not a WeakSet: a million weak entries slow every garbage
 * collection) that object spread copies along and JSON never shows.
 */
const SLIM = Symbol('slim message');

/** True for a message made by slimMessage (or a spread copy of one): its text is not there to read. */
export function isSlim(message: Message): boolean {
  return (message as { [SLIM]?: true })[SLIM] === true;
}

/** Most tool calls are not file calls: they share one empty, frozen arguments object. */
const NO_ARGUMENTS: Readonly<Record<string, unknown>> = Object.freeze({});

/** The arguments of a file tool call that name its files; nothing for other tools. */
function fileArguments(block: ToolRequestBlock): Readonly<Record<string, unknown>> {
  if (!classifyToolRequest(block)) return NO_ARGUMENTS;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block.arguments)) {
    if (typeof value !== 'string') continue;
    // `command` decides whether str_replace_based_edit_tool reads or writes.
    if (PATH_ARGUMENTS.includes(key) || key === 'command') kept[key] = value;
    else if (value.includes('*** ')) kept[key] = [...value.matchAll(PATCH_FILE_LINE)].map((match) => match[0]).join('\n');
  }
  return kept;
}

function slimBlock(block: ContentBlock): ContentBlock | null {
  switch (block.type) {
    case 'text':
    case 'thinking':
      return null;
    case 'tool_request':
      return { type: 'tool_request', id: block.id, name: block.name, arguments: fileArguments(block) };
    case 'tool_result':
      return { type: 'tool_result', tool_request_id: block.tool_request_id, output: '', is_error: block.is_error };
  }
}

/** Model names repeat on every assistant message; one string each keeps a long session small. */
const internedModels = new Map<string, string>();
function intern(model: string): string {
  let known = internedModels.get(model);
  if (known === undefined) {
    if (internedModels.size < 1000) internedModels.set(model, model);
    known = model;
  }
  return known;
}

/** The kept blocks of the message being slimmed (one array, reused). */
const scratch: ContentBlock[] = [];

/** The message without its text (see the header for what stays). */
export function slimMessage(message: Message): Message {
  for (const block of message.content) {
    const kept = slimBlock(block);
    if (kept) scratch.push(kept);
  }
  // Copied out at its exact size: an array grown by push reserves 17 slots, 150 bytes a message.
  const content = scratch.slice();
  scratch.length = 0;
  // Built field by field in one order, not spread: V8 gave each spread copy (with `model`
  // replaced) a hidden class of its own once optimized, 300 bytes a message in a long session.
  const slim: Record<string | symbol, unknown> = { id: message.id, role: message.role, content, line: message.line };
  if (message.usage !== undefined) slim['usage'] = message.usage;
  if (message.model !== undefined) slim['model'] = message.model ? intern(message.model) : message.model;
  if (message.timestamp !== undefined) slim['timestamp'] = message.timestamp;
  if (message.knownTokens !== undefined) slim['knownTokens'] = message.knownTokens;
  for (const key in message) if (!(key in slim)) slim[key] = (message as unknown as Record<string, unknown>)[key];
  slim[SLIM] = true;
  return slim as unknown as Message;
}
