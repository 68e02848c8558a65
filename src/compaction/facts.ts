/**
 * The facts of a run of messages that a compaction should not lose: file paths, shell
 * commands, error lines and user directives (README "Fidelity" defines each). Pure.
 *
 * The `extract` strategy builds its checkpoint from these, the relevance filter uses them to
 * never drop an output that carries an error, and the fidelity audit lists them to check what
 * survived. Matching a fact against a summary is left to src/audit/fidelity.ts.
 */
import type { AnyMessage, Message, ToolRequestBlock, ToolResultBlock } from '../session/model.js';
import { isTurnStart } from '../session/model.js';
import { classifyToolRequest } from '../session/tool-files.js';

export type FactKind = 'file' | 'command' | 'error' | 'directive';
export const FACT_KINDS: readonly FactKind[] = ['file', 'command', 'error', 'directive'];

export interface Fact {
  readonly kind: FactKind;
  /** The fact as it appears in the session (an error line, a command's first line, …). */
  readonly text: string;
  /** The message it was first seen in. */
  readonly messageId: string;
}

/** Shell tools across agents (lower-cased): pi and Claude `bash`, Codex `shell`, others. */
const SHELL_TOOLS = new Set([
  'bash',
  'shell',
  'sh',
  'exec',
  'exec_command',
  'local_shell',
  'run_command',
  'run_terminal_cmd',
  'execute_command',
  'terminal',
  'powershell',
]);
/** Shells whose `-c` / `-lc` script is the command itself (Codex: ["bash", "-lc", "ls"]). */
const SCRIPT_FLAGS = new Set(['-c', '-lc', '-ic', '/c', '-command']);

/** A command of this many characters or more is only matched on its first this-many. */
export const FACT_MATCH_CHARS = 160;
/** Error lines counted per tool output: the head of a long failure, not all 300 tsc errors. */
export const MAX_ERROR_LINES_PER_OUTPUT = 5;
/** A user message this long holds pasted material: checkpoints keep its head, directives come from its first paragraph. */
export const HUGE_USER_TEXT_CHARS = 4_000;
export const USER_TEXT_HEAD_CHARS = 2_000;
/** Sentences shorter than this many words are not directives ("ok", "thanks!"). */
const MIN_DIRECTIVE_WORDS = 3;

function commandValue(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() || null;
  if (!Array.isArray(value) || !value.every((part) => typeof part === 'string')) return null;
  const parts = value as string[];
  const flag = parts.findIndex((part) => SCRIPT_FLAGS.has(part.toLowerCase()));
  if (flag >= 1 && flag === parts.length - 2) return parts[flag + 1]!.trim() || null;
  return parts.join(' ').trim() || null;
}

/** The command line of a shell tool call, or null when the call is not a shell command. */
export function shellCommandOf(block: ToolRequestBlock): string | null {
  if (!SHELL_TOOLS.has(block.name.toLowerCase())) return null;
  return commandValue(block.arguments['command']) ?? commandValue(block.arguments['cmd']);
}

/** The first line of a command, which is what a fact and a checkpoint line carry. */
export function commandHead(command: string): string {
  return command.split('\n', 1)[0]!.trim();
}

/**
 * Codex wraps shell output as JSON `{"output": "...", "metadata": {"exit_code": 1}}`; unwrap
 * it so the text and exit code read the same as other agents'.
 */
function unwrapJsonOutput(output: string): { text: string; exitCode: number | null } | null {
  if (!output.startsWith('{"output"')) return null;
  try {
    const value = JSON.parse(output) as { output?: unknown; metadata?: { exit_code?: unknown } };
    if (typeof value.output !== 'string') return null;
    const code = value.metadata?.exit_code;
    return { text: value.output, exitCode: typeof code === 'number' && Number.isInteger(code) ? code : null };
  } catch {
    return null;
  }
}

/** `exit code: 101` (ours), `Command exited with code 1` (pi), `Exit code: 2`, `exit status 1`. */
const EXIT_CODE_LINE = /\b(?:exit(?:ed)?(?: with)? (?:code|status)|exit_code)\s*[:=]?\s*(-?\d+)\b/gi;

