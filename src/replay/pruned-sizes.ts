/**
 * What a pruning preset (opencode) reads of the text: each message's estimate once a fixed
 * placeholder replaces its tool outputs (compaction/prune.ts placeholderTokens), taken while the
 * session is read. With it the replay reads lean (slim messages) and holds one number a message,
 * where it held the whole session's text to size the outputs it prunes.
 */
import type { MessageObserver } from '../read/index.js';
import type { Message } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { heuristicCounter } from '../tokens/estimate.js';
import { placeholderTokens, placeholderTokensFromLengths } from '../compaction/prune.js';

/** Each message's tokens with `placeholder` for its tool outputs, in session order (0 for a message without any). */
export interface PrunedSizes {
  readonly placeholder: string;
  readonly tokens: readonly number[];
}

/** Takes PrunedSizes while a read observes every message (read/index.ts MessageObserver). */
export class PrunedSizesObserver implements MessageObserver {
  /** The placeholder is sized from the block lengths the read hands over with chars/4 estimates. */
  readonly textLengthsOnly: boolean;
  private tokens: number[] = [];

  constructor(
    readonly placeholder: string,
    private readonly count: TextCounter = heuristicCounter,
  ) {
    this.textLengthsOnly = count === heuristicCounter;
  }

  observe(message: Message, lengths?: readonly number[]): void {
    // Only a message with tool outputs is ever pruned.
    if (!message.content.some((block) => block.type === 'tool_result')) this.tokens.push(0);
    else if (lengths && this.count === heuristicCounter) this.tokens.push(placeholderTokensFromLengths(message, lengths, this.placeholder));
    else this.tokens.push(placeholderTokens(message, this.placeholder, this.count));
  }

  select(order: readonly number[]): void {
    const observed = this.tokens;
    this.tokens = order.map((index) => observed[index]!);
  }

  sizes(): PrunedSizes {
    return { placeholder: this.placeholder, tokens: this.tokens };
  }
}
