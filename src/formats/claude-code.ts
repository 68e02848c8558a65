/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`). See README
 * "Formats" for what is read and skipped. The traps handled here:
 *
 * - one API response is split over several lines (one content block a line) sharing
 *   `message.id` and `requestId`: merged into one assistant message, usage taken once, output
 *   tokens from the line with a `stop_reason` (else the largest partial count); the messages are
 *   built while reading (claude-code-messages.ts), and the chain (claude-code-chain.ts, kept in
 *   columns) plans which lines make each message;
 * - lines are ordered by the parent chain from the newest main-chain line, not by time, and
 *   the chain is followed through non-message lines (progress, attachments, system lines);
 * - parallel tool calls: each result hangs off its own call's line, so the chain passes through
 *   the last result only; the others join it after their response;
 * - abandoned branches (a prompt edited and sent again) and sidechains (subagents written inline
 *   by 1.0.x) are left out of the context, their calls kept as the session's off-context spend;
 *   a file holding nothing but a sidechain (a 2.x subagent transcript) is read as its own session;
 * - the subagent transcripts beside the session (claude-code-subagents.ts) are read for their
 *   calls only, which are spend too; every call counts once by `message.id` + `requestId`
 *   (claude-code-spend.ts);
 * - a conversation branched from another session copies its lines with `forkedFrom`: their calls
 *   were billed there, so they are context here, not spend (Message.copiedFrom);
 * - `compact_boundary` + the `isCompactSummary` line = a compaction Claude Code recorded;
 * - `<synthetic>` messages (locally generated, zero usage) are not provider calls: left out;
 * - `toolUseResult` duplicates a tool's output and is never sent to the model: cut out of the
 *   line before it is parsed (json-cut.ts), as are the bodies of progress, attachment and
 *   file-history-snapshot lines; a line this reader reads nothing of and that is no link of the
 *   chain (a snapshot, a queue operation, a summary) is not parsed at all when its bytes prove it.
 */
import { InputError } from '../errors.js';
import type { AnyMessage, Diagnostic, Message, RecordedCompaction, Session } from '../session/model.js';
import { unknownTypesWarning } from './anthropic-content.js';
import { CallKeys } from './claude-code-call-keys.js';
import type { ChatLine } from './claude-code-messages.js';
import { MessageAssembler, rebuildMessages } from './claude-code-messages.js';
import type { BilledLine } from './claude-code-spend.js';
import { billedRecord, SessionSpend, SYNTHETIC_MODEL } from './claude-code-spend.js';
import { subagentTranscriptsOf, transcriptCause } from './claude-code-subagents.js';
import { asRecord, keepEach, lastModel, withUniqueIds } from './convert.js';
import type { ChainLines, Plan } from './claude-code-chain.js';
import { ClaudeLineReader, parseChatLine } from './claude-code-lines.js';
import { scanClaudeLines, scannedFile, withStandIns } from './claude-code-scanned.js';
import { holdInput } from './json/input-source.js';
import type { ClaudeScanner } from '../scan/scanner.js';
import { borrowScanner, returnScanner } from '../scan/scanner.js';
import type { LineCutter } from './json/json-cut.js';
import { KeyCutter } from './json/json-cut.js';
import { MeasuringCutter } from './claude-code-lengths.js';
import { forEachJsonLine } from './json/jsonl-lines.js';
import type { FormatReader, ReadOptions } from './reader.js';

/**
 * Top-level values this reader never reads, cut before parsing (json-cut.ts): the tool output's
 * duplicate, and the bodies of progress, attachment and file-history-snapshot lines. Lines that
 * carry no usage and no context and are no link of the chain (snapshots, queue operations,
 * summaries, last prompts without a uuid or parent) are not parsed at all: their bytes prove it.
 * Nor are those that are links (progress lines, attachments): readLines reads nothing of them
 * but their type and link keys, which are taken from their bytes when these can be followed.
 */
const UNREAD_VALUES = new KeyCutter(
  {
    user: 'toolUseResult',
    progress: 'data',
    attachment: 'attachment',
    'file-history-snapshot': 'snapshot',
  },
  // parentUuid first: a linked line names it first, so a line that is no skip is known at once.
  { types: ['file-history-snapshot', 'queue-operation', 'summary', 'last-prompt', 'progress'], unlessKeys: ['parentUuid', 'uuid', 'logicalParentUuid'] },
  // What readLines reads of a line that is neither a message nor a system line.
  { types: ['progress', 'attachment', 'file-history-snapshot', 'queue-operation', 'summary', 'last-prompt'], keys: ['uuid', 'parentUuid', 'logicalParentUuid', 'isSidechain'] },
);

/** For a read that only measures text (ReadOptions.textLengthsOnly): long texts are sized from their bytes. */
const MEASURED_VALUES = new MeasuringCutter(UNREAD_VALUES);

function cutterFor(options: ReadOptions | undefined): LineCutter {
  return options?.textLengthsOnly === true && options.keep !== undefined ? MEASURED_VALUES : UNREAD_VALUES;
}

/**
 * Every line of the file that can be a link in the parent chain, in file order (claude-code-lines.ts):
 * each line parsed here, its unread values cut first, or (a read that only measures text, of a
 * file large enough) scanned by the WebAssembly scanner (claude-code-scanned.ts).
 */
async function readLines(
  file: string,
  keys: CallKeys,
  spend: SessionSpend,
  scanner: ClaudeScanner | null,
  options: ReadOptions | undefined,
  onChat: (chat: ChatLine, line: number, sidechain: boolean) => void,
): Promise<{ lines: ChainLines; warnings: Diagnostic[] }> {
  if (scanner) {
    const reader = new ClaudeLineReader(file, keys, spend, onChat, withStandIns);
    const release = await holdInput(file);
    try {
      const warnings = scanClaudeLines(file, scanner, reader, MEASURED_VALUES);
      return { lines: reader.lines, warnings: [...warnings, ...reader.linkWarnings] };
    } finally {
      release();
    }
  }
  const reader = new ClaudeLineReader(file, keys, spend, onChat);
  const warnings = await forEachJsonLine(file, (value, line) => reader.value(value, line), cutterFor(options));
  return { lines: reader.lines, warnings: [...warnings, ...reader.linkWarnings] };
}

/** The planned messages parsed again, when those built while reading do not fit the chain. */
async function rebuild(file: string, plan: Plan, cutter: LineCutter): Promise<Message[]> {
  const wanted = new Set(plan.messages.all());
  const chats = new Map<number, ChatLine>();
  await forEachJsonLine(
    file,
    (value, line) => {
      const record = asRecord(value);
      if (record && wanted.has(line)) chats.set(line, parseChatLine(record, file, line).chat);
    },
    cutter,
  );
  if (chats.size !== wanted.size) throw new InputError('the file changed while it was read', file);
  return rebuildMessages(plan.messages, chats);
}

/**
 * Adds the calls of a subagent transcript beside the session to its spend. A transcript that
 * cannot be read is a warning, and none of its calls count: the session reads without them.
 */
async function readTranscriptSpend(path: string, spend: SessionSpend, scanner: ClaudeScanner | null): Promise<Diagnostic[]> {
  const calls: { billed: BilledLine; line: number }[] = [];
  const add = (billed: BilledLine | null, line: number) => {
    if (billed) calls.push({ billed, line });
  };
  let warnings: Diagnostic[];
  try {
    // Scanned when the session's read scans and the transcript is not tiny (claude-code-scanned.ts).
    if (scanner && scannedFile(path, true)) {
      const release = await holdInput(path);
      try {
        warnings = scanClaudeLines(
          path,
          scanner,
          {
            value: (value, line) => {
              const record = asRecord(value);
              add(record ? billedRecord(record) : null, line);
            },
            scannedChat: (chat, line) => add(chat.billed(), line),
            scannedLink: () => {},
          },
          UNREAD_VALUES,
        );
      } finally {
        release();
      }
    } else {
      warnings = await forEachJsonLine(
        path,
        (value, line) => {
          const record = asRecord(value);
          add(record ? billedRecord(record) : null, line);
        },
        UNREAD_VALUES,
      );
    }
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return [{ file: path, ...(error.line === undefined ? {} : { line: error.line }), message: `subagent transcript left out of the spend: ${error.message}` }];
  }
  const cause = transcriptCause(path);
  for (const { billed, line } of calls) spend.add(billed, { file: path, line, cause, sidechain: true });
  return warnings;
}

/**
 * The index of the message with each of `ids` (the ids are unique), from one pass over the
 * messages: a table of every message's id (about 100,000 in a 1 GB session) cost 10 MB or more
 * while the whole read was still held, for the few heads of preserved segments it was asked for.
 */
function indexesOf(ids: readonly string[], messages: readonly AnyMessage[]): ReadonlyMap<string, number> {
  const found = new Map<string, number>();
  if (ids.length === 0) return found;
  const wanted = new Set(ids);
  for (let index = 0; index < messages.length && found.size < wanted.size; index++) {
    const { id } = messages[index]!;
    if (wanted.has(id)) found.set(id, index);
  }
  return found;
}

export async function readClaudeCode(file: string, options?: ReadOptions): Promise<Session<AnyMessage>> {
  // A read that only measures text, of a file large enough, scans its lines (claude-code-scanned.ts).
  const scanner = options?.textLengthsOnly === true && options.keep !== undefined && scannedFile(file) ? borrowScanner() : null;
  try {
    return await readClaudeCodeWith(file, options, scanner);
  } finally {
    if (scanner) returnScanner(scanner);
  }
}

/**
 * The reader, with the scanner a read uses (null: none, every line parsed in JavaScript). The
 * differential test (test/scan/scan-claude-diff.test.ts) reads each file both ways with it.
 */
export async function readClaudeCodeWith(file: string, options: ReadOptions | undefined, scanner: ClaudeScanner | null): Promise<Session<AnyMessage>> {
  const assembler = new MessageAssembler(options?.keep);
  const keys = new CallKeys();
  const spend = new SessionSpend(keys);
  const cutter = cutterFor(options);
  const { lines, warnings } = await readLines(file, keys, spend, scanner, options, (chat, line, sidechain) => {
    if (chat.model !== SYNTHETIC_MODEL) assembler.add(chat, line, sidechain);
  });
  assembler.finish();
  const chain = lines.currentChain(file, warnings);
  const plan = lines.plan(chain.chain, file);
  const built = assembler.pick(plan.messages);
  // Built messages already went through `keep`; rebuilt ones go through it here. Ids the chain
  // knows to be unique need no table of them to be checked (100,000 in a 1 GB session).
  const unique = <M extends AnyMessage>(messages: M[]): M[] => (lines.uniqueIds ? messages : withUniqueIds(messages));
  const messages = built ? unique(built) : keepEach(unique(await rebuild(file, plan, cutter)), options);
  const preservedAt = indexesOf(
    plan.compactions.flatMap(({ boundary }) => boundary?.preservedHead ?? []),
    messages,
  );
  const recordedCompactions: RecordedCompaction[] = plan.compactions.map(({ boundary, atIndex, line }) => {
    // Newer versions keep a preserved segment from before the boundary in the new context.
    const head = boundary?.preservedHead;
    const preserved = head === undefined ? undefined : preservedAt.get(head);
    const preTokens = boundary?.preTokens;
    return {
      firstKeptIndex: preserved !== undefined && preserved < atIndex ? preserved : atIndex,
      atIndex,
      summary: plan.summaries.get(atIndex) ?? '',
      line,
      ...(preTokens !== undefined ? { tokensBefore: preTokens } : {}),
    };
  });

  const unknown = unknownTypesWarning(plan.unknownTypes);
  if (unknown) warnings.push({ file, message: unknown });
  for (const transcript of options?.companions?.subagentTranscripts ?? subagentTranscriptsOf(file)) warnings.push(...(await readTranscriptSpend(transcript, spend, scanner)));
  // Calls on the other side of the file than the conversation are its subagents'.
  const offContext = spend.offContext(plan.inContext, (sidechain) => (sidechain === chain.sidechain ? 'abandoned-branch' : 'subagent'));
  const model = lastModel(messages);
  return {
    path: file,
    format: 'claude-code',
    messages,
    recordedCompactions,
    offContext,
    warnings,
    ...(model ? { model } : {}),
  };
}

/** Line types only Claude Code writes, recognizable without a message. */
const CLAUDE_ONLY_TYPES = new Set(['summary', 'file-history-snapshot', 'queue-operation', 'progress', 'attachment', 'last-prompt']);

function isClaudeLine(value: unknown): boolean {
  const record = asRecord(value);
  if (!record || typeof record['type'] !== 'string') return false;
  if (typeof record['sessionId'] === 'string') return true;
  if ('parentUuid' in record && typeof record['uuid'] === 'string') return true;
  return CLAUDE_ONLY_TYPES.has(record['type']) && !('payload' in record) && !('message' in record && 'id' in record);
}

export const claudeCodeReader: FormatReader = {
  name: 'claude-code',
  detect: (firstLines) => firstLines.some(isClaudeLine),
  read: readClaudeCode,
};
