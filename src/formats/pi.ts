/**
 * pi sessions (`~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`), versions 1 to 3:
 * a `session` header, then entries. See README "Formats". The traps handled here:
 *
 * - v1 is a linear list without ids (messages get `L<line>` ids) and its compactions name the
 *   first kept entry by index (`firstKeptEntryIndex`, counting the header as 0); v2 and v3 are
 *   a tree (`id`, `parentId`): the current branch runs from the last entry back to the root;
 * - a compaction entry becomes the agent's summary message (a user message, as pi sends it)
 *   and a recorded compaction keeping from `firstKeptEntryId`, written before the entry;
 * - aborted and errored assistant messages are left out: pi drops them from the context, and their
 *   tool calls never got results; one with usage was billed all the same (spend only, `aborted`);
 * - the calls of a branch left behind (v2/v3 entries off the current branch) are spend only
 *   (`abandoned-branch`);
 * - a fork (a header naming `parentSession`, v1 `branchedFrom`) starts with copies of its parent's
 *   entries, written verbatim after the header, so with their own older timestamps: their calls
 *   were billed in the parent, so they are context here, not spend (Message.copiedFrom), and an
 *   off-branch copy is neither;
 * - usage `{input, output, cacheRead, cacheWrite}` is read part by part, so a `totalTokens` of 0
 *   in older files does not matter; `toolResult` messages become tool results of a user message.
 *
 * Each entry's message goes to ReadOptions.keep as it is read; the branch is picked at the end
 * from the entries' ids, and an entry pi could not have sent fails only if it is on the branch.
 */
import * as z from 'zod';
import { InputError } from '../errors.js';
import type { AnyMessage, ContentBlock, Diagnostic, Message, OffContextCall, RecordedCompaction, Session, Usage } from '../session/model.js';
import { asRecord, callKeyOf, lastModel, lineId, nonZeroUsage, outputText, parseLine, partsText, toolArguments, tokenCount, withUniqueIds } from './convert.js';
import { forEachJsonLine } from './jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

const entrySchema = z.looseObject({
  type: z.string(),
  id: z.string().nullish(),
  parentId: z.string().nullish(),
  timestamp: z.string().nullish(),
});
type EntryLine = z.infer<typeof entrySchema>;

const messageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
});

/**
 * An entry as kept while reading: its place in the tree and what it became, never its raw text
 * (a session is read once, and its messages go to ReadOptions.keep as they are read). Its index
 * in the file's entry list (header = 0) is what v1 compactions count.
 */
interface Entry {
  readonly line: number;
  readonly type: string;
  readonly id: string | null;
  readonly parentId: string | null;
  /** What the model saw of it: a message (as `keep` returned it), or null. */
  readonly message: AnyMessage | null;
  /** An entry pi cannot have sent: the error, thrown only if the entry is on the current branch. */
  readonly error: InputError | null;
  /** Compaction entries only: what the recorded compaction needs. */
  readonly compaction: { readonly summary: string; readonly keptId: unknown; readonly keptIndex: unknown; readonly tokensBefore: number | undefined } | null;
  /** An assistant message with usage: the call it stands for, whether or not the context holds it. */
  readonly call: BilledCall | null;
}

/** An assistant entry's call, as billed. */
interface BilledCall {
  readonly usage: Usage;
  readonly model?: string;
  readonly timestamp?: string;
  readonly callKey?: string;
  /** An aborted or errored reply: left out of the context, billed all the same. */
  readonly dropped: boolean;
  /** A fork's copy of its parent's call (billed there): the parent, as the header names it. */
  readonly copiedFrom?: string;
}

/** What the header says about where the session came from: a fork's parent, and when the fork was made. */
interface Origin {
  readonly parent: string;
  readonly forkedAt: string;
}

const SKIPPED_STOP_REASONS = new Set(['aborted', 'error']);

