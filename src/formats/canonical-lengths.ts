/**
 * Measuring instead of decoding, for our canonical format: in a read that only measures text
 * (ReadOptions.textLengthsOnly), a line's long texts (`content` written as a string, a `text` or
 * `thinking` block's `text`, a `tool_result`'s `output`) are sized from the line's bytes
 * (json-bytes.ts jsonStringLength) and handed to JSON.parse as `""`; the parsed line then gets a
 * stand-in of the same UTF-16 length in their place (claude-code-lengths.ts measuredText). Those
 * texts are nearly all of a canonical file's bytes, and decoding and parsing them most of its
 * reading time.
 *
 * The walk follows the line as JSON.stringify writes it: no space between tokens, keys without
 * escapes, a block's `type` its first key. A string is measured only where the walk proves its
 * place: the top-level `content`, or a key of an object directly in the top-level `content`
 * array. Anything else (a space, an escaped key, `content` or a measured key twice, a line that
 * does not end where its object does, a string JSON.parse would refuse, invalid UTF-8) leaves the
 * line to be parsed whole, so its values and its errors are JSON.parse's own.
 */
import { MEASURED_MIN_BYTES, measuredText } from './claude-code-lengths.js';
import type { LineCutter, MeasuredCut, SkippedLine } from './json-cut.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, jsonStringLength, lastSignificant, nestedValueEnd, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-bytes.js';

const KEY = {
  content: Buffer.from('content'),
  type: Buffer.from('type'),
  text: Buffer.from('text'),
  output: Buffer.from('output'),
} as const;

/** The key measured in a block, by the block's type. */
const MEASURED_KEY: ReadonlyMap<string, Buffer> = new Map([
  ['text', KEY.text],
  ['thinking', KEY.text],
  ['tool_result', KEY.output],
]);

/** A string measured: its bytes [from, to) with the quotes, and where its stand-in goes (block -1: `content` itself). */
interface Measured {
  readonly from: number;
  readonly to: number;
  readonly block: number;
  readonly key: string;
  readonly length: number;
}

/** A walk that met something it does not prove. */
const GIVE_UP = -1;

/** Whether bytes [from, to) are exactly `key`. */
function isKey(bytes: Buffer, from: number, to: number, key: Buffer): boolean {
  return to - from === key.length && bytes.compare(key, 0, key.length, from, to) === 0;
}

/** Just past a number, `true`, `false` or `null` starting at `at` (its end is checked by the caller). */
function literalEnd(bytes: Buffer, at: number): number {
  let index = at;
  for (; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || byte === QUOTE || byte === OPEN_BRACE || byte === OPEN_BRACKET || byte === COLON || byte! <= 0x20) break;
  }
  return index > at ? index : GIVE_UP;
}

/** Just past the value starting at `at`, whatever it is. */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE || first === OPEN_BRACE || first === OPEN_BRACKET) return nestedValueEnd(bytes, at);
  return literalEnd(bytes, at);
}

/** A key at `at` (its opening quote), without escapes, followed by a colon: where its name ends, or GIVE_UP. */
function keyEnd(bytes: Buffer, at: number): number {
  if (bytes[at] !== QUOTE) return GIVE_UP;
  const end = stringEnd(bytes, at);
  if (end < 0 || bytes[end] !== COLON) return GIVE_UP;
  const backslash = bytes.indexOf(BACKSLASH, at + 1);
  return backslash >= 0 && backslash < end ? GIVE_UP : end;
}

/**
 * The string at `at` measured into `found` if it is long enough; just past it, or GIVE_UP when it
 * is not a string JSON.parse takes.
 */
function measure(bytes: Buffer, at: number, block: number, key: string, found: Measured[]): number {
  const end = stringEnd(bytes, at);
  if (end < 0) return GIVE_UP;
  if (end - at < MEASURED_MIN_BYTES) return end;
  const length = jsonStringLength(bytes, at + 1, end - 1);
  if (length < 0) return GIVE_UP;
  found.push({ from: at, to: end, block, key, length });
  return end;
}

