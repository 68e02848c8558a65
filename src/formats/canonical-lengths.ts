/**
 * Measuring instead of decoding, for our canonical format: in a read that only measures text
 * (ReadOptions.textLengthsOnly), a line's long texts (`content` written as a string, a `text` or
 * `thinking` block's `text`, a `tool_result`'s `output`) are sized from the line's bytes
 * (json-bytes.ts jsonStringLength) and handed to JSON.parse as `""`; the parsed line then gets a
 * stand-in of the same UTF-16 length in their place (json-walk.ts measuredText). Those texts
 * are nearly all of a canonical file's bytes, and decoding and parsing them most of its reading
 * time.
 *
 * The walk (json-walk.ts) follows the line as JSON.stringify writes it: no space between tokens,
 * keys without escapes, and here a block's `type` its first key. A string is measured only where
 * the walk proves its place: the top-level `content`, or a key of an object directly in the top-level `content`
 * array. Anything else (a space, an escaped key, `content` or a measured key twice, a line that
 * does not end where its object does, a string JSON.parse would refuse, invalid UTF-8) leaves the
 * line to be parsed whole, so its values and its errors are JSON.parse's own.
 */
import { OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json/json-bytes.js';
import type { LineCutter, MeasuredCut, SkippedLine } from './json/json-cut.js';
import type { LeftOut } from './json/json-walk.js';
import { certainly, equalBytes, JsonWalk, measuredText, textWithout, UNCERTAIN } from './json/json-walk.js';

const KEY = {
  content: Buffer.from('content'),
  type: Buffer.from('type'),
} as const;

/** How a measured block starts: its `type` first, a string. */
const TYPE_FIRST = Buffer.from('{"type":"');

/** The key measured in a block, by the block's type. */
const MEASURED_KEY: ReadonlyMap<string, Buffer> = new Map([
  ['text', Buffer.from('text')],
  ['thinking', Buffer.from('text')],
  ['tool_result', Buffer.from('output')],
]);

/** A string measured: its bytes with the quotes, and where its stand-in goes (block -1: `content` itself). */
interface Measured extends LeftOut {
  readonly block: number;
  readonly key: string;
  readonly length: number;
}

/** Follows one canonical line; throws UNCERTAIN at anything it does not expect. */
class CanonicalWalk extends JsonWalk {
  readonly found: Measured[] = [];

  /** The whole line: its measured strings, in order. */
  line(): readonly Measured[] {
    this.member(KEY.content, () => {
      const first = this.bytes[this.at];
      if (first === QUOTE) this.measure(-1, 'content');
      else if (first === OPEN_BRACKET) this.array((index) => this.block(index));
      else this.skipValue();
    });
    this.ended();
    return this.found;
  }

  /** The string value here, measured into `found` if it is long enough. */
  private measure(block: number, key: string): void {
    const value = this.stringValue();
    const length = value === null ? null : this.measuredLength(value);
    if (value !== null && length !== null) this.found.push({ from: value.from, to: value.to, drop: false, block, key, length });
  }

  /** The key a block starting here measures (its first member a plain `"type"` string that names one), or null. */
  private measuredKey(): Buffer | null {
    const { bytes, at } = this;
    if (!equalBytes(bytes, at, at + TYPE_FIRST.length, TYPE_FIRST)) return null;
    const end = stringEnd(bytes, at + TYPE_FIRST.length - 1);
    if (end < 0) throw UNCERTAIN;
    return MEASURED_KEY.get(bytes.toString('latin1', at + TYPE_FIRST.length, end - 1)) ?? null;
  }

  /** One block of `content`: a block whose type measures one of its keys gets it measured; any other is skipped whole. */
  private block(index: number): void {
    const measured = this.measuredKey();
    if (measured === null) {
      this.skipValue();
      return;
    }
    let first = true;
    let seen = false;
    this.object((from, to) => {
      const { bytes } = this;
      if (first) {
        // The type, read above.
        first = false;
        this.skipValue();
        return;
      }
      // A second type, or a second measured key, is one JSON.parse keeps the last of.
      if (equalBytes(bytes, from, to, KEY.type)) throw UNCERTAIN;
      if (equalBytes(bytes, from, to, measured)) {
        if (seen) throw UNCERTAIN;
        seen = true;
        this.measure(index, measured.toString('latin1'));
      } else this.skipValue();
    });
  }
}

/** Puts each measured string's stand-in back into the parsed line. */
function restorer(found: readonly Measured[]): (value: unknown) => void {
  return (value) => {
    const line = value as { content: unknown };
    for (const { block, key, length } of found) {
      if (block < 0) line.content = measuredText(length);
      else ((line.content as Record<string, unknown>[])[block]!)[key] = measuredText(length);
    }
  };
}

/** The cutter for a canonical read that only measures text; one serves every line of every file. */
export class CanonicalMeasuringCutter implements LineCutter {
  skip(): SkippedLine | null {
    return null;
  }

  cut(bytes: Buffer, utf8: boolean): MeasuredCut | null {
    // jsonStringLength counts valid UTF-8 only; a line with bad bytes is decoded with its replacements.
    if (!utf8 || bytes[0] !== OPEN_BRACE) return null;
    const found = certainly(() => new CanonicalWalk(bytes).line());
    return found === null || found.length === 0 ? null : { text: textWithout(bytes, found), restore: restorer(found) };
  }
}
