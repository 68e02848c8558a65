/**
 * Claude Code lines, scanned: what the reader (src/formats/claude-code-scanned.ts) needs of each
 * line, as records (layout.ts), without a line being decoded or parsed in JavaScript. A line is
 * read here only when it is certainly what the JavaScript reader would make of JSON.parse's value;
 * anything else (a line that is no valid JSON, invalid UTF-8, a key written twice or with an
 * escape where a key is read, a value of an unexpected type, a block type the reader warns of or
 * turns into text, a compaction's boundary or summary) becomes a raw record, and JavaScript reads
 * that line as before, with its errors and warnings.
 *
 * What a line gives: its type, links (uuid, parentUuid, isSidechain), and for a user or assistant
 * line the billing fields (requestId, timestamp, forkedFrom, message id, model, stop_reason,
 * usage) and each content block: a text's UTF-16 length and, on a line that may be an assistant
 * one, a hash of its units (a response split over lines is merged by comparing its blocks), a
 * tool call's id, name and input's bytes, a tool result's id, error flag and output length.
 */
import {
  at, CLOSE_BRACKET, COMMA, literalValue, moveTo, newlineFrom, numberIsCount, numberValue, OPEN_BRACE, OPEN_BRACKET, peek, QUOTE, scanLiteral,
  scanNumber, scanString, setCursor, skipValue, textFlags, textFrom, textHash, textTo, textUnits, blank, NEWLINE, hashStart, hashUnit, ESCAPED,
  sameBytes, Name, is, key, plainKey, PROTO, nextMember, openObject, ended, putPlace, seenOnce, lineEnds,
} from './json';
import {
  BLOCK_HASH, BLOCK_ID, BLOCK_INPUT, BLOCK_NAME, BLOCK_TEXT, BLOCK_TEXT_STRING, BLOCK_THINKING, BLOCK_TOOL_RESULT, BLOCK_TOOL_USE, BLOCK_UNITS,
  BLOCK_WORDS, CHAT_WORDS, FLAG_ASSISTANT, FLAG_FINAL, FLAG_INPUT_OBJECT, FLAG_IS_ERROR, FLAG_SIDECHAIN, FLAG_TERMINATED, FLAG_USAGE,
  KIND_CHAT, KIND_LINK, KIND_RAW, LINK_WORDS, RAW_BYTES, RAW_OFFSET, RAW_WORDS, STRING_BYTES, STRING_ESCAPED, STRING_FORKED_FROM,
  STRING_MESSAGE_ID, STRING_MODEL, STRING_PARENT, STRING_REQUEST, STRING_TIMESTAMP, STRING_UUID, STRING_WIDE, USAGE_CACHE_READ,
  USAGE_CACHE_WRITE, USAGE_INPUT, USAGE_OUTPUT, USAGE_SPLIT, USAGE_WRITE_1H, USAGE_WRITE_5M, WORD_BLOCKS, WORD_LENGTH, WORD_LINE,
  WORD_USAGE_BITS, WORD_USAGE_COUNTS, WORDS_UUID, WORDS_PARENT, FLAG_UUID_WORDS, FLAG_PARENT_WORDS, FLAG_COMPACT_SUMMARY,
} from './layout';

// ---- names, as UTF-8 bytes -------------------------------------------------------------------

