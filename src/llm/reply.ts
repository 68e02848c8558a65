/**
 * Is a summarizer reply a summary? Empty replies, replies cut off at the token limit and
 * replies that carry on the conversation instead of summarizing it are rejected here (the
 * caller retries once). Also removes file lists the model wrote anyway: ours come from
 * tracking tool calls (file-ops.ts), not from the model. Pure.
 */
import type { SummaryKind } from './prompts.js';
import { CHECKPOINT_SECTIONS, TURN_PREFIX_SECTIONS } from './prompts.js';

export type ReplyVerdict = { readonly ok: true; readonly summary: string } | { readonly ok: false; readonly problem: string };

const FILE_TAGS = /<(read-files|modified-files)>[\s\S]*?<\/\1>\s*/g;
/** A reply that starts like a transcript line or a tool call is the model playing the agent. */
const TRANSCRIPT_START = /^\s*(\[(User|Assistant|Tool call|Tool result|System)\]:|\{\s*"(tool|name|function)")/i;

/** Drops `<read-files>` / `<modified-files>` blocks and the outer `<summary>` wrapper some models add. */
export function cleanSummary(text: string): string {
  return text
    .replace(FILE_TAGS, '')
    .replace(/^\s*<summary>\s*/i, '')
    .replace(/\s*<\/summary>\s*$/i, '')
    .trim();
}

function headingCount(text: string, sections: readonly string[]): number {
  const lines = text.split('\n').map((line) => line.replace(/^[\s#*]+|[\s*:]+$/g, '').toLowerCase());
  return sections.filter((section) => lines.includes(section.toLowerCase())).length;
}

/** At least two of the requested section headings must be there for it to count as a summary. */
const MIN_SECTIONS = 2;

export function checkReply(text: string, finishReason: string | null, kind: SummaryKind): ReplyVerdict {
  if (finishReason === 'length') return { ok: false, problem: 'the reply was cut off at the token limit (finish_reason length)' };
  const summary = cleanSummary(text);
  if (summary === '') return { ok: false, problem: 'the reply was empty' };
  const sections = kind === 'history' ? CHECKPOINT_SECTIONS : TURN_PREFIX_SECTIONS;
  if (TRANSCRIPT_START.test(summary) || headingCount(summary, sections) < MIN_SECTIONS) {
    return { ok: false, problem: 'the reply continued the conversation instead of summarizing it' };
  }
  return { ok: true, summary };
}
