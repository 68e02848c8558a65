/**
 * JSON over raw UTF-8 bytes in linear memory, for the line readers (claude.ts, codex.ts): a cursor, the
 * spaces between tokens, strings (validated, measured in UTF-16 units, hashed when asked),
 * numbers, literals, and any value skipped whole but validated as JSON.parse would validate it.
 * Every function moves the cursor `at` and returns false at anything JSON.parse refuses, or when
 * it runs into `limit` (then `starved` is set: more input might complete the value).
 *
 * A newline is never skipped as a space: a line ends at its first newline, as the JavaScript
 * reader splits lines, so nothing here reads past it (JSON strings cannot hold a raw one).
 */

/** The cursor, the end of the bytes there are, and whether a read ran into that end. */
export let at: usize = 0;
export let limit: usize = 0;
export let starved: bool = false;

export function setCursor(from: usize, to: usize): void {
  at = from;
  limit = to;
  starved = false;
}

export function moveTo(position: usize): void {
  at = position;
}

export const QUOTE: u32 = 0x22;
export const BACKSLASH: u32 = 0x5c;
export const OPEN_BRACE: u32 = 0x7b;
export const CLOSE_BRACE: u32 = 0x7d;
export const OPEN_BRACKET: u32 = 0x5b;
export const CLOSE_BRACKET: u32 = 0x5d;
export const COMMA: u32 = 0x2c;
export const COLON: u32 = 0x3a;
export const NEWLINE: u32 = 0x0a;

/** The next byte that is no space, tab or CR, with the cursor on it; -1 at `limit` (starved). */
export function peek(): i32 {
  while (at < limit) {
    const c = <u32>load<u8>(at);
    if (c != 0x20 && c != 0x09 && c != 0x0d) return <i32>c;
    at++;
  }
  starved = true;
  return -1;
}

// ---- strings ---------------------------------------------------------------------------------

/** The last string scanned: its text's bytes (between the quotes), flags, UTF-16 length and hash. */
export let textFrom: usize = 0;
export let textTo: usize = 0;
export let textFlags: u32 = 0;
export let textUnits: u32 = 0;
export let textHash: u64 = 0;

/** A string's text holds an escape (JavaScript decodes it with JSON.parse). */
export const ESCAPED: u32 = 1;
/** A string's text holds bytes beyond ASCII (JavaScript decodes it as UTF-8, else as Latin-1). */
export const WIDE: u32 = 2;

const FNV_OFFSET: u64 = 0xcbf29ce484222325;
const FNV_PRIME: u64 = 0x100000001b3;

/** A hash of UTF-16 code units as JSON.parse decodes them, so two spellings of one text hash alike. */
export function hashStart(): u64 {
  return FNV_OFFSET;
}

@inline
export function hashUnit(hash: u64, unit: u32): u64 {
  return (hash ^ <u64>unit) * FNV_PRIME;
}

@inline
function hashAscii(hash: u64, from: usize, to: usize): u64 {
  for (let p = from; p < to; p++) hash = (hash ^ <u64>load<u8>(p)) * FNV_PRIME;
  return hash;
}

@inline
function isContinuation(c: u32): bool {
  return (c & 0xc0) == 0x80;
}

/** The code point of the UTF-8 sequence at `p` (its lead `c` >= 0x80), its length in `sequenceLength`; -1 when invalid or cut by `limit`. */
let sequenceLength: usize = 0;
function decodeSequence(p: usize, c: u32): i32 {
  let length: usize;
  let low: u32 = 0x80;
  let high: u32 = 0xbf;
  let point: u32;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
    point = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    point = c & 0x0f;
    if (c == 0xe0) low = 0xa0;
    else if (c == 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    point = c & 0x07;
    if (c == 0xf0) low = 0x90;
    else if (c == 0xf4) high = 0x8f;
  } else return -1;
  if (p + length > limit) {
    starved = true;
    return -1;
  }
  const second = <u32>load<u8>(p + 1);
  if (second < low || second > high) return -1;
  point = (point << 6) | (second & 0x3f);
  for (let index: usize = 2; index < length; index++) {
    const next = <u32>load<u8>(p + index);
    if (!isContinuation(next)) return -1;
    point = (point << 6) | (next & 0x3f);
  }
  sequenceLength = length;
  return <i32>point;
}

@inline
function hexValue(c: u32): i32 {
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30);
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return <i32>(lower - 0x61 + 10);
  return -1;
}