/** The exit code a shell output reports (the last one it names), or null. */
export function exitCodeOf(output: string): number | null {
  const unwrapped = unwrapJsonOutput(output);
  if (unwrapped?.exitCode !== undefined && unwrapped.exitCode !== null) return unwrapped.exitCode;
  let code: number | null = null;
  for (const match of (unwrapped?.text ?? output).matchAll(EXIT_CODE_LINE)) code = Number(match[1]);
  return code;
}

/** Lines that report an error, whatever the tool: compilers, runtimes, test runners, shells. */
const ERROR_PATTERNS: readonly RegExp[] = [
  /^(?:error|fatal|panic)\b.*:/i, // error[E0599]: …, error: could not compile, fatal: not a git repository
  /^[\w.$]*(?:Error|Exception)(?::|\s*\()/, // TypeError: …, java.lang.IllegalStateException: …
  /\berror\s+TS\d+\b/, // tsc
  /^\S+:\d+(?::\d+)?:\s*(?:fatal\s+)?error\b/i, // gcc, clang, go vet
  /^thread '.*' panicked\b/, // Rust
  /^traceback \(most recent call last\)/i, // Python
  /^(?:FAIL|FAILED)\b|^--- FAIL:|^npm (?:ERR!|error)\b/, // test runners, npm
  /: command not found$|: No such file or directory$|: Permission denied$/, // shells
];
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

export function isErrorLine(line: string): boolean {
  const trimmed = line.replace(ANSI, '').trim();
  return trimmed.length > 0 && ERROR_PATTERNS.some((pattern) => pattern.test(trimmed));
}

/**
 * The error lines of one tool output: lines matching an error pattern, at most
 * MAX_ERROR_LINES_PER_OUTPUT; an output flagged as an error with no such line contributes its
 * first non-empty line, since that is the message the tool gave.
 */
export function errorLinesOf(output: string, flaggedError: boolean): string[] {
  const text = unwrapJsonOutput(output)?.text ?? output;
  const lines = text.split('\n').map((line) => line.replace(ANSI, '').trim());
  const errors = [...new Set(lines.filter(isErrorLine))].slice(0, MAX_ERROR_LINES_PER_OUTPUT);
  if (errors.length > 0 || !flaggedError) return errors;
  const first = lines.find((line) => line.length > 0);
  return first ? [first] : [];
}

/**
 * A text block made of XML-ish elements from start to end is context an agent injected
 * (Codex `<environment_context>`, Claude Code `<command-name>…<command-args>`), not the user.
 */
const INJECTED_BLOCK = /^<[A-Za-z][\w-]*[\s>][\s\S]*<\/[A-Za-z][\w-]*>$/;

/** The user's own words in a turn-start message (injected context blocks left out), or ''. */
export function userText(message: Message): string {
  if (!isTurnStart(message)) return '';
  return message.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text.trim())
    .filter((text) => text.length > 0 && !INJECTED_BLOCK.test(text))
    .join('\n\n');
}

/** The head of a huge user text: its whole lines within the first USER_TEXT_HEAD_CHARS. */
export function userTextHead(text: string): string {
  if (text.length < HUGE_USER_TEXT_CHARS) return text;
  const head = text.slice(0, USER_TEXT_HEAD_CHARS);
  const lastBreak = head.lastIndexOf('\n');
  return lastBreak > 0 ? head.slice(0, lastBreak) : head;
}

/**
 * The part of a user text directives are taken from: all of it, or for a huge one (a paste)
 * its first paragraph, or that paragraph's first line when the paragraph is itself huge. Always
 * within `userTextHead`, so a checkpoint that keeps the head keeps every directive.
 */
export function directiveSource(text: string): string {
  if (text.length < HUGE_USER_TEXT_CHARS) return text;
  const paragraph = text.split(/\n\s*\n/, 1)[0]!;
  if (paragraph.length < USER_TEXT_HEAD_CHARS) return paragraph;
  // A first line longer than the head is cut exactly where userTextHead cuts it.
  return paragraph.split('\n', 1)[0]!.slice(0, USER_TEXT_HEAD_CHARS);
}

