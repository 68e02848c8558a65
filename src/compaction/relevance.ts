/**
 * The relevance filter (drop what adds nothing, decided by rules, not a model): before a span is summarized, tool
 * outputs that add nothing are replaced by a one-line note, and the sidecar lists them. Pure.
 *
 * Dropped: a file read superseded by a later successful read of the same file with the same
 * range (or the whole file), and an output identical to an earlier one in the span. Never
 * dropped: an output that reports a failure (facts.ts `carriesError`), or one no longer than
 * the note that would replace it. The summarizer sees the note; the session is not changed.
 */
import type { AnyMessage, ContentBlock, Message, ToolRequestBlock, ToolResultBlock } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { heuristicCounter } from '../tokens/estimate.js';
import { carriesError, toolRequestsById } from './facts.js';
import { classifyToolRequest } from '../session/tool-files.js';

export type DropReason = 'superseded-read' | 'duplicate-output';

/** One output kept from the summarizer, as the sidecar records it (snake_case: on disk). */
export interface DroppedOutput {
  readonly tool_request_id: string;
  readonly message_id: string;
  readonly tool: string;
  readonly reason: DropReason;
  /** The call that makes it redundant: the later read, or the first identical output. */
  readonly kept_tool_request_id: string;
  /** Estimated tokens of the dropped output. */
  readonly tokens: number;
}

export interface FilteredSpan {
  /** The span's messages, with dropped outputs replaced by their note. */
  readonly messages: Message[];
  readonly dropped: DroppedOutput[];
}

/** Argument keys that name a file rather than a range of it. */
const PATH_KEYS = new Set(['path', 'file_path', 'filePath', 'filepath', 'notebook_path', 'filename', 'file']);

/** A read's range: its arguments other than the path, in a stable form ('' = the whole file). */
function readRange(request: ToolRequestBlock): string {
  const range = Object.entries(request.arguments)
    .filter(([key]) => !PATH_KEYS.has(key))
    .sort(([a], [b]) => a.localeCompare(b));
  return range.length === 0 ? '' : JSON.stringify(range);
}

interface ReadOfFile {
  readonly path: string;
  readonly range: string;
}

/** A successful single-file read, or null. */
function readOf(request: ToolRequestBlock | undefined, result: ToolResultBlock): ReadOfFile | null {
  if (!request) return null;
  const op = classifyToolRequest(request);
  // The cheap test first: error patterns are costly, and most results are not reads.
  if (op?.kind !== 'read' || op.paths.length !== 1 || carriesError(result, request)) return null;
  return { path: op.paths[0]!, range: readRange(request) };
}

export function droppedNote(drop: Pick<DroppedOutput, 'reason' | 'kept_tool_request_id'>, path?: string): string {
  return drop.reason === 'superseded-read'
    ? `[output dropped: ${path ?? 'the file'} is read again later (${drop.kept_tool_request_id})]`
    : `[output dropped: identical to the output of ${drop.kept_tool_request_id}]`;
}

interface ResultAt {
  readonly index: number;
  readonly block: ToolResultBlock;
}

function resultsIn(messages: readonly Message[], from: number, to: number): ResultAt[] {
  const results: ResultAt[] = [];
  for (let index = from; index < to; index++) {
    for (const block of messages[index]!.content) if (block.type === 'tool_result') results.push({ index, block });
  }
  return results;
}

/**
 * The rest of the session the filter reads: messages before `end` (the session so far), and the
 * tool call each result answers, as toolRequestsById(messages.slice(0, end)) would find it.
 */
export interface RelevanceScope {
  readonly end: number;
  readonly requestOf: (toolRequestId: string) => ToolRequestBlock | undefined;
}

/** The scope of all of `messages`: the filter's default. */
export function wholeSession(messages: readonly AnyMessage[]): RelevanceScope {
  const requests = toolRequestsById(messages);
  return { end: messages.length, requestOf: (id) => requests.get(id) };
}

/**
 * Filters messages [from, to). Reads are superseded by later reads anywhere in the scope (the
 * kept part shows the file too); duplicates only count within the span, because an earlier copy
 * outside it is already summarized and may not survive in the summary. `scope` defaults to all of
 * `messages`; replay passes the session as of its simulated call, indexed (session-index.ts).
 */
export function filterRelevant(
  messages: readonly Message[],
  from: number,
  to: number,
  count: TextCounter = heuristicCounter,
  scope: RelevanceScope = wholeSession(messages),
): FilteredSpan {
  const { requestOf } = scope;
  const notes = new Map<string, { drop: DroppedOutput; note: string }>();
  const consider = (at: ResultAt, reason: DropReason, keptId: string, path?: string) => {
    const request = requestOf(at.block.tool_request_id);
    const drop: DroppedOutput = {
      tool_request_id: at.block.tool_request_id,
      message_id: messages[at.index]!.id,
      tool: request?.name ?? 'unknown',
      reason,
      kept_tool_request_id: keptId,
      tokens: count(at.block.output),
    };
    const note = droppedNote(drop, path);
    if (note.length < at.block.output.length) notes.set(drop.tool_request_id, { drop, note });
  };

  // Superseded reads: walk from the end, remembering the latest successful read of each file and range.
  const latestRead = new Map<string, string>();
  const everything = resultsIn(messages, from, scope.end);
  for (let i = everything.length - 1; i >= 0; i--) {
    const at = everything[i]!;
    const read = readOf(requestOf(at.block.tool_request_id), at.block);
    if (!read) continue;
    const later = latestRead.get(`${read.path}\u0000${read.range}`) ?? latestRead.get(`${read.path}\u0000`);
    if (later && at.index < to) consider(at, 'superseded-read', later, read.path);
    // Keep the latest read of each file and range, so every superseded one names the read that stays.
    const key = `${read.path}\u0000${read.range}`;
    if (!latestRead.has(key)) latestRead.set(key, at.block.tool_request_id);
  }

  // Duplicates: the first copy in the span stays, later identical outputs go. An output found
  // once in the span neither goes nor keeps another, so its (costly) error check is skipped.
  const span = resultsIn(messages, from, to);
  const copies = new Map<string, number>();
  for (const at of span) copies.set(at.block.output, (copies.get(at.block.output) ?? 0) + 1);
  const firstCopy = new Map<string, string>();
  for (const at of span) {
    if (copies.get(at.block.output) === 1) continue;
    if (notes.has(at.block.tool_request_id) || carriesError(at.block, requestOf(at.block.tool_request_id))) continue;
    const first = firstCopy.get(at.block.output);
    if (first) consider(at, 'duplicate-output', first);
    else firstCopy.set(at.block.output, at.block.tool_request_id);
  }

  const rewrite = (block: ContentBlock): ContentBlock => {
    if (block.type !== 'tool_result') return block;
    const dropped = notes.get(block.tool_request_id);
    return dropped ? { ...block, output: dropped.note } : block;
  };
  const filtered = messages.slice(from, to).map((message) =>
    message.content.some((block) => block.type === 'tool_result' && notes.has(block.tool_request_id))
      ? { ...message, content: message.content.map(rewrite) }
      : message,
  );
  // In session order, whatever order the two passes found them in.
  const dropped = span.flatMap((at) => notes.get(at.block.tool_request_id)?.drop ?? []);
  return { messages: filtered, dropped };
}