function assistantBlocks(content: readonly Record<string, unknown>[], file: string, line: number): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const block of content) {
    if (block['type'] === 'text' && typeof block['text'] === 'string') blocks.push({ type: 'text', text: block['text'] });
    else if (block['type'] === 'thinking') blocks.push({ type: 'thinking', text: typeof block['thinking'] === 'string' ? block['thinking'] : '' });
    else if (block['type'] === 'toolCall') {
      if (typeof block['id'] !== 'string' || typeof block['name'] !== 'string') {
        throw new InputError('message.content: a toolCall needs a string id and name', file, line);
      }
      blocks.push({ type: 'tool_request', id: block['id'], name: block['name'], arguments: toolArguments(block['arguments']) });
    }
  }
  return blocks;
}

function textMessage(id: string, role: 'user' | 'system', text: string, line: number, timestamp?: string | null): Message {
  return { id, role, content: text === '' ? [] : [{ type: 'text', text }], line, ...(timestamp ? { timestamp } : {}) };
}

/** An assistant message's call, when its usage is not all zero (aborted replies often report none). */
function billedCall(message: Record<string, unknown>, timestamp: string | null | undefined, copiedFrom: string | undefined): BilledCall | null {
  const usage = asRecord(message['usage']);
  const counted = usage
    ? nonZeroUsage({
        input: tokenCount(usage['input']) ?? 0,
        output: tokenCount(usage['output']) ?? 0,
        cacheRead: tokenCount(usage['cacheRead']) ?? 0,
        cacheWrite: tokenCount(usage['cacheWrite']) ?? 0,
      })
    : undefined;
  if (!counted) return null;
  const model = typeof message['model'] === 'string' ? message['model'] : undefined;
  const callKey = callKeyOf(message['responseId'], timestamp);
  return {
    usage: counted,
    dropped: SKIPPED_STOP_REASONS.has(String(message['stopReason'])),
    ...(model ? { model } : {}),
    ...(timestamp ? { timestamp } : {}),
    ...(callKey ? { callKey } : {}),
    ...(copiedFrom ? { copiedFrom } : {}),
  };
}

/** A `message` entry as the model saw it (null for what pi leaves out of the context), and its call. */
function convertMessage(value: EntryLine, line: number, id: string, file: string, copiedFrom: string | undefined): { message: Message | null; call: BilledCall | null } {
  const message = parseLine(messageSchema, value['message'], file, line, { where: ['message'] });
  const timestamp = value.timestamp;
  const only = (converted: Message | null) => ({ message: converted, call: null });
  switch (message.role) {
    case 'user':
      return only(textMessage(id, 'user', partsText(message.content ?? ''), line, timestamp));
    case 'assistant': {
      const call = billedCall(message, timestamp, copiedFrom);
      if (SKIPPED_STOP_REASONS.has(String(message['stopReason']))) return { message: null, call };
      const model = typeof message['model'] === 'string' ? message['model'] : undefined;
      const content = Array.isArray(message.content) ? message.content : [];
      return {
        message: {
          id,
          role: 'assistant',
          content: assistantBlocks(content, file, line),
          line,
          ...(call ? { usage: call.usage } : {}),
          ...(model ? { model } : {}),
          ...(timestamp ? { timestamp } : {}),
          ...(call?.callKey ? { callKey: call.callKey } : {}),
          ...(call?.copiedFrom ? { copiedFrom: call.copiedFrom } : {}),
        },
        call,
      };
    }
    case 'toolResult': {
      const callId = message['toolCallId'];
      if (typeof callId !== 'string') throw new InputError('message.toolCallId: expected a string', file, line);
      return only({
        id,
        role: 'user',
        content: [{ type: 'tool_result', tool_request_id: callId, output: outputText(message.content), is_error: message['isError'] === true }],
        line,
        ...(timestamp ? { timestamp } : {}),
      });
    }
    case 'bashExecution': {
      // A command the user ran with `!`; pi sends it with its output unless told not to.
      if (message['excludeFromContext'] === true) return only(null);
      const text = `Ran \`${String(message['command'] ?? '')}\`\n${String(message['output'] ?? '')}`;
      return only(textMessage(id, 'user', text, line, timestamp));
    }
    case 'custom':
    case 'hookMessage':
      return only(textMessage(id, 'user', partsText(message.content ?? ''), line, timestamp));
    case 'branchSummary':
    case 'compactionSummary':
      return only(textMessage(id, 'user', String(message['summary'] ?? ''), line, timestamp));
    default:
      return only(null);
  }
}

