/**
 * Measuring instead of decoding: for a read whose messages are shown to ReadOptions.keep only
 * to be measured (`textLengthsOnly`: chars/4 estimates and inspect's block sizes), the long
 * strings of a Claude Code user line that nothing but their length is read of (a tool result's
 * output, a prompt's text) are sized from the line's bytes (json-bytes.ts jsonStringLength) and
 * handed to JSON.parse as `""`; the parsed line then gets a stand-in of the same UTF-16 length
 * in their place (`measuredText`). Tool results were 40% of the bytes of a Claude Code archive,
 * and decoding and parsing them most of its reading time.
 *
 * The line's structure is followed from its bytes (strings by their quotes, nesting by
 * brackets) and a string is measured only at a path this walk proves: the top-level `message`,
 * its `content` (a string, or blocks), a `text` block's `text`, a `thinking` block's `thinking`,
 * a `tool_result`'s `content` (a string, or its `text` parts' `text`). Never anything inside a
 * tool call's `input` (its JSON is measured whole and its file arguments read), never a compact
 * summary's text (read as the compaction's summary), and only on user lines: an assistant
 * response split over lines is merged by comparing its blocks' text (claude-code-messages.ts),
 * so its text stays, and an assistant line is not walked at all (see `mayHaveSpans`).
 * Anything the walk does not expect (spaces between tokens, a key written with an escape, a key
 * twice in an object where it matters, a line that does not end where its object does, a string
 * JSON.parse would refuse) leaves the line to be read as before (json-cut.ts's KeyCutter).
 */
import { COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json/json-bytes.js';
import { asRecord, sortUnlessOrdered } from './convert.js';
import type { KeyCutter, LineCutter, MeasuredCut, SkippedLine } from './json/json-cut.js';
import type { Candidate, LeftOut } from './json/json-walk.js';
import { certainly, equalBytes, JsonWalk, measuredText, textWithout, UNCERTAIN } from './json/json-walk.js';

/** Where a measured string goes back once the line is parsed: message.content, or a block's key, or a part's text. */
interface Placement {
  readonly block: number;
  readonly key: string;
  readonly part: number;
  readonly length: number;
}

/** A byte range of the line left out of the parsed text, and where its stand-in goes (none for a dropped one). */
interface Span extends LeftOut {
  readonly placement: Placement | null;
}

/** Spans by where they start. */
const byStart = (a: Span, b: Span): number => a.from - b.from;

const KEY = {
  message: Buffer.from('message'),
  type: Buffer.from('type'),
  content: Buffer.from('content'),
  text: Buffer.from('text'),
  thinking: Buffer.from('thinking'),
  toolUseResult: Buffer.from('toolUseResult'),
  isCompactSummary: Buffer.from('isCompactSummary'),
  user: Buffer.from('user'),
  toolResult: Buffer.from('tool_result'),
} as const;

/** Slots of a block's strings (LineWalk.block). */
const TYPE = 0;
const TEXT = 1;
const THINKING = 2;
const CONTENT = 3;

/** Follows one Claude Code line; throws UNCERTAIN at anything it does not expect. */
class LineWalk extends JsonWalk {
  /** The whole line, a user one (else it throws): its spans, sorted. */
  line(): Span[] {
    // Bits of the top-level keys seen once already (a second one is uncertain: JSON.parse keeps the last).
    let seen = 0;
    const once = (bit: number) => {
      if ((seen & bit) !== 0) throw UNCERTAIN;
      seen |= bit;
    };
    let messageSpans: Span[] = [];
    let cut: Span | null = null;
    this.object((from, to) => {
      const { bytes } = this;
      if (equalBytes(bytes, from, to, KEY.message)) {
        once(1);
        if (bytes[this.at] === OPEN_BRACE) messageSpans = this.message();
        else this.skipValue();
      } else if (equalBytes(bytes, from, to, KEY.type)) {
        once(2);
        const value = this.stringValue();
        // Another type of line (a progress line's type comes before its long data): given up at once.
        if (!value || !equalBytes(bytes, value.from + 1, value.to - 1, KEY.user)) throw UNCERTAIN;
      } else if (equalBytes(bytes, from, to, KEY.toolUseResult)) {
        once(4);
        // Cut with its key and the comma before it (a first key keeps the line as it is).
        const keyStart = from - 1;
        if (bytes[keyStart - 1] !== COMMA) throw UNCERTAIN;
        this.skipValue();
        cut = { from: keyStart - 1, to: this.at, drop: true, placement: null };
      } else if (equalBytes(bytes, from, to, KEY.isCompactSummary)) throw UNCERTAIN;
      else this.skipValue();
    });
    this.ended();
    // No top-level `type` (one that names another type has thrown above).
    if ((seen & 2) === 0) throw UNCERTAIN;
    const spans = cut ? [...messageSpans, cut] : messageSpans;
    // Mostly in order already (the message's spans, then toolUseResult after it).
    sortUnlessOrdered(spans, byStart);
    return spans;
  }

  /** The message object: the spans of its content's measured strings. */
  private message(): Span[] {
    const spans: Span[] = [];
    this.member(KEY.content, () => {
      const first = this.bytes[this.at];
      if (first === QUOTE) {
        const value = this.stringValue()!;
        this.measure(spans, value, -1, 'content', -1);
      } else if (first === OPEN_BRACKET) this.array((index) => this.block(spans, index));
      else this.skipValue();
    });
    return spans;
  }

  /** A string at a measured place: a span, when it is long enough and JSON.parse would take it. */
  private measure(spans: Span[], value: Candidate, block: number, key: string, part: number): void {
    const length = this.measuredLength(value);
    if (length !== null) spans.push({ from: value.from, to: value.to, drop: false, placement: { block, key, part, length } });
  }

  /** One content block: its type decides which of its strings are measured. */
  private block(spans: Span[], index: number): void {
    if (this.bytes[this.at] !== OPEN_BRACE) {
      this.skipValue();
      return;
    }
    // The block's strings by slot (TYPE, TEXT…); undefined: the key is not there.
    const found: (Candidate | null | undefined)[] = [undefined, undefined, undefined, undefined];
    let parts: Span[] | null = null;
    const take = (slot: number) => {
      if (found[slot] !== undefined) throw UNCERTAIN;
      found[slot] = this.stringValue();
    };
    this.object((from, to) => {
      const { bytes } = this;
      if (equalBytes(bytes, from, to, KEY.type)) take(TYPE);
      else if (equalBytes(bytes, from, to, KEY.text)) take(TEXT);
      else if (equalBytes(bytes, from, to, KEY.thinking)) take(THINKING);
      else if (equalBytes(bytes, from, to, KEY.content)) {
        if (found[CONTENT] !== undefined || parts) throw UNCERTAIN;
        if (bytes[this.at] === OPEN_BRACKET) {
          const partSpans: Span[] = [];
          this.array((part) => this.part(partSpans, index, part));
          parts = partSpans;
        } else take(CONTENT);
      } else this.skipValue();
    });
    const type = found[TYPE];
    if (!type) return;
    const typeIs = (name: Buffer) => equalBytes(this.bytes, type.from + 1, type.to - 1, name);
    const [, text, thinking, content] = found;
    if (typeIs(KEY.text) && text) this.measure(spans, text, index, 'text', -1);
    else if (typeIs(KEY.thinking)) {
      if (thinking) this.measure(spans, thinking, index, 'thinking', -1);
    } else if (typeIs(KEY.toolResult)) {
      if (content) this.measure(spans, content, index, 'content', -1);
      else if (parts) spans.push(...(parts as Span[]));
    }
  }

  /** One part of a tool result's content list: a `text` part's text is measured. */
  private part(spans: Span[], block: number, index: number): void {
    if (this.bytes[this.at] !== OPEN_BRACE) {
      this.skipValue();
      return;
    }
    let type: Candidate | null | undefined;
    let text: Candidate | null | undefined;
    this.object((from, to) => {
      if (equalBytes(this.bytes, from, to, KEY.type)) {
        if (type !== undefined) throw UNCERTAIN;
        type = this.stringValue();
      } else if (equalBytes(this.bytes, from, to, KEY.text)) {
        if (text !== undefined) throw UNCERTAIN;
        text = this.stringValue();
      } else this.skipValue();
    });
    if (type && text && equalBytes(this.bytes, type.from + 1, type.to - 1, KEY.text)) this.measure(spans, text, block, 'text', index);
  }
}

/** Puts each measured string's stand-in where the walk found it (the parsed line has `""` there). */
function placeAll(value: unknown, placements: readonly Placement[]): void {
  const message = asRecord(asRecord(value)?.['message']);
  if (!message) throw new Error('a measured line parsed to another shape than its bytes showed');
  for (const { block, key, part, length } of placements) {
    if (block < 0) {
      message['content'] = measuredText(length);
      continue;
    }
    const blocks = message['content'] as unknown[];
    let holder = asRecord(blocks[block]);
    if (part >= 0) holder = asRecord((holder?.['content'] as unknown[])[part]);
    if (!holder || holder[key] !== '') throw new Error('a measured line parsed to another shape than its bytes showed');
    holder[key] = measuredText(length);
  }
}

/**
 * Whether a walk of the line may find anything to leave out, from the first `"type":"` in its
 * head (KeyCutter.headType): `user` on a user line, whose type comes before its message. Any other
 * line (assistant lines, progress, attachments, system lines, a user line that names its type
 * late) goes to the usual cut without being walked: searching whole lines for the exact bytes
 * cost a third of what the walks saved. A wrong "no" only costs speed: the usual cut reads the
 * line whole. Assistant lines were walked for their thinking's `signature` (no reader reads it),
 * but parsing a signature costs less than the walk that would cut it: the synthetic corpus's
 * assistant lines with one (about 1.2 KB) took 29 ms walked against 11 ms parsed whole, and 43
 * against 14 with 2 KB signatures; the search for one on every assistant line cost 14 ms more.
 */
function mayHaveSpans(type: string | null): boolean {
  return type === 'user';
}

/**
 * The line cutter of a measured read: a user line is walked and its measured strings left out
 * (see the header); any other line, and any line the walk is not certain of, goes to the
 * reader's KeyCutter as in any read.
 */
export class MeasuringCutter implements LineCutter {
  constructor(private readonly cutter: KeyCutter) {}

  skip(bytes: Buffer, utf8: boolean): SkippedLine | null {
    return this.cutter.skip(bytes, utf8);
  }

  cut(bytes: Buffer, utf8: boolean): string | MeasuredCut | null {
    // Lengths are counted on valid UTF-8 only (a bad byte is replaced on decoding).
    if (!utf8 || bytes[0] !== OPEN_BRACE || !mayHaveSpans(this.cutter.headType(bytes))) return this.cutter.cut(bytes);
    const spans = certainly(() => new LineWalk(bytes).line());
    if (spans === null || spans.length === 0) return this.cutter.cut(bytes);
    const placements = spans.flatMap((span) => (span.placement ? [span.placement] : []));
    return { text: textWithout(bytes, spans), restore: (value) => placeAll(value, placements) };
  }
}