const TYPE = new Name('type');
const UUID = new Name('uuid');
const PARENT_UUID = new Name('parentUuid');
const LOGICAL_PARENT_UUID = new Name('logicalParentUuid');
const IS_SIDECHAIN = new Name('isSidechain');
const IS_COMPACT_SUMMARY = new Name('isCompactSummary');
const TIMESTAMP = new Name('timestamp');
const REQUEST_ID = new Name('requestId');
const FORKED_FROM = new Name('forkedFrom');
const MESSAGE = new Name('message');
const SUBTYPE = new Name('subtype');
const SESSION_ID = new Name('sessionId');
const CONTENT = new Name('content');
const ID = new Name('id');
const MODEL = new Name('model');
const STOP_REASON = new Name('stop_reason');
const USAGE = new Name('usage');
const INPUT_TOKENS = new Name('input_tokens');
const OUTPUT_TOKENS = new Name('output_tokens');
const CACHE_CREATION_INPUT_TOKENS = new Name('cache_creation_input_tokens');
const CACHE_READ_INPUT_TOKENS = new Name('cache_read_input_tokens');
const CACHE_CREATION = new Name('cache_creation');
const EPHEMERAL_5M = new Name('ephemeral_5m_input_tokens');
const EPHEMERAL_1H = new Name('ephemeral_1h_input_tokens');
const TEXT = new Name('text');
const THINKING = new Name('thinking');
const REDACTED_THINKING = new Name('redacted_thinking');
const NAME = new Name('name');
const INPUT = new Name('input');
const TOOL_USE = new Name('tool_use');
const TOOL_RESULT = new Name('tool_result');
const TOOL_USE_ID = new Name('tool_use_id');
const IS_ERROR = new Name('is_error');
const REFUSAL = new Name('refusal');
const IMAGE = new Name('image');
const DOCUMENT = new Name('document');
const CONTAINER_UPLOAD = new Name('container_upload');
const USER = new Name('user');
const ASSISTANT = new Name('assistant');
const SYSTEM = new Name('system');
const COMPACT_BOUNDARY = new Name('compact_boundary');
const INPUT_TEXT = new Name('input_text');
const OUTPUT_TEXT = new Name('output_text');
const SUMMARY_TEXT = new Name('summary_text');

// ---- the scan's state --------------------------------------------------------------------------

/** Where the chunk starts (strings are given from it), and where records go. */
let base: usize = 0;
let out: usize = 0;
let outLimit: usize = 0;
/** The record of the line being read. */
let record: usize = 0;
/** Set when the records ran out of room: the line is left for the next call. */
export let full: bool = false;

/** What a line's top level said. */
const TYPE_NONE: i32 = 0;
const TYPE_USER: i32 = 1;
const TYPE_ASSISTANT: i32 = 2;
const TYPE_SYSTEM: i32 = 3;
const TYPE_OTHER: i32 = 4;
let lineType: i32 = TYPE_NONE;
let boundary: bool = false;
/** A value a user or assistant line cannot have where the JavaScript reader checks it (its schema decides). */
let odd: bool = false;
let compactSummary: bool = false;
/** A tool result's output is a list of parts: its joined text is no one string of the line (a summary's texts are read whole). */
let joinedOutput: bool = false;
let messageObject: bool = false;
let blockCount: i32 = 0;

@inline
function word(index: i32, value: i32): void {
  store<i32>(record + (<usize>index << 2), value);
}

@inline
function wordAt(index: i32): i32 {
  return load<i32>(record + (<usize>index << 2));
}

/** The string just scanned into two words of the record at `slot` (the words from `into`). */
function putString(into: usize, slot: i32): bool {
  keep(scannedText);
  return putText(into, slot, scannedText);
}

/** A string, null, or (false) anything else, into a record's string slot. */
function stringOrNull(into: usize, slot: i32, c: i32): bool {
  if (c == <i32>QUOTE) return scanString(false, hashStart()) && putString(into, slot);
  return scanLiteral(<u32>c) && literalValue == -1;
}

/**
 * The string just scanned, when it is a uuid in its usual spelling (lowercase hex digits,
 * 8-4-4-4-12, no escape), as four words at `slot`: each word eight digits, the first one highest,
 * as src/formats/uuid-table.ts makes them from the string. False for any other string.
 */
function uuidWords(slot: i32): bool {
  if (textFlags != 0 || textTo - textFrom != 36) return false;
  let p = textFrom;
  for (let index = 0; index < 4; index++) {
    let value: u32 = 0;
    for (let digits = 0; digits < 8; ) {
      const place = <i32>(p - textFrom);
      const c = <u32>load<u8>(p++);
      if (place == 8 || place == 13 || place == 18 || place == 23) {
        if (c != 0x2d) return false;
        continue;
      }
      let digit: u32 = 0;
      if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) digit = c - 0x57;
      else return false;
      value = (value << 4) | digit;
      digits++;
    }
    word(slot + index, <i32>value);
  }
  return true;
}

/** A link (uuid or parent) into its string slot and, when it is a uuid in its usual spelling, its words (`flag` set). */
function link(slot: i32, words: i32, flag: i32, c: i32): bool {
  if (!stringOrNull(record, slot, c)) return false;
  if (c == <i32>QUOTE && uuidWords(words)) word(0, wordAt(0) | flag);
  return true;
}

