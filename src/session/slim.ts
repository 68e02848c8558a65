/**
 * Slim messages: the lean path's light message representation. A slim message is a `Message`
 * whose text is gone: text and thinking blocks are dropped, tool results keep their id and error
 * flag but not their output, and tool requests keep their id, name and only the arguments that
 * name files (what compaction/file-ops reads). Ids, roles, usage, model and lines stay.
 *
 * So everything the core derives from structure works unchanged on slim messages: turns, provider
 * calls, cut points, tool pairing, truncate's role counts and file lists. What needs text does
 * not: token estimates are taken before slimming (commands/load.ts keeps them), and hashes of
 * message prefixes are taken while reading (session/hash.ts remembers them); hashing slim text
 * anywhere else throws rather than produce a wrong sidecar. Serializing for an LLM or building
 * the provider view needs full messages: commands that do that do not use the lean path.
 */
import { classifyToolRequest, PATCH_FILE_LINE, PATH_ARGUMENTS } from '../compaction/file-ops.js';
import type { ContentBlock, Message, ToolRequestBlock } from './model.js';

/**
 * Marks slim messages. A symbol key (not a WeakSet: a million weak entries slow every garbage
 * collection) that object spread copies along and JSON never shows.
 */
const SLIM = Symbol('slim message');

/** True for a message made by slimMessage (or a spread copy of one): its text is not there to read. */
export function isSlim(message: Message): boolean {
  return (message as { [SLIM]?: true })[SLIM] === true;
}

/** The arguments of a file tool call that name its files; nothing for other tools. */
function fileArguments(block: ToolRequestBlock): Record<string, unknown> {
  if (!classifyToolRequest(block)) return {};
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

/** The message without its text (see the header for what stays). */
export function slimMessage(message: Message): Message {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    const kept = slimBlock(block);
    if (kept) content.push(kept);
  }
  // The mark goes first: a key added after a spread gives every object its own hidden class in
  // V8 (measured: 26 MB of them for 97,000 slim messages); overriding spread keys does not.
  return {
    [SLIM]: true,
    ...message,
    // A pushed-to array keeps room for 17 elements; a copy is exact (13 MB over 97,000 messages).
    content: content.slice(),
    ...(message.model ? { model: intern(message.model) } : {}),
  } as Message;
}