/** The message an entry line stands for (any branch), or null, and the call an assistant message stands for. */
function entryMessage(value: EntryLine, line: number, file: string, copiedFrom: string | undefined): { message: Message | null; call: BilledCall | null } {
  const id = value.id ?? lineId(line);
  const only = (message: Message | null) => ({ message, call: null });
  switch (value.type) {
    case 'message':
      return convertMessage(value, line, id, file, copiedFrom);
    case 'compaction':
    case 'branch_summary':
      return only(textMessage(id, 'user', String(value['summary'] ?? ''), line, value.timestamp));
    case 'custom_message':
      return only(textMessage(id, 'user', partsText(value['content'] ?? ''), line, value.timestamp));
    default:
      return only(null);
  }
}

/**
 * The parent a fork's entry was copied from: pi writes a fork's header when it makes the fork,
 * then its parent's entries as they were, so a copy is older than the header.
 */
function copiedFromOf(value: EntryLine, origin: Origin | null): string | undefined {
  return origin && typeof value.timestamp === 'string' && value.timestamp < origin.forkedAt ? origin.parent : undefined;
}

/** An entry line as kept while reading (see Entry). */
function readEntry(value: EntryLine, line: number, file: string, keep: (message: Message) => AnyMessage, origin: Origin | null): Entry {
  let read: { message: Message | null; call: BilledCall | null } = { message: null, call: null };
  let error: InputError | null = null;
  try {
    read = entryMessage(value, line, file, copiedFromOf(value, origin));
  } catch (caught) {
    if (!(caught instanceof InputError)) throw caught;
    error = caught;
  }
  const compaction =
    value.type === 'compaction'
      ? { summary: String(value['summary'] ?? ''), keptId: value['firstKeptEntryId'], keptIndex: value['firstKeptEntryIndex'], tokensBefore: tokenCount(value['tokensBefore']) }
      : null;
  const { message, call } = read;
  return { line, type: value.type, id: value.id ?? null, parentId: value.parentId ?? null, message: message && keep(message), error, compaction, call };
}

/** A header's parent session (v2/v3 `parentSession`, v1 `branchedFrom`), and when the fork was made. */
function originOf(header: EntryLine): Origin | null {
  const parent = header['parentSession'] ?? header['branchedFrom'];
  const forkedAt = header.timestamp;
  return typeof parent === 'string' && parent !== '' && typeof forkedAt === 'string' ? { parent, forkedAt } : null;
}

/**
 * The calls the context does not hold, as spend: aborted replies on the branch (`aborted`) and
 * every call off it (`abandoned-branch`). A fork's copies were billed in its parent: not here.
 */
function offContextCalls(entries: readonly Entry[], branch: ReadonlySet<Entry>, file: string): OffContextCall[] {
  const off: OffContextCall[] = [];
  for (const entry of entries) {
    const call = entry.call;
    if (!call || call.copiedFrom || (branch.has(entry) && !call.dropped)) continue;
    const { usage, model, timestamp, callKey } = call;
    off.push({
      cause: branch.has(entry) ? 'aborted' : 'abandoned-branch',
      usage,
      file,
      line: entry.line,
      ...(model ? { model } : {}),
      ...(timestamp ? { timestamp } : {}),
      ...(callKey ? { callKey } : {}),
    });
  }
  return off;
}

