/**
 * A read through a reader's `keep` hook, as read/index.ts's lean read makes it, with or without
 * `textLengthsOnly`: what each message looked like when kept, its estimate and its blocks'
 * lengths, to set a measuring read against a decoding one (test/*-lengths.test.ts).
 */
import type { ReadOptions } from '../../src/formats/reader.js';
import { slimmer } from '../../src/read/slim.js';
import type { AnyMessage, Message, Session } from '../../src/session/model.js';
import { estimateMessageTokens } from '../../src/tokens/estimate.js';

export async function readKept(read: (path: string, options: ReadOptions) => Promise<Session<AnyMessage>>, path: string, textLengthsOnly: boolean) {
  const seen: Message[] = [];
  const tokens: number[] = [];
  const slim = slimmer();
  const session = await read(path, {
    textLengthsOnly,
    keep: (message) => {
      seen.push(message);
      tokens.push(estimateMessageTokens(message));
      return slim(message);
    },
  });
  const lengths = seen.map((message) =>
    message.content.map((block) => (block.type === 'text' || block.type === 'thinking' ? block.text.length : block.type === 'tool_result' ? block.output.length : JSON.stringify(block).length)),
  );
  return { session, seen, tokens, lengths };
}