/** Sentences of a user text with at least three words; fenced code is data, not directives. */
export function directivesOf(text: string): string[] {
  const sentences: string[] = [];
  let inFence = false;
  for (const rawLine of directiveSource(text).split('\n')) {
    if (/^\s*(```|~~~)/.test(rawLine)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    const line = rawLine.replace(/^\s*(?:[-*+>]|\d+[.)])\s+/, '').trim();
    for (const sentence of line.split(/(?<=[.!?])\s+/)) {
      const trimmed = sentence.trim();
      if (trimmed.split(/\s+/).length >= MIN_DIRECTIVE_WORDS) sentences.push(trimmed);
    }
  }
  return sentences;
}

/** Tool calls by id, so a result can be read with the call that produced it. */
export function toolRequestsById(messages: readonly AnyMessage[]): Map<string, ToolRequestBlock> {
  const requests = new Map<string, ToolRequestBlock>();
  for (const message of messages) {
    for (const block of message.content) if (block.type === 'tool_request') requests.set(block.id, block);
  }
  return requests;
}

/** Is this result the output of a shell command, or a failure of any tool? Only those carry error lines. */
export function errorSource(result: ToolResultBlock, request: ToolRequestBlock | undefined): boolean {
  if (result.is_error) return true;
  if (!request) return false;
  return shellCommandOf(request) !== null;
}

/** Does this output report a failure: an error flag, or a shell output with a nonzero exit code or an error line? */
export function carriesError(result: ToolResultBlock, request: ToolRequestBlock | undefined): boolean {
  if (result.is_error) return true;
  if (!errorSource(result, request)) return false;
  const code = exitCodeOf(result.output);
  return (code !== null && code !== 0) || errorLinesOf(result.output, false).length > 0;
}

/**
 * Every fact of these messages, first occurrence only (by kind and text). `requests` resolves
 * tool results whose call came before the messages (defaults to the calls among them).
 */
export function collectFacts(messages: readonly Message[], requests = toolRequestsById(messages)): Fact[] {
  const collector = new FactCollector((result) => errorSource(result, requests.get(result.tool_request_id)));
  for (const message of messages) collector.add(message);
  return collector.facts;
}

/** `text` in a string of its own, which holds no larger string alive (JSON keeps every code unit, lone surrogates too). */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/**
 * collectFacts one message at a time: the facts of the messages added so far, in order, first
 * occurrence only, so the facts of a prefix of them are a prefix of `facts`. `errorSourceOf` says
 * whether a result carries error lines (errorSource, given its call).
 */
export class FactCollector {
  readonly facts: Fact[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly errorSourceOf: (result: ToolResultBlock) => boolean) {}

  private note(kind: FactKind, text: string, messageId: string): void {
    if (text.length === 0 || this.seen.has(`${kind}\u0000${text}`)) return;
    // A fact's text is a piece of a message's text (an error line of a tool output, a sentence),
    // and V8 keeps the whole text alive behind such a piece: the fact holds a copy of its own, so
    // that facts kept over a whole session (audit) do not hold its outputs.
    const own = ownCopy(text);
    this.seen.add(`${kind}\u0000${own}`);
    this.facts.push({ kind, text: own, messageId });
  }

  add(message: Message): void {
    for (const sentence of directivesOf(userText(message))) this.note('directive', sentence, message.id);
    for (const block of message.content) {
      if (block.type === 'tool_request') {
        for (const path of classifyToolRequest(block)?.paths ?? []) this.note('file', path, message.id);
        const command = shellCommandOf(block);
        if (command) this.note('command', commandHead(command), message.id);
      } else if (block.type === 'tool_result' && this.errorSourceOf(block)) {
        for (const line of errorLinesOf(block.output, block.is_error)) this.note('error', line, message.id);
      }
    }
  }
}