// ---- usage ----------------------------------------------------------------------------------

/** A count of the usage (a non-negative safe integer, or null: left out), into its slot. */
function count(bits: i32, index: i32): i32 {
  const c = peek();
  if (c == 0x6e) return scanLiteral(<u32>c) ? bits : -1;
  if (c < 0 || !scanNumber() || !numberIsCount) return -1;
  store<i64>(record + (<usize>(WORD_USAGE_COUNTS + 2 * index) << 2), <i64>numberValue);
  return bits | (1 << index);
}

/** The usage object's `cache_creation`: the bits it adds, or -1. */
function cacheSplit(bits: i32): i32 {
  const c = peek();
  if (c == 0x6e) return scanLiteral(<u32>c) ? bits : -1;
  if (c != <i32>OPEN_BRACE) return -1;
  bits |= 1 << USAGE_SPLIT;
  if (!openObject()) return -1;
  let seen = 0;
  while (!ended) {
    if (!plainKey()) return -1;
    if (is(EPHEMERAL_5M)) {
      if ((seen & 1) != 0) return -1;
      seen |= 1;
      bits = count(bits, USAGE_WRITE_5M);
    } else if (is(EPHEMERAL_1H)) {
      if ((seen & 2) != 0) return -1;
      seen |= 2;
      bits = count(bits, USAGE_WRITE_1H);
    } else if (!skipValue()) return -1;
    if (bits < 0 || !nextMember()) return -1;
  }
  return bits;
}

/** `message.usage`: null, or an object whose counts are plain (else the line is left to JavaScript). */
function usage(): bool {
  const c = peek();
  if (c == 0x6e) return scanLiteral(<u32>c);
  if (c != <i32>OPEN_BRACE) return false;
  if (!openObject()) return false;
  let bits = 0;
  let seen = 0;
  while (!ended) {
    if (!plainKey()) return false;
    let slot = -1;
    if (is(INPUT_TOKENS)) slot = USAGE_INPUT;
    else if (is(OUTPUT_TOKENS)) slot = USAGE_OUTPUT;
    else if (is(CACHE_CREATION_INPUT_TOKENS)) slot = USAGE_CACHE_WRITE;
    else if (is(CACHE_READ_INPUT_TOKENS)) slot = USAGE_CACHE_READ;
    else if (is(CACHE_CREATION)) slot = USAGE_SPLIT;
    if (slot < 0) {
      if (!skipValue()) return false;
    } else {
      seen = seenOnce(seen, 1 << slot);
      if (seen < 0) return false;
      bits = slot == USAGE_SPLIT ? cacheSplit(bits) : count(bits, slot);
      if (bits < 0) return false;
    }
    if (!nextMember()) return false;
  }
  word(WORD_USAGE_BITS, bits);
  word(0, wordAt(0) | FLAG_USAGE);
  return true;
}

// ---- content blocks ---------------------------------------------------------------------------

/** Whether texts are hashed: on any line that may be an assistant one (its type may come later). */
@inline
function hashing(): bool {
  return lineType != TYPE_USER;
}

/** Room for one more block, else the records are full (the line waits for the next call). */
function blockRecord(): usize {
  const at = record + (<usize>(CHAT_WORDS + blockCount * BLOCK_WORDS) << 2);
  if (at + (<usize>BLOCK_WORDS << 2) > outLimit) {
    full = true;
    return 0;
  }
  return at;
}

/** A text block (text, thinking) of a string kept while its block was read, or of none (no text, or not a string: ''). */
function textBlock(kind: i32, text: Text | null): bool {
  const block = blockRecord();
  if (block == 0) return false;
  store<i32>(block, kind);
  if (text) {
    store<i32>(block + (<usize>BLOCK_UNITS << 2), <i32>text.units);
    store<u64>(block + (<usize>BLOCK_HASH << 2), text.hash);
    if (!putText(block, BLOCK_TEXT_STRING, text)) return false;
  } else {
    store<i32>(block + (<usize>BLOCK_UNITS << 2), 0);
    store<u64>(block + (<usize>BLOCK_HASH << 2), hashStart());
    store<i32>(block + (<usize>(BLOCK_TEXT_STRING + 1) << 2), -1);
  }
  blockCount++;
  return true;
}