/** The entries of the current branch, oldest first. */
function currentBranch(entries: readonly Entry[], version: number, file: string, warnings: Diagnostic[]): Entry[] {
  const body = entries.filter((entry) => entry.type !== 'session');
  if (version < 2 || body.some((entry) => !entry.id)) return body;
  const byId = new Map(body.map((entry) => [entry.id!, entry]));
  const branch: Entry[] = [];
  const seen = new Set<Entry>();
  for (let entry: Entry | undefined = body.at(-1); entry && !seen.has(entry); ) {
    seen.add(entry);
    branch.push(entry);
    const parent = entry.parentId;
    entry = parent ? byId.get(parent) : undefined;
    if (parent && !entry) warnings.push({ file, message: `entry ${parent} (parent of a branch entry) is not in the file` });
  }
  return branch.reverse();
}

export async function readPi(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  const keep = options?.keep ?? ((message: Message) => message);
  const entries: Entry[] = [];
  let header: EntryLine | undefined;
  let origin: Origin | null = null;
  const readWarnings = await forEachJsonLine(file, (value, line) => {
    const entry = parseLine(entrySchema, value, file, line);
    if (entries.length === 0 && entry.type === 'session') {
      header = entry;
      origin = originOf(entry);
    }
    entries.push(readEntry(entry, line, file, keep, origin));
  });
  const warnings: Diagnostic[] = [...readWarnings];
  const version = typeof header?.['version'] === 'number' ? header['version'] : 1;
  const branch = currentBranch(entries, version, file, warnings);

  const messages: AnyMessage[] = [];
  /** messages.length when each branch entry was reached: where a kept entry's messages start. */
  const firstMessageAt = new Map<Entry, number>();
  const compactionEntries: { entry: Entry; atIndex: number }[] = [];
  for (const entry of branch) {
    if (entry.error) throw entry.error;
    firstMessageAt.set(entry, messages.length);
    if (entry.compaction) compactionEntries.push({ entry, atIndex: messages.length });
    if (entry.message) messages.push(entry.message);
  }

  const byId = new Map(branch.filter((entry) => entry.id).map((entry) => [entry.id!, entry]));
  const recordedCompactions: RecordedCompaction[] = compactionEntries.map(({ entry, atIndex }) => {
    const { summary, keptId, keptIndex, tokensBefore } = entry.compaction!;
    const kept = typeof keptId === 'string' ? byId.get(keptId) : typeof keptIndex === 'number' ? entries[keptIndex] : undefined;
    const firstKept = kept ? firstMessageAt.get(kept) : undefined;
    if (firstKept === undefined) {
      warnings.push({ file, line: entry.line, message: 'compaction names a first kept entry that is not on the current branch; keeping from its summary' });
    }
    return {
      firstKeptIndex: firstKept !== undefined && firstKept <= atIndex ? firstKept : atIndex,
      atIndex,
      summary,
      line: entry.line,
      ...(tokensBefore ? { tokensBefore } : {}),
    };
  });

  // Repeated ids give way to line ids; a renamed message is a new object, which the lean loader
  // notices (it reads such a file again in full).
  const unique = withUniqueIds(messages);
  const headerModel = typeof header?.['modelId'] === 'string' ? header['modelId'] : undefined;
  const model = lastModel(unique, headerModel);
  const cwd = typeof header?.['cwd'] === 'string' && header['cwd'] !== '' ? header['cwd'] : undefined;
  return {
    path: file,
    format: 'pi',
    messages: unique,
    recordedCompactions,
    offContext: offContextCalls(entries, new Set(branch), file),
    warnings,
    ...(model ? { model } : {}),
    ...(cwd ? { project: cwd } : {}),
  };
}

function isPiLine(value: unknown, index: number): boolean {
  const record = asRecord(value);
  if (!record) return false;
  if (index === 0 && record['type'] === 'session' && typeof record['id'] === 'string') return true;
  return record['type'] === 'message' && asRecord(record['message']) !== undefined && typeof asRecord(record['message'])!['role'] === 'string';
}

export const piReader: FormatReader = {
  name: 'pi',
  detect: (firstLines) => firstLines.some(isPiLine),
  read: readPi,
};
