/**
 * Following JSON's structure over raw UTF-8 bytes, without decoding or parsing: where a string or
 * a nested value ends. JSON's structural characters are ASCII, which no multi-byte UTF-8 sequence
 * contains, so the bytes can be walked as they are. What a value holds is left to JSON.parse;
 * json-cut.ts and json-document.ts use these to find the values worth parsing.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
const CR = 0x0d;
export const SPACE = 0x20;
const TAB = 0x09;

/** The index of the line's last byte that is not trailing whitespace (CRLF files end in CR). */
export function lastSignificant(bytes: Buffer): number {
  let last = bytes.length - 1;
  while (last >= 0 && (bytes[last] === CR || bytes[last] === SPACE || bytes[last] === TAB)) last--;
  return last;
}

/** Just past the string whose opening quote is at `at`; -1 when the bytes end first. */
export function stringEnd(bytes: Buffer, at: number): number {
  for (let quote = bytes.indexOf(QUOTE, at + 1); quote >= 0; quote = bytes.indexOf(QUOTE, quote + 1)) {
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
  }
  return -1;
}

/** Just past the JSON value starting at `at` (an object, an array or a string), else -1. */
export function nestedValueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return stringEnd(bytes, at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return -1;
  let depth = 0;
  for (let index = at; index < bytes.length; ) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      index = stringEnd(bytes, index);
      if (index < 0) return -1;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) return index + 1;
    index++;
  }
  return -1;
}

const U = 0x75;
/** The escapes JSON allows besides `\uXXXX`: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`. */
const SHORT_ESCAPES = new Uint8Array(256);
for (const char of '"\\/bfnrt') SHORT_ESCAPES[char.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const char of '0123456789abcdefABCDEF') HEX[char.charCodeAt(0)] = 1;

const HIGH_BITS = 0x80808080 | 0;
const CONTROL_BELOW = 0x20202020;
const NO_WORDS = new Int32Array(0);
/** Words counted before their lanes are added up: a lane (one byte) counts up to 255. */
const LANE_WORDS = 255;

/** The sum of a word's four byte lanes. */
function sumLanes(lanes: number): number {
  return (lanes & 0xff) + ((lanes >>> 8) & 0xff) + ((lanes >>> 16) & 0xff) + (lanes >>> 24);
}

/** What one byte takes off the byte count: a continuation byte one, a four-byte lead adds one back; NaN for a control byte. */
function byteSaving(byte: number): number {
  if (byte < 0x20) return Number.NaN;
  if ((byte & 0xc0) === 0x80) return 1;
  return byte >= 0xf0 ? -1 : 0;
}

/**
 * The UTF-16 length of the JSON string whose text (between its quotes) is bytes [from, to),
 * exactly as JSON.parse decodes it, without decoding it; -1 when JSON.parse would refuse it (a
 * raw control character, an escape JSON does not have). The bytes must be valid UTF-8 (the
 * caller checks the line: `isUtf8`), so every byte is one unit but continuation bytes (none) and
 * the leads of four-byte sequences (two: a surrogate pair); an escape is one unit (`\uXXXX`
 * too, a lone surrogate included). Two passes: the bytes four at a time, without a branch (each
 * byte's marks added up in its own lane of a word, the lanes summed every 255 words), then the
 * backslashes by indexOf (looking at each word's bytes for them cost more than indexOf).
 */
export function jsonStringLength(bytes: Buffer, from: number, to: number): number {
  // Whole words where they lie on the buffer's 4-byte grid, the bytes either side one by one.
  const gridStart = Math.min(to, from + ((4 - ((bytes.byteOffset + from) & 3)) & 3));
  const count = (to - gridStart) >> 2;
  const words = count > 0 ? new Int32Array(bytes.buffer, bytes.byteOffset + gridStart, count) : NO_WORDS;
  let saved = 0;
  let control = 0;
  for (let index = 0; index < count; ) {
    const stop = Math.min(count, index + LANE_WORDS);
    let continuations = 0;
    let fourByteLeads = 0;
    for (; index < stop; index++) {
      const word = words[index]!;
      control |= (word - CONTROL_BELOW) & ~word;
      // Bit 7 of a lane: its byte's top two bits are set (the lead of a multi-byte sequence).
      const lead = word & (word << 1);
      continuations = (continuations + (((word ^ lead) & HIGH_BITS) >>> 7)) | 0;
      fourByteLeads = (fourByteLeads + ((lead & (lead << 2) & HIGH_BITS) >>> 7)) | 0;
    }
    saved += sumLanes(continuations) - sumLanes(fourByteLeads);
  }
  if ((control & HIGH_BITS) !== 0) return -1;
  for (let at = from; at < gridStart; at++) saved += byteSaving(bytes[at]!);
  for (let at = gridStart + 4 * count; at < to; at++) saved += byteSaving(bytes[at]!);
  if (Number.isNaN(saved)) return -1;
  for (let at = bytes.indexOf(BACKSLASH, from); at >= 0 && at < to; at = bytes.indexOf(BACKSLASH, at)) {
    const kind = bytes[at + 1]!;
    if (kind === U) {
      if (at + 6 > to || !HEX[bytes[at + 2]!] || !HEX[bytes[at + 3]!] || !HEX[bytes[at + 4]!] || !HEX[bytes[at + 5]!]) return -1;
      saved += 5;
      at += 6;
    } else {
      if (at + 2 > to || !SHORT_ESCAPES[kind]) return -1;
      saved += 1;
      at += 2;
    }
  }
  return to - from - saved;
}