/** A block's strings as scanned: where each is, its flags, units and hash. */
class Text {
  from: usize = 0;
  to: usize = 0;
  flags: u32 = 0;
  units: u32 = 0;
  hash: u64 = 0;
}

function keep(text: Text): void {
  text.from = textFrom;
  text.to = textTo;
  text.flags = textFlags;
  text.units = textUnits;
  text.hash = textHash;
}

function putText(block: usize, slot: i32, text: Text): bool {
  return putPlace(block, slot, text.from, text.to, text.flags, base, STRING_BYTES, STRING_ESCAPED, STRING_WIDE);
}

const scannedText = new Text();
const typeText = new Text();
const textText = new Text();
const thinkingText = new Text();
const idText = new Text();
const nameText = new Text();
const resultIdText = new Text();
const contentText = new Text();
const partText = new Text();

/** Whether a kept string's text is exactly `name` (no escape in it). */
function keptIs(text: Text, name: Name): bool {
  return text.to - text.from == name.length && text.flags == 0 && sameBytes(text.from, name.at, name.length);
}

/** What a block's key held: absent, a string (kept in its Text), or another kind of value. */
const ABSENT: i32 = 0;
const STRING: i32 = 1;
const OTHER: i32 = 2;
const NULL: i32 = 3;
const PARTS: i32 = 4;

/** What a tool result's list of parts gives: the UTF-16 units of their text joined by newlines, and its hash. */
let partsUnits: u32 = 0;
let partsHash: u64 = 0;

/** A part's type: absent, `text`, or another type whose part the reader leaves out. */
const PART_UNTYPED: i32 = 0;
const PART_TEXT: i32 = 1;
const PART_OTHER: i32 = 2;

/**
 * A tool result's list of parts (cursor on its bracket), joined as outputText joins them: string
 * parts and `text` parts' texts, newlines between. False (the line goes to JavaScript) for a part
 * whose reading is not plain: untyped, another text type, a text part whose text is null or absent.
 */