/** The code unit of the escape at `p` (a backslash), its length in `sequenceLength`; -1 when JSON has no such escape. */
function decodeEscape(p: usize): i32 {
  if (p + 2 > limit) {
    starved = true;
    return -1;
  }
  const kind = <u32>load<u8>(p + 1);
  sequenceLength = 2;
  switch (kind) {
    case 0x22:
    case 0x5c:
    case 0x2f:
      return <i32>kind;
    case 0x62:
      return 0x08;
    case 0x66:
      return 0x0c;
    case 0x6e:
      return 0x0a;
    case 0x72:
      return 0x0d;
    case 0x74:
      return 0x09;
    case 0x75: {
      if (p + 6 > limit) {
        starved = true;
        return -1;
      }
      let unit = 0;
      for (let index: usize = 2; index < 6; index++) {
        const digit = hexValue(<u32>load<u8>(p + index));
        if (digit < 0) return -1;
        unit = (unit << 4) | digit;
      }
      sequenceLength = 6;
      return unit;
    }
  }
  return -1;
}

const QUOTES = i8x16.splat(0x22);
const BACKSLASHES = i8x16.splat(0x5c);
const SPACES = i8x16.splat(0x20);

/**
 * The string whose opening quote is under the cursor: validated (escapes, raw control
 * characters, UTF-8) and measured in the UTF-16 units JSON.parse would give it; hashed too when
 * `hashing` (hashUnit over those units, from `seed`: a text joined from parts goes on from the
 * hash of the parts before it). The cursor ends just past its closing quote.
 */
export function scanString(hashing: bool, seed: u64): bool {
  let p = at + 1;
  const from = p;
  let units: u32 = 0;
  let flags: u32 = 0;
  let hash = seed;
  while (true) {
    // Sixteen bytes at a time up to the first quote, backslash, control or non-ASCII byte.
    while (p + 16 <= limit) {
      const v = v128.load(p);
      const special = i8x16.bitmask(v128.or(v128.or(i8x16.eq(v, QUOTES), i8x16.eq(v, BACKSLASHES)), i8x16.lt_u(v, SPACES))) | i8x16.bitmask(v);
      if (special == 0) {
        if (hashing) hash = hashAscii(hash, p, p + 16);
        units += 16;
        p += 16;
        continue;
      }
      const plain = <usize>ctz(special);
      if (hashing) hash = hashAscii(hash, p, p + plain);
      units += <u32>plain;
      p += plain;
      break;
    }
    if (p >= limit) {
      starved = true;
      return false;
    }
    const c = <u32>load<u8>(p);
    if (c == QUOTE) break;
    if (c < 0x20) return false;
    if (c < 0x80) {
      if (c == BACKSLASH) {
        const unit = decodeEscape(p);
        if (unit < 0) return false;
        flags |= ESCAPED;
        if (hashing) hash = hashUnit(hash, <u32>unit);
        units++;
        p += sequenceLength;
      } else {
        if (hashing) hash = hashUnit(hash, c);
        units++;
        p++;
      }
      continue;
    }
    const point = decodeSequence(p, c);
    if (point < 0) return false;
    flags |= WIDE;
    if (point >= 0x10000) {
      units += 2;
      if (hashing) {
        const offset = <u32>point - 0x10000;
        hash = hashUnit(hashUnit(hash, 0xd800 + (offset >> 10)), 0xdc00 + (offset & 0x3ff));
      }
    } else {
      units++;
      if (hashing) hash = hashUnit(hash, <u32>point);
    }
    p += sequenceLength;
  }
  textFrom = from;
  textTo = p;
  textFlags = flags;
  textUnits = units;
  textHash = hash;
  at = p + 1;
  return true;
}

/**
 * Whether the `length` bytes at `a` and at `b` are the same: eight at a time (keys are short; a
 * call to memory.compare for each was a tenth of a scan). Both may be read up to seven bytes past
 * their end: the input has slack after it, names are padded (claude.ts Name).
 */
@inline
export function sameBytes(a: usize, b: usize, length: usize): bool {
  while (length >= 8) {
    if (load<u64>(a) != load<u64>(b)) return false;
    a += 8;
    b += 8;
    length -= 8;
  }
  if (length == 0) return true;
  const mask: u64 = (<u64>1 << (<u64>length * 8)) - 1;
  return ((load<u64>(a) ^ load<u64>(b)) & mask) == 0;
}

/** A key whose text is exactly `name` (bytes at `name`, `length` long), with no escape in it. */
@inline
export function textIs(name: usize, length: usize): bool {
  return textTo - textFrom == length && textFlags == 0 && sameBytes(textFrom, name, length);
}

/** A name's UTF-8 bytes, with eight bytes of room after them (sameBytes reads a word at a time). */
export class Name {
  readonly at: usize;
  readonly length: usize;
  constructor(text: string) {
    const bytes = String.UTF8.encode(text);
    this.length = <usize>bytes.byteLength;
    this.at = heap.alloc(this.length + 8);
    memory.copy(this.at, changetype<usize>(bytes), this.length);
    memory.fill(this.at + this.length, 0, 8);
  }
}