/** An object of the `content` array at `at`, its measured key's string measured; just past it, or GIVE_UP. */
function walkBlock(bytes: Buffer, at: number, block: number, found: Measured[]): number {
  // The type first, a plain string.
  let index = at + 1;
  let end = keyEnd(bytes, index);
  if (end < 0 || !isKey(bytes, index + 1, end - 1, KEY.type) || bytes[end + 1] !== QUOTE) return valueEnd(bytes, at);
  const typeEnd = stringEnd(bytes, end + 1);
  if (typeEnd < 0) return GIVE_UP;
  const measured = MEASURED_KEY.get(bytes.toString('latin1', end + 2, typeEnd - 1));
  if (measured === undefined) return valueEnd(bytes, at);
  let seen = false;
  for (index = typeEnd; bytes[index] === COMMA; ) {
    end = keyEnd(bytes, index + 1);
    if (end < 0) return GIVE_UP;
    const name = index + 2;
    // A second type, or a second measured key, is one JSON.parse keeps the last of.
    if (isKey(bytes, name, end - 1, KEY.type)) return GIVE_UP;
    if (isKey(bytes, name, end - 1, measured)) {
      if (seen) return GIVE_UP;
      seen = true;
      index = bytes[end + 1] === QUOTE ? measure(bytes, end + 1, block, measured.toString('latin1'), found) : valueEnd(bytes, end + 1);
    } else {
      index = valueEnd(bytes, end + 1);
    }
    if (index < 0) return GIVE_UP;
  }
  return bytes[index] === CLOSE_BRACE ? index + 1 : GIVE_UP;
}

/** The top-level `content` value at `at` (a string, or an array of blocks); just past it, or GIVE_UP. */
function walkContent(bytes: Buffer, at: number, found: Measured[]): number {
  if (bytes[at] === QUOTE) return measure(bytes, at, -1, 'content', found);
  if (bytes[at] !== OPEN_BRACKET) return GIVE_UP;
  let index = at + 1;
  if (bytes[index] === CLOSE_BRACKET) return index + 1;
  for (let block = 0; ; block++) {
    index = bytes[index] === OPEN_BRACE ? walkBlock(bytes, index, block, found) : valueEnd(bytes, index);
    if (index < 0) return GIVE_UP;
    if (bytes[index] === CLOSE_BRACKET) return index + 1;
    if (bytes[index] !== COMMA) return GIVE_UP;
    index++;
  }
}

/** The measured strings of a line, or null when the walk does not prove the line's shape. */
function measuredStrings(bytes: Buffer): Measured[] | null {
  const last = lastSignificant(bytes);
  if (bytes[0] !== OPEN_BRACE || bytes[last] !== CLOSE_BRACE || bytes[1] === CLOSE_BRACE) return null;
  const found: Measured[] = [];
  let content = false;
  for (let index = 1; ; ) {
    const end = keyEnd(bytes, index);
    if (end < 0) return null;
    if (isKey(bytes, index + 1, end - 1, KEY.content)) {
      if (content) return null;
      content = true;
      index = walkContent(bytes, end + 1, found);
    } else {
      index = valueEnd(bytes, end + 1);
    }
    if (index < 0) return null;
    if (bytes[index] === COMMA) index++;
    else if (index === last && bytes[index] === CLOSE_BRACE) return found;
    else return null;
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
    if (!utf8) return null;
    const found = measuredStrings(bytes);
    if (found === null || found.length === 0) return null;
    let text = '';
    let from = 0;
    for (const span of found) {
      text += `${bytes.toString('utf8', from, span.from)}""`;
      from = span.to;
    }
    text += bytes.toString('utf8', from, bytes.length);
    return { text, restore: restorer(found) };
  }
}
