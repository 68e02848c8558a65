/**
 * Skeletons: each message's structure as a lean read sees it go by, for deciding a provider view
 * without holding the session's text (`context`). A skeleton keeps every block in its place, a
 * text block only as blank or not, tool calls their id and name, tool results their call's id
 * and error flag, and the message its id, role, line and known size: all that the view's repair
 * (session/view-repair.ts) and the provider's rules (session/view-rules.ts) read, so they decide
 * the same on skeletons as on the full messages. A slim message would not do: it drops text
 * blocks, which end a run of results and make a message blank. System messages are kept whole:
 * Anthropic's body names their text before any message (session/request-body-stream.ts).
 *
 * A skeleton is typed as a full message for those checks; its texts are stand-ins, never shown.
 */
import type { MessageObserver } from './index.js';
import type { ContentBlock, Message } from '../session/model.js';

/** A message's structure with stand-in texts (see the header). */
export type Skeleton = Message;

const BLANK_TEXT: ContentBlock = Object.freeze({ type: 'text', text: '' });
const SOME_TEXT: ContentBlock = Object.freeze({ type: 'text', text: '…' });
const THINKING: ContentBlock = Object.freeze({ type: 'thinking', text: '' });
const NO_ARGUMENTS: Readonly<Record<string, unknown>> = Object.freeze({});

function skeletonBlock(block: ContentBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return block.text.trim() === '' ? BLANK_TEXT : SOME_TEXT;
    case 'thinking':
      return THINKING;
    case 'tool_request':
      return { type: 'tool_request', id: block.id, name: block.name, arguments: NO_ARGUMENTS };
    case 'tool_result':
      return { type: 'tool_result', tool_request_id: block.tool_request_id, output: '', is_error: block.is_error };
  }
}

/** The skeleton of `message` (a system message is its own). */
export function skeletonOf(message: Message): Skeleton {
  if (message.role === 'system') return message;
  const { id, role, line, knownTokens } = message;
  const content = message.content.map(skeletonBlock);
  return knownTokens === undefined ? { id, role, content, line } : { id, role, content, line, knownTokens };
}

const sameBlock = (a: ContentBlock, b: ContentBlock): boolean => {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case 'text':
      return (a.text.trim() === '') === ((b as typeof a).text.trim() === '');
    case 'thinking':
      return true;
    case 'tool_request':
      return a.id === (b as typeof a).id && a.name === (b as typeof a).name;
    case 'tool_result':
      return a.tool_request_id === (b as typeof a).tool_request_id && a.is_error === (b as typeof a).is_error;
  }
};

/** Whether `message` (read again) has the structure `skeleton` recorded: else the file changed between the reads. */
export function fitsSkeleton(message: Message, skeleton: Skeleton): boolean {
  return (
    message.id === skeleton.id &&
    message.role === skeleton.role &&
    message.line === skeleton.line &&
    message.knownTokens === skeleton.knownTokens &&
    message.content.length === skeleton.content.length &&
    message.content.every((block, index) => sameBlock(block, skeleton.content[index]!))
  );
}

/** Takes each message's skeleton as a lean read goes (read/index.ts MessageObserver). */
export class SkeletonObserver implements MessageObserver {
  private kept: Skeleton[] = [];

  observe(message: Message): void {
    this.kept.push(skeletonOf(message));
  }

  select(order: readonly number[]): void {
    this.kept = order.map((index) => this.kept[index]!);
  }

  /** The skeletons, in session order. */
  get skeletons(): readonly Skeleton[] {
    return this.kept;
  }
}