/** Whether the last string scanned is exactly `name`, with no escape in it. */
@inline
export function is(name: Name): bool {
  return textIs(name.at, name.length);
}

/**
 * A string's place into a record's two words at `slot` (from `into`): its offset from `origin`,
 * and its byte length with `escaped` and `wide` set above it as its text `flags` say. False when
 * it is longer than `most` bytes. The layouts (layout.ts, codex-layout.ts) give the constants.
 */
@inline
export function putPlace(into: usize, slot: i32, from: usize, to: usize, flags: u32, origin: usize, most: i32, escaped: i32, wide: i32): bool {
  const length = to - from;
  if (length > <usize>most) return false;
  let bits: i32 = 0;
  if ((flags & ESCAPED) != 0) bits |= escaped;
  if ((flags & WIDE) != 0) bits |= wide;
  store<i32>(into + (<usize>slot << 2), <i32>(from - origin));
  store<i32>(into + (<usize>(slot + 1) << 2), <i32>length | bits);
  return true;
}

// ---- objects -----------------------------------------------------------------------------------

/** The key under the cursor (a string; false if it has an escape: a read key must be certain) and its colon. */
export function key(): bool {
  if (!scanString(false, FNV_OFFSET) || (textFlags & ESCAPED) != 0) return false;
  if (peek() != <i32>COLON) return false;
  at++;
  return peek() >= 0;
}

/** `__proto__`: a key both scanners leave to JavaScript (JSON.parse makes it an own key, which object code treats unlike any other). */
export const PROTO = new Name('__proto__');

/** A key, as key() reads it, that is not `__proto__`. */
@inline
export function plainKey(): bool {
  return key() && !is(PROTO);
}

/** Set by openObject and nextMember: the object just read has ended. */
export let ended: bool = false;

/** After a member: a comma (true, the next key follows) or the object's end (`ended`). */
export function nextMember(): bool {
  const c = peek();
  if (c == <i32>COMMA) {
    at++;
    ended = false;
    return peek() == <i32>QUOTE;
  }
  if (c == <i32>CLOSE_BRACE) {
    at++;
    ended = true;
    return true;
  }
  return false;
}

/** An object's opening brace is under the cursor: true when it is empty (and skipped) or a key follows, with `ended` set. */
export function openObject(): bool {
  at++;
  const c = peek();
  if (c == <i32>CLOSE_BRACE) {
    at++;
    ended = true;
    return true;
  }
  ended = false;
  return c == <i32>QUOTE;
}

/**
 * `seen` (bits of the keys an object has shown) with `bit` added, or -1 when that key was seen
 * before (a key written twice is JavaScript's to read: JSON.parse keeps the last). A `bit` of 0
 * (a key nobody reads) leaves `seen` as it is.
 */
@inline
export function seenOnce(seen: i32, bit: i32): i32 {
  return (seen & bit) != 0 ? -1 : seen | bit;
}

/** After a line's value: only spaces until the newline, or until the input's end when it is `final`. */
export function lineEnds(final: bool): bool {
  const c = peek();
  return c == <i32>NEWLINE || (c < 0 && final);
}

// ---- numbers and literals --------------------------------------------------------------------

/** The last number scanned: a plain count (digits only, at most 15) and its value, or not. */
export let numberIsCount: bool = false;
export let numberValue: f64 = 0;

@inline
function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

/** Digits from `p` on; returns where they end (== p: none). Starved when they run into `limit`. */
function digits(p: usize): usize {
  while (p < limit && isDigit(<u32>load<u8>(p))) p++;
  if (p >= limit) starved = true;
  return p;
}

/** The number under the cursor, by JSON's grammar. */
export function scanNumber(): bool {
  let p = at;
  let c = <u32>load<u8>(p);
  const negative = c == 0x2d;
  if (negative) {
    p++;
    if (p >= limit) {
      starved = true;
      return false;
    }
    c = <u32>load<u8>(p);
  }
  const intFrom = p;
  if (c == 0x30) p++;
  else if (isDigit(c)) p = digits(p + 1);
  else return false;
  if (starved) return false;
  const intTo = p;
  let plain = !negative;
  c = <u32>load<u8>(p);
  if (c == 0x2e) {
    plain = false;
    const fraction = p + 1;
    p = digits(fraction);
    if (starved || p == fraction) return false;
    c = <u32>load<u8>(p);
  }
  if (c == 0x65 || c == 0x45) {
    plain = false;
    p++;
    if (p >= limit) {
      starved = true;
      return false;
    }
    c = <u32>load<u8>(p);
    if (c == 0x2b || c == 0x2d) p++;
    const exponent = p;
    p = digits(exponent);
    if (starved || p == exponent) return false;
  }
  numberIsCount = plain && intTo - intFrom <= 15;
  if (numberIsCount) {
    let value: f64 = 0;
    for (let digit = intFrom; digit < intTo; digit++) value = value * 10 + <f64>(<u32>load<u8>(digit) - 0x30);
    numberValue = value;
  }
  at = p;
  return true;
}