function parts(): bool {
  moveTo(at + 1);
  let texts = 0;
  let units: u32 = 0;
  let hash = hashStart();
  const hashed = hashing();
  let c = peek();
  if (c == <i32>CLOSE_BRACKET) moveTo(at + 1);
  else {
    while (true) {
      // The hash a text part starts from, a newline after the parts before it.
      const seed = texts > 0 ? hashUnit(hash, NEWLINE) : hash;
      if (c == <i32>QUOTE) {
        if (!scanString(hashed, seed)) return false;
        units += textUnits + (texts > 0 ? 1 : 0);
        hash = textHash;
        texts++;
      } else if (c == <i32>OPEN_BRACE) {
        if (!openObject()) return false;
        let partType = PART_UNTYPED;
        let text = ABSENT;
        let seen = 0;
        while (!ended) {
          if (!plainKey()) return false;
          if (is(TYPE)) {
            if ((seen & 1) != 0) return false;
            seen |= 1;
            if (peek() != <i32>QUOTE || !scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
            if (is(TEXT)) partType = PART_TEXT;
            else if (is(INPUT_TEXT) || is(OUTPUT_TEXT) || is(SUMMARY_TEXT) || is(REFUSAL)) return false;
            else partType = PART_OTHER;
          } else if (is(TEXT)) {
            if ((seen & 2) != 0) return false;
            seen |= 2;
            const v = peek();
            if (v == <i32>QUOTE) {
              // Hashed on from the parts before: kept only if the part turns out a text part.
              if (!scanString(hashed, seed)) return false;
              keep(partText);
              text = STRING;
            } else {
              if (!skipValue()) return false;
              text = v == 0x6e ? NULL : OTHER;
            }
          } else if (!skipValue()) return false;
          if (!nextMember()) return false;
        }
        if (partType == PART_UNTYPED) return false;
        if (partType == PART_TEXT) {
          if (text == ABSENT || text == NULL) return false;
          if (text == STRING) {
            units += partText.units + (texts > 0 ? 1 : 0);
            hash = partText.hash;
            texts++;
          }
        }
      } else if (!skipValue()) return false;
      c = peek();
      if (c == <i32>COMMA) {
        moveTo(at + 1);
        c = peek();
        continue;
      }
      if (c != <i32>CLOSE_BRACKET) return false;
      moveTo(at + 1);
      break;
    }
  }
  // JavaScript decodes a text of under four units for what it is, from one string: parts are not one.
  if (units > 0 && units < 4) return false;
  partsUnits = units;
  partsHash = hash;
  return true;
}

/** A block's value that is read when it is a string (kept in `text`): STRING, OTHER for any other value, -1 for no valid JSON. */
function stringField(text: Text, hashed: bool): i32 {
  if (peek() != <i32>QUOTE) return skipValue() ? OTHER : -1;
  if (!scanString(hashed, hashStart())) return -1;
  keep(text);
  return STRING;
}

/** One content block: what the JavaScript reader would make of it, or false (the line goes to JavaScript). */
function block(): bool {
  if (peek() != <i32>OPEN_BRACE) return false;
  if (!openObject()) return false;
  let seen = 0;
  let type = ABSENT;
  let text = ABSENT;
  let thinking = ABSENT;
  let id = ABSENT;
  let name = ABSENT;
  let input = ABSENT;
  let inputFrom: usize = 0;
  let inputTo: usize = 0;
  let inputObject = false;
  let resultId = ABSENT;
  let content = ABSENT;
  let isError = ABSENT;
  const hashed = hashing();
  while (!ended) {
    if (!plainKey()) return false;
    let bit = 0;
    if (is(TYPE)) {
      bit = 1;
      if (peek() != <i32>QUOTE || !scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
      keep(typeText);
      type = STRING;
    } else if (is(TEXT)) {
      bit = 2;
      text = stringField(textText, hashed);
      if (text < 0) return false;
    } else if (is(THINKING)) {
      bit = 4;
      thinking = stringField(thinkingText, hashed);
      if (thinking < 0) return false;
    } else if (is(ID)) {
      bit = 8;
      id = stringField(idText, false);
      if (id < 0) return false;
    } else if (is(NAME)) {
      bit = 16;
      name = stringField(nameText, false);
      if (name < 0) return false;
    } else if (is(INPUT)) {
      bit = 32;
      inputObject = peek() == <i32>OPEN_BRACE;
      inputFrom = at;
      if (!skipValue()) return false;
      inputTo = at;
      input = STRING;
    } else if (is(TOOL_USE_ID)) {
      bit = 64;
      resultId = stringField(resultIdText, false);
      if (resultId < 0) return false;
    } else if (is(CONTENT)) {
      bit = 128;
      const c = peek();
      if (c == <i32>QUOTE) {
        if (!scanString(hashed, hashStart())) return false;
        keep(contentText);
        content = STRING;
      } else if (c == <i32>OPEN_BRACKET) {
        if (!parts()) return false;
        content = PARTS;
      } else if (c == 0x6e) {
        if (!scanLiteral(<u32>c)) return false;
        content = NULL;
      } else {
        if (!skipValue()) return false;
        content = OTHER;
      }
    } else if (is(IS_ERROR)) {
      bit = 256;
      const c = peek();
      if (c == 0x74 || c == 0x66 || c == 0x6e) {
        if (!scanLiteral(<u32>c)) return false;
        isError = literalValue == 1 ? STRING : ABSENT;
      } else {
        if (!skipValue()) return false;
        isError = OTHER;
      }
    } else if (!skipValue()) return false;
    seen = seenOnce(seen, bit);
    if (seen < 0 || !nextMember()) return false;
  }
  if (type != STRING) return false;
  // The block's type, now that all of it is read.
  if (keptIs(typeText, TEXT)) return textBlock(BLOCK_TEXT, text == STRING ? textText : null);
  if (keptIs(typeText, THINKING)) return textBlock(BLOCK_THINKING, thinking == STRING ? thinkingText : null);
  if (keptIs(typeText, REDACTED_THINKING)) return textBlock(BLOCK_THINKING, null);
  if (keptIs(typeText, TOOL_USE)) {
    if (id != STRING || idText.to == idText.from || name != STRING || input == ABSENT) return false;
    const record = blockRecord();
    if (record == 0) return false;
    store<i32>(record, BLOCK_TOOL_USE | (inputObject ? FLAG_INPUT_OBJECT : 0));
    store<i32>(record + (<usize>BLOCK_INPUT << 2), <i32>(inputFrom - base));
    store<i32>(record + (<usize>(BLOCK_INPUT + 1) << 2), <i32>(inputTo - inputFrom));
    if (inputTo - inputFrom > <usize>STRING_BYTES || !putText(record, BLOCK_ID, idText) || !putText(record, BLOCK_NAME, nameText)) return false;
    blockCount++;
    return true;
  }
  if (keptIs(typeText, TOOL_RESULT)) {
    if (resultId != STRING || resultIdText.to == resultIdText.from || content == ABSENT || content == OTHER || isError == OTHER) return false;
    const record = blockRecord();
    if (record == 0) return false;
    store<i32>(record, BLOCK_TOOL_RESULT | (isError == STRING ? FLAG_IS_ERROR : 0));
    if (!putText(record, BLOCK_ID, resultIdText)) return false;
    if (content == STRING) {
      store<i32>(record + (<usize>BLOCK_UNITS << 2), <i32>contentText.units);
      store<u64>(record + (<usize>BLOCK_HASH << 2), contentText.hash);
      if (!putText(record, BLOCK_TEXT_STRING, contentText)) return false;
    } else {
      // Null, or parts: their joined text has no one string (a short one was refused in `parts`).
      if (content == PARTS) joinedOutput = true;
      const units = content == PARTS ? partsUnits : 0;
      store<i32>(record + (<usize>BLOCK_UNITS << 2), <i32>units);
      store<u64>(record + (<usize>BLOCK_HASH << 2), content == PARTS ? partsHash : hashStart());
      store<i32>(record + (<usize>(BLOCK_TEXT_STRING + 1) << 2), -1);
    }
    blockCount++;
    return true;
  }
  // Blocks the reader leaves out without a word.
  if (keptIs(typeText, IMAGE) || keptIs(typeText, DOCUMENT) || keptIs(typeText, CONTAINER_UPLOAD)) return true;
  // Server tools, unknown types: the reader turns them into text or warns of them.
  return false;
}

/** `message.content`: a string (one text block, none when empty) or a list of blocks. */
function content(): bool {
  const c = peek();
  if (c == <i32>QUOTE) {
    if (!scanString(hashing(), hashStart())) return false;
    if (textUnits == 0) return true;
    keep(textText);
    return textBlock(BLOCK_TEXT, textText);
  }
  if (c != <i32>OPEN_BRACKET) return false;
  moveTo(at + 1);
  let next = peek();
  if (next == <i32>CLOSE_BRACKET) {
    moveTo(at + 1);
    return true;
  }
  while (true) {
    if (!block()) return false;
    next = peek();
    if (next == <i32>COMMA) {
      moveTo(at + 1);
      continue;
    }
    if (next == <i32>CLOSE_BRACKET) {
      moveTo(at + 1);
      return true;
    }
    return false;
  }
}

/** The line's `message` object. */
function message(): bool {
  messageObject = true;
  if (!openObject()) return false;
  let seen = 0;
  let hasContent = false;
  while (!ended) {
    if (!plainKey()) return false;
    let bit = 0;
    const c = peek();
    if (is(CONTENT)) {
      bit = 1;
      hasContent = true;
      if (!content()) return false;
    } else if (is(ID)) {
      bit = 2;
      if (!stringOrNull(record, STRING_MESSAGE_ID, c)) return false;
    } else if (is(MODEL)) {
      bit = 4;
      if (!stringOrNull(record, STRING_MODEL, c)) return false;
    } else if (is(STOP_REASON)) {
      bit = 8;
      if (c == <i32>QUOTE) {
        if (!scanString(false, hashStart())) return false;
        word(0, wordAt(0) | FLAG_FINAL);
      } else if (!scanLiteral(<u32>c) || literalValue != -1) return false;
    } else if (is(USAGE)) {
      bit = 16;
      if (!usage()) return false;
    } else if (!skipValue()) return false;
    seen = seenOnce(seen, bit);
    if (seen < 0 || !nextMember()) return false;
  }
  return hasContent;
}

// ---- a line ----------------------------------------------------------------------------------

/** The line's top-level object (cursor on its brace): its record filled in; false: a raw line. */
function line(): bool {
  if (!openObject()) return false;
  let seen = 0;
  while (!ended) {
    if (!plainKey()) return false;
    let bit = 0;
    const c = peek();
    if (is(TYPE)) {
      bit = 1;
      if (c == <i32>QUOTE) {
        if (!scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
        if (is(USER)) lineType = TYPE_USER;
        else if (is(ASSISTANT)) lineType = TYPE_ASSISTANT;
        else if (is(SYSTEM)) lineType = TYPE_SYSTEM;
        else lineType = TYPE_OTHER;
      } else {
        if (!skipValue()) return false;
        lineType = TYPE_OTHER;
      }
    } else if (is(UUID)) {
      bit = 2;
      if (!link(STRING_UUID, WORDS_UUID, FLAG_UUID_WORDS, c)) return false;
    } else if (is(PARENT_UUID)) {
      bit = 4;
      if (!link(STRING_PARENT, WORDS_PARENT, FLAG_PARENT_WORDS, c)) return false;
    } else if (is(LOGICAL_PARENT_UUID)) {
      // Read only to be checked: a link that is no string is warned of by JavaScript.
      bit = 8;
      if (c == <i32>QUOTE) {
        if (!scanString(false, hashStart())) return false;
      } else if (!scanLiteral(<u32>c) || literalValue != -1) return false;
    } else if (is(IS_SIDECHAIN)) {
      bit = 16;
      if (c == 0x74 || c == 0x66 || c == 0x6e) {
        if (!scanLiteral(<u32>c)) return false;
        if (literalValue == 1) word(0, wordAt(0) | FLAG_SIDECHAIN);
      } else {
        if (!skipValue()) return false;
        odd = true;
      }
    } else if (is(IS_COMPACT_SUMMARY)) {
      bit = 32;
      if (c == 0x74 || c == 0x66 || c == 0x6e) {
        if (!scanLiteral(<u32>c)) return false;
        if (literalValue == 1) compactSummary = true;
      } else {
        if (!skipValue()) return false;
        odd = true;
      }
    } else if (is(TIMESTAMP)) {
      bit = 64;
      if (c == <i32>QUOTE || c == 0x6e) {
        if (!stringOrNull(record, STRING_TIMESTAMP, c)) return false;
      } else {
        if (!skipValue()) return false;
        odd = true;
      }
    } else if (is(REQUEST_ID)) {
      bit = 128;
      if (c == <i32>QUOTE || c == 0x6e) {
        if (!stringOrNull(record, STRING_REQUEST, c)) return false;
      } else {
        if (!skipValue()) return false;
        odd = true;
      }
    } else if (is(FORKED_FROM)) {
      bit = 256;
      if (!forkedFrom(c)) return false;
    } else if (is(MESSAGE)) {
      bit = 512;
      if (c == <i32>OPEN_BRACE) {
        if (!message()) return false;
      } else if (!skipValue()) return false;
    } else if (is(SUBTYPE)) {
      bit = 1024;
      if (c == <i32>QUOTE) {
        if (!scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
        boundary = is(COMPACT_BOUNDARY);
      } else if (!skipValue()) return false;
    } else if (!skipValue()) return false;
    seen = seenOnce(seen, bit);
    if (seen < 0 || !nextMember()) return false;
  }
  return true;
}

/** `forkedFrom`: absent, null, or an object with a non-empty string `sessionId`; anything else is odd. */
function forkedFrom(c: i32): bool {
  if (c == 0x6e) return scanLiteral(<u32>c);
  if (c != <i32>OPEN_BRACE) {
    odd = true;
    return skipValue();
  }
  if (!openObject()) return false;
  let found = false;
  while (!ended) {
    if (!key()) return false;
    if (is(PROTO)) {
      odd = true;
      if (!skipValue()) return false;
    } else if (is(SESSION_ID)) {
      if (found) return false;
      found = true;
      if (peek() == <i32>QUOTE) {
        if (!scanString(false, hashStart())) return false;
        if (textTo == textFrom) odd = true;
        else if (!putString(record, STRING_FORKED_FROM)) return false;
      } else {
        if (!skipValue()) return false;
        odd = true;
      }
    } else if (!skipValue()) return false;
    if (!nextMember()) return false;
  }
  if (!found) odd = true;
  return true;
}

// ---- the scan ----------------------------------------------------------------------------------

/** Lines seen so far (the last one's number), and lines read to a value (blank ones are not). */
export let lineNumber: i32 = 0;
export let valueLines: i32 = 0;
/** Where the records written by the last scan end. */
export let recordsEnd: usize = 0;

/** A raw record for the line [from, to) at `record`. */
function raw(from: usize, to: usize, terminated: bool): bool {
  if (record + (<usize>RAW_WORDS << 2) > outLimit) return false;
  word(0, KIND_RAW | (terminated ? FLAG_TERMINATED : 0));
  word(WORD_LINE, lineNumber);
  word(WORD_LENGTH, RAW_WORDS);
  word(RAW_OFFSET, <i32>(from - base));
  word(RAW_BYTES, <i32>(to - from));
  out = record + (<usize>RAW_WORDS << 2);
  return true;
}

/** A fresh chat record at `out`: every string absent, no usage, no block. */
function startRecord(): void {
  record = out;
  for (let index = 0; index < CHAT_WORDS; index++) word(index, 0);
  word(STRING_UUID + 1, -1);
  word(STRING_PARENT + 1, -1);
  for (let slot = STRING_TIMESTAMP; slot <= STRING_FORKED_FROM; slot += 2) word(slot + 1, -1);
  lineType = TYPE_NONE;
  boundary = false;
  odd = false;
  compactSummary = false;
  joinedOutput = false;
  messageObject = false;
  blockCount = 0;
}

/** What the line's record is, once its object is read: false when the line is left to JavaScript as raw. */
function settle(): bool {
  const flags = wordAt(0) & ~0xff;
  if (lineType == TYPE_USER || lineType == TYPE_ASSISTANT) {
    if (odd || !messageObject) return false;
    // A compaction's summary is read with its texts whole, each from its one string of the line.
    if (compactSummary && joinedOutput) return false;
    // A chat line's uuid, when given, is not empty (the schema's rule).
    if (wordAt(STRING_UUID + 1) == 0) return false;
    word(0, KIND_CHAT | flags | (lineType == TYPE_ASSISTANT ? FLAG_ASSISTANT : 0) | (compactSummary ? FLAG_COMPACT_SUMMARY : 0));
    word(WORD_BLOCKS, blockCount);
    word(WORD_LENGTH, CHAT_WORDS + blockCount * BLOCK_WORDS);
    out = record + (<usize>(CHAT_WORDS + blockCount * BLOCK_WORDS) << 2);
    return true;
  }
  // A compaction's boundary: JavaScript reads what it says.
  if (lineType == TYPE_SYSTEM && boundary) return false;
  // Any other line is a link when it has a uuid, else nothing the reader keeps.
  if (wordAt(STRING_UUID + 1) == -1) {
    out = record;
    return true;
  }
  word(0, KIND_LINK | (flags & (FLAG_SIDECHAIN | FLAG_UUID_WORDS | FLAG_PARENT_WORDS)));
  word(WORD_LENGTH, LINK_WORDS);
  out = record + (<usize>LINK_WORDS << 2);
  return true;
}

/**
 * Scans the lines of [from, to): the chunk starts at `chunk` (string places are given from
 * there), records go to [records, recordsLimit). `final`: the input ends at `to` (a last line
 * without a newline is read too). `lines`: the number of the line before `from`. Returns where
 * the lines read end: a line cut by `to`, or one the records had no room for, waits for the next
 * call. Sets lineNumber, valueLines and recordsEnd.
 */
export function scanClaude(chunk: usize, from: usize, to: usize, final: bool, records: usize, recordsLimit: usize, lines: i32): usize {
  base = chunk;
  out = records;
  outLimit = recordsLimit;
  lineNumber = lines;
  valueLines = 0;
  full = false;
  let start = from;
  while (start < to) {
    if (out + (<usize>CHAT_WORDS << 2) > outLimit) {
      full = true;
      break;
    }
    setCursor(start, to);
    startRecord();
    const number = lineNumber + 1;
    let ok = false;
    const first = peek();
    if (first == <i32>OPEN_BRACE) {
      // Only spaces after it until the newline (or the end of the input).
      ok = line() && lineEnds(final);
    }
    if (full) break;
    const lineEnd = newlineFrom(ok ? at : start);
    if (lineEnd >= to && !final) break;
    lineNumber = number;
    word(WORD_LINE, number);
    if (ok) ok = settle();
    if (ok) valueLines++;
    else if (blank(start, lineEnd)) out = record;
    else if (!raw(start, lineEnd, lineEnd < to)) {
      lineNumber = number - 1;
      full = true;
      break;
    }
    start = lineEnd < to ? lineEnd + 1 : to;
  }
  recordsEnd = out;
  return start;
}
