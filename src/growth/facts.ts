/**
 * What growth attribution needs of the messages' text, gathered one full message at a time:
 * the tokens of each message's text, thinking and tool calls, of each tool result, and what
 * each tool call was about. A few numbers a message, so `inspect` gathers them while reading and
 * keeps only slim messages (read/index.ts, read/slim.ts). Tool names and the files a read
 * tool read are not gathered: slim messages keep them. Pure; src/growth/attribution.ts adds it all up.
 */
import type { Message, ToolRequestBlock } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { blockText, CHARS_PER_TOKEN, heuristicCounter } from '../tokens/estimate.js';
import { classifyToolRequest } from '../session/tool-files.js';
import { CountColumn } from './count-column.js';

/** Targets kept one copy of (the rest are kept as they come). */
const DISTINCT_TARGETS = 10_000;

const TARGET_ARGUMENTS = ['command', 'cmd', 'pattern', 'query', 'url', 'path', 'file_path'];

/** What a tool call was about, for a person reading the report. */
export function toolTarget(request: ToolRequestBlock | undefined): string {
  if (!request) return '';
  const path = classifyToolRequest(request)?.paths[0];
  if (path) return path;
  for (const key of TARGET_ARGUMENTS) {
    const value = request.arguments[key];
    if (typeof value === 'string' && value.length > 0) return value;
    if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join(' ');
  }
  return '';
}

/**
 * Growth facts of a session, message by message in session order (`observe`). Columns of whole
 * numbers (CountColumn) rather than an object a message: a long session has hundreds of thousands.
 */
export class GrowthFacts {
  /** Per message: tokens of its text blocks (user, assistant or system text, by its role). */
  text = new CountColumn();
  /** Per message: tokens of its thinking blocks. */
  thinking = new CountColumn();
  /** Per message: tokens of its tool calls (name + arguments). */
  toolCalls = new CountColumn();
  /** Per tool result block, in session and block order: its tokens. */
  results = new CountColumn();
  /** Per message: where its tool results start in `results` (for `select`). */
  private resultStarts = new CountColumn();
  /** Tool call id → its target (toolTarget); a repeated id keeps the last call's, as lookups do. */
  readonly targets = new Map<string, string>();
  /**
   * One copy of each target, up to a bound: a session reads the same files and runs the same
   * commands again and again, and each call's arguments are parsed into a string of their own.
   */
  private readonly distinct = new Map<string, string>();

  /** Only the length of text is read (chars/4; tool calls whole): read/index.ts MessageObserver. */
  readonly textLengthsOnly: boolean;
  /** No message id is read (tool call ids are): a copy renamed for a repeated id has its source's facts. */
  readonly idBlind = true;

  /** `count` sizes each block on its own. */
  constructor(private readonly count: TextCounter) {
    this.textLengthsOnly = count === heuristicCounter;
  }

  /** `lengths`: each block's text length (read/index.ts MessageObserver), used when the count is chars/4. */
  observe(message: Message, lengths?: readonly number[]): void {
    this.resultStarts.push(this.results.length);
    const sized = this.textLengthsOnly ? lengths : undefined;
    let text = 0;
    let thinking = 0;
    let toolCalls = 0;
    const { content } = message;
    for (let position = 0; position < content.length; position++) {
      const block = content[position]!;
      const length = sized?.[position];
      const tokens = length === undefined ? this.count(blockText(block)) : Math.ceil(length / CHARS_PER_TOKEN);
      switch (block.type) {
        case 'text':
          text += tokens;
          break;
        case 'thinking':
          thinking += tokens;
          break;
        case 'tool_request':
          toolCalls += tokens;
          this.targets.set(block.id, this.once(toolTarget(block)));
          break;
        case 'tool_result':
          this.results.push(tokens);
          break;
      }
    }
    this.text.push(text);
    this.thinking.push(thinking);
    this.toolCalls.push(toolCalls);
  }

  private once(target: string): string {
    const known = this.distinct.get(target);
    if (known !== undefined) return known;
    if (this.distinct.size < DISTINCT_TARGETS) this.distinct.set(target, target);
    return target;
  }

  select(order: readonly number[]): void {
    const starts = this.resultStarts;
    const results = new CountColumn();
    const resultStarts = new CountColumn();
    for (const index of order) {
      resultStarts.push(results.length);
      const end = index + 1 < starts.length ? starts.at(index + 1)! : this.results.length;
      for (let i = starts.at(index)!; i < end; i++) results.push(this.results.at(i)!);
    }
    this.text = this.text.pick(order);
    this.thinking = this.thinking.pick(order);
    this.toolCalls = this.toolCalls.pick(order);
    this.results = results;
    this.resultStarts = resultStarts;
  }
}
