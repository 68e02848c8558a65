/**
 * pi sessions (`~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`), versions 1 to 3:
 * a `session` header, then entries. See README "Formats". The traps handled here:
 *
 * - v1 is a linear list without ids (messages get `L<line>` ids) and its compactions name the
 *   first kept entry by index (`firstKeptEntryIndex`, counting the header as 0); v2 and v3 are
 *   a tree (`id`, `parentId`): the current branch runs from the last entry back to the root;
 * - a compaction entry becomes the agent's summary message (a user message, as pi sends it)
 *   and a recorded compaction keeping from `firstKeptEntryId`, written before the entry;
 * - aborted and errored assistant messages are left out: pi drops them from the context, their
 *   usage is zero or partial, and their tool calls never got results;
 * - usage `{input, output, cacheRead, cacheWrite}` is read part by part, so a `totalTokens` of 0
 *   in older files does not matter; `toolResult` messages become tool results of a user message.
 */
import { z } from 'zod';
import { InputError } from '../errors.js';
import type { ContentBlock, Diagnostic, Message, RecordedCompaction, Session } from '../session/model.js';
import { asRecord, keepEach, lastModel, lineId, nonZeroUsage, outputText, parseLine, partsText, toolArguments, tokenCount, withUniqueIds } from './convert.js';
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

