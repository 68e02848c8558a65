/**
 * Slim messages: the lean read's light message representation (SlimMessage, session/model.ts).
 * Text and thinking blocks are dropped, tool results keep their id and error flag but not their
 * output, and tool requests keep their id, name and only the arguments that name files (what
 * compaction/file-ops reads). Ids, roles, usage, model and lines stay.
 *
 * So everything the core derives from structure works unchanged on slim messages: turns, provider
 * calls, cut points, tool pairing, truncate's role counts and file lists. What needs text takes
 * `Message` and refuses a slim one at compile time: token estimates and prefix hashes are taken
 * from the full message before it is slimmed (read/index.ts keeps them as data).
 */
import type { ContentBlock, Message, SlimBlock, SlimMessage, ToolRequestBlock } from '../session/model.js';
import { TEXT_LEFT_OUT } from '../session/model.js';
import { classifyToolRequest, PATH_ARGUMENTS, PATCH_FILE_LINE } from '../session/tool-files.js';

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

function slimBlock(block: ContentBlock): SlimBlock | null {
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

/**
 * A slimmer for one read: `slim(message)` is the message without its text (see the header for
 * what stays). Model names repeat on every assistant message, so each read interns them (one
 * string each keeps a long session small); nothing outlives the read.
 */
export function slimmer(): (message: Message) => SlimMessage {
  const models = new Map<string, string>();
  const intern = (model: string): string => {
    let known = models.get(model);
    if (known === undefined) {
      if (models.size < 1000) models.set(model, model);
      known = model;
    }
    return known;
  };
  /** The kept blocks of the message being slimmed (one array, reused). */
  const scratch: SlimBlock[] = [];
  return (message) => {
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
    slim[TEXT_LEFT_OUT] = true;
    return slim as unknown as SlimMessage;
  };
}

/** One message without its text (a slimmer of its own: for a single message, as tests build them). */
export function slimMessage(message: Message): SlimMessage {
  return slimmer()(message);
}