/** `true`, `false` or `null` under the cursor (its first byte `c`): 1, 0 or -1 in `literalValue`. */
export let literalValue: i32 = 0;
export function scanLiteral(c: u32): bool {
  let length: usize;
  let word: u64;
  if (c == 0x74) {
    length = 4;
    word = 0x65757274; // "true"
    literalValue = 1;
  } else if (c == 0x66) {
    length = 5;
    word = 0x65736c6166; // "false"
    literalValue = 0;
  } else if (c == 0x6e) {
    length = 4;
    word = 0x6c6c756e; // "null"
    literalValue = -1;
  } else return false;
  if (at + length > limit) {
    // A cut literal whose bytes so far match might still complete.
    for (let p = at; p < limit; p++) if (<u64>load<u8>(p) != ((word >> (<u64>(p - at) * 8)) & 0xff)) return false;
    starved = true;
    return false;
  }
  for (let index: usize = 0; index < length; index++) if (<u64>load<u8>(at + index) != ((word >> (<u64>index * 8)) & 0xff)) return false;
  at += length;
  return true;
}

// ---- any value, validated ----------------------------------------------------------------------

/** How deep skipValue nests before it gives up (the line goes to JavaScript, which says what is wrong). */
const MAX_DEPTH: i32 = 512;
/** One byte a level: 1 an object, 0 an array. */
const nesting = new StaticArray<u8>(MAX_DEPTH);

/** A scalar under the cursor (first byte `c`): a string, a number or a literal. */
function scanScalar(c: u32): bool {
  if (c == QUOTE) return scanString(false, FNV_OFFSET);
  if (c == 0x2d || isDigit(c)) return scanNumber();
  return scanLiteral(c);
}

const EXPECT_VALUE = 0;
const EXPECT_KEY = 1;
const AFTER_VALUE = 2;

/** Any JSON value under the cursor (after spaces), validated and left behind. */
export function skipValue(): bool {
  let depth: i32 = 0;
  let state = EXPECT_VALUE;
  while (true) {
    let c = peek();
    if (c < 0) return false;
    if (state == EXPECT_VALUE) {
      if (c == OPEN_BRACE || c == OPEN_BRACKET) {
        if (depth == MAX_DEPTH) return false;
        const object = c == OPEN_BRACE;
        unchecked((nesting[depth++] = object ? 1 : 0));
        at++;
        c = peek();
        if (c < 0) return false;
        if (c == (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
          at++;
          depth--;
          state = AFTER_VALUE;
        } else state = object ? EXPECT_KEY : EXPECT_VALUE;
        continue;
      }
      if (!scanScalar(<u32>c)) return false;
      state = AFTER_VALUE;
    } else if (state == EXPECT_KEY) {
      if (c != QUOTE || !scanString(false, FNV_OFFSET)) return false;
      if (peek() != COLON) return false;
      at++;
      state = EXPECT_VALUE;
    } else {
      if (depth == 0) return true;
      const object = unchecked(nesting[depth - 1]) == 1;
      if (c == COMMA) {
        at++;
        state = object ? EXPECT_KEY : EXPECT_VALUE;
      } else if (c == (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
        at++;
        depth--;
      } else return false;
    }
  }
}

// ---- lines -----------------------------------------------------------------------------------

const NEWLINES = i8x16.splat(0x0a);

/** The first newline at or after `from`, or `limit` when there is none. */
export function newlineFrom(from: usize): usize {
  let p = from;
  while (p + 16 <= limit) {
    const mask = i8x16.bitmask(i8x16.eq(v128.load(p), NEWLINES));
    if (mask != 0) return p + <usize>ctz(mask);
    p += 16;
  }
  while (p < limit && <u32>load<u8>(p) != NEWLINE) p++;
  return p;
}

/** Whether the bytes [from, to) are only spaces, tabs and CRs (a blank line). */
export function blank(from: usize, to: usize): bool {
  for (let p = from; p < to; p++) {
    const c = <u32>load<u8>(p);
    if (c != 0x20 && c != 0x09 && c != 0x0d) return false;
  }
  return true;
}