/** An entry; its index in the file's entry list (header = 0) is what v1 compactions count. */
interface Entry {
  readonly line: number;
  readonly value: EntryLine;
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

/** A `message` entry as the model saw it, or null for what pi leaves out of the context. */
function convertMessage(entry: Entry, id: string, file: string): Message | null {
  const message = parseLine(messageSchema, entry.value['message'], file, entry.line, { where: ['message'] });
  const { line } = entry;
  const timestamp = entry.value.timestamp;
  switch (message.role) {
    case 'user':
      return textMessage(id, 'user', partsText(message.content ?? ''), line, timestamp);
    case 'assistant': {
      if (SKIPPED_STOP_REASONS.has(String(message['stopReason']))) return null;
      const usage = asRecord(message['usage']);
      const counted = usage
        ? nonZeroUsage({
            input: tokenCount(usage['input']) ?? 0,
            output: tokenCount(usage['output']) ?? 0,
            cacheRead: tokenCount(usage['cacheRead']) ?? 0,
            cacheWrite: tokenCount(usage['cacheWrite']) ?? 0,
          })
        : undefined;
      const model = typeof message['model'] === 'string' ? message['model'] : undefined;
      const content = Array.isArray(message.content) ? message.content : [];
      return {
        id,
        role: 'assistant',
        content: assistantBlocks(content, file, line),
        line,
        ...(counted ? { usage: counted } : {}),
        ...(model ? { model } : {}),
        ...(timestamp ? { timestamp } : {}),
      };
    }
    case 'toolResult': {
      const callId = message['toolCallId'];
      if (typeof callId !== 'string') throw new InputError('message.toolCallId: expected a string', file, line);
      return {
        id,
        role: 'user',
        content: [{ type: 'tool_result', tool_request_id: callId, output: outputText(message.content), is_error: message['isError'] === true }],
        line,
        ...(timestamp ? { timestamp } : {}),
      };
    }
    case 'bashExecution': {
      // A command the user ran with `!`; pi sends it with its output unless told not to.
      if (message['excludeFromContext'] === true) return null;
      const text = `Ran \`${String(message['command'] ?? '')}\`\n${String(message['output'] ?? '')}`;
      return textMessage(id, 'user', text, line, timestamp);
    }
    case 'custom':
    case 'hookMessage':
      return textMessage(id, 'user', partsText(message.content ?? ''), line, timestamp);
    case 'branchSummary':
    case 'compactionSummary':
      return textMessage(id, 'user', String(message['summary'] ?? ''), line, timestamp);
    default:
      return null;
  }
}

/** The entries of the current branch, oldest first. */
function currentBranch(entries: readonly Entry[], version: number, file: string, warnings: Diagnostic[]): Entry[] {
  const body = entries.filter((entry) => entry.value.type !== 'session');
  if (version < 2 || body.some((entry) => !entry.value.id)) return body;
  const byId = new Map(body.map((entry) => [entry.value.id!, entry]));
  const branch: Entry[] = [];
  const seen = new Set<Entry>();
  for (let entry: Entry | undefined = body.at(-1); entry && !seen.has(entry); ) {
    seen.add(entry);
    branch.push(entry);
    const parent: string | null | undefined = entry.value.parentId;
    entry = parent ? byId.get(parent) : undefined;
    if (parent && !entry) warnings.push({ file, message: `entry ${parent} (parent of a branch entry) is not in the file` });
  }
  return branch.reverse();
}

export async function readPi(file: string, options?: ReadOptions): Promise<Session> {
  const entries: Entry[] = [];
  const readWarnings = await forEachJsonLine(file, (value, line) => {
    entries.push({ line, value: parseLine(entrySchema, value, file, line) });
  });
  const warnings: Diagnostic[] = [...readWarnings];
  const header = entries[0]?.value.type === 'session' ? entries[0].value : undefined;
  const version = typeof header?.['version'] === 'number' ? header['version'] : 1;
  const branch = currentBranch(entries, version, file, warnings);

  const messages: Message[] = [];
  /** messages.length when each branch entry was reached: where a kept entry's messages start. */
  const firstMessageAt = new Map<Entry, number>();
  const compactionEntries: { entry: Entry; atIndex: number }[] = [];
  for (const entry of branch) {
    firstMessageAt.set(entry, messages.length);
    const id = entry.value.id ?? lineId(entry.line);
    const { type } = entry.value;
    if (type === 'message') {
      const message = convertMessage(entry, id, file);
      if (message) messages.push(message);
    } else if (type === 'compaction') {
      compactionEntries.push({ entry, atIndex: messages.length });
      messages.push(textMessage(id, 'user', String(entry.value['summary'] ?? ''), entry.line, entry.value.timestamp));
    } else if (type === 'branch_summary') {
      messages.push(textMessage(id, 'user', String(entry.value['summary'] ?? ''), entry.line, entry.value.timestamp));
    } else if (type === 'custom_message') {
      messages.push(textMessage(id, 'user', partsText(entry.value['content'] ?? ''), entry.line, entry.value.timestamp));
    }
  }

  const byId = new Map(branch.filter((entry) => entry.value.id).map((entry) => [entry.value.id!, entry]));
  const recordedCompactions: RecordedCompaction[] = compactionEntries.map(({ entry, atIndex }) => {
    const { value } = entry;
    const keptId = value['firstKeptEntryId'];
    const keptIndex = value['firstKeptEntryIndex'];
    const kept =
      typeof keptId === 'string' ? byId.get(keptId) : typeof keptIndex === 'number' ? entries[keptIndex] : undefined;
    const firstKept = kept ? firstMessageAt.get(kept) : undefined;
    if (firstKept === undefined) {
      warnings.push({ file, line: entry.line, message: 'compaction names a first kept entry that is not on the current branch; keeping from its summary' });
    }
    const tokensBefore = tokenCount(value['tokensBefore']);
    return {
      firstKeptIndex: firstKept !== undefined && firstKept <= atIndex ? firstKept : atIndex,
      atIndex,
      summary: String(value['summary'] ?? ''),
      line: entry.line,
      ...(tokensBefore ? { tokensBefore } : {}),
    };
  });

  const unique = withUniqueIds(messages);
  const headerModel = typeof header?.['modelId'] === 'string' ? header['modelId'] : undefined;
  const model = lastModel(unique, headerModel);
  return {
    path: file,
    format: 'pi',
    messages: keepEach(unique, options),
    recordedCompactions,
    warnings,
    ...(model ? { model } : {}),
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
