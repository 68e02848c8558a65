/**
 * Codex rollout lines, scanned: what the reader (src/formats/codex-scanned.ts) needs of the lines
 * that hold most of a rollout's bytes, as records (codex-layout.ts), without those lines being
 * decoded or parsed in JavaScript: a tool output's call id and its output's UTF-16 length, a
 * reasoning item's summary length, a session_meta's ids and working directory, a token_count's
 * counts, a turn_context's model and window, a function call's id, name and arguments (places in
 * the input), and for a line the reader does nothing with (an event it does not read, a line type
 * it does not know) only its timestamp. Every other line, and any line not certainly what the JavaScript reader would make
 * of JSON.parse's value (no valid JSON or UTF-8, a key written twice or with an escape where a
 * key is read, a value of another type than the common one), becomes a raw record: JavaScript
 * reads it as before, with its errors and warnings.
 */
import {
  at, BACKSLASH, CLOSE_BRACKET, COMMA, moveTo, newlineFrom, OPEN_BRACE, OPEN_BRACKET, peek, QUOTE, scanLiteral, scanString, setCursor,
  skipValue, textFlags, textFrom, textTo, textUnits, blank, hashStart, ESCAPED, literalValue, scanNumber, numberIsCount, numberValue, Name, is,
  plainKey, nextMember, openObject, ended, putPlace, seenOnce, lineEnds,
} from './json';
import {
  CODEX_ARGUMENTS, CODEX_COUNT_BITS, CODEX_CONTEXT_WORDS, CODEX_HAS_INFO, CODEX_HAS_LAST, CODEX_HAS_TOTAL, CODEX_HAS_WINDOW, CODEX_KIND_CALL,
  CODEX_KIND_CONTEXT, CODEX_KIND_TOKENS, CODEX_LAST, CODEX_LAST_BIT, CODEX_MAX_WORDS, CODEX_MODEL, CODEX_NAME, CODEX_TOKEN_WORDS, CODEX_TOTAL,
  CODEX_TOTAL_BIT, CODEX_WINDOW, CODEX_KIND_MESSAGE, CODEX_ROLE, CODEX_CALL_ID, CODEX_CWD, CODEX_FORKED_FROM, CODEX_ID, CODEX_KIND_META, CODEX_KIND_OUTPUT, CODEX_KIND_RAW, CODEX_KIND_REASONING,
  CODEX_KIND_SKIP, CODEX_OUTPUT_CUSTOM, CODEX_OUTPUT_FUNCTION, CODEX_OUTPUT_SHELL, CODEX_RAW_BYTES, CODEX_RAW_OFFSET, CODEX_RECORD_WORDS,
  CODEX_STRING_BYTES, CODEX_STRING_ESCAPED, CODEX_STRING_WIDE, CODEX_TERMINATED, CODEX_TIMESTAMP, CODEX_UNITS, CODEX_WORD_LENGTH, CODEX_WORD_LINE,
} from './codex-layout';

// ---- names, as UTF-8 bytes -------------------------------------------------------------------

const TYPE = new Name('type');
const PAYLOAD = new Name('payload');
const TIMESTAMP = new Name('timestamp');
const SESSION_META = new Name('session_meta');
const RESPONSE_ITEM = new Name('response_item');
const EVENT_MSG = new Name('event_msg');
const TURN_CONTEXT = new Name('turn_context');
const COMPACTED = new Name('compacted');
const TOKEN_USAGE_RECORD = new Name('token_usage_record');
const ID = new Name('id');
const CWD = new Name('cwd');
const FORKED_FROM_ID = new Name('forked_from_id');
const CALL_ID = new Name('call_id');
const OUTPUT = new Name('output');
const SUMMARY = new Name('summary');
const TEXT = new Name('text');
const REFUSAL = new Name('refusal');
const REASONING = new Name('reasoning');
const FUNCTION_CALL_OUTPUT = new Name('function_call_output');
const CUSTOM_TOOL_CALL_OUTPUT = new Name('custom_tool_call_output');
const LOCAL_SHELL_CALL_OUTPUT = new Name('local_shell_call_output');
const FUNCTION_CALL = new Name('function_call');
const NAME = new Name('name');
const ARGUMENTS = new Name('arguments');
const MODEL = new Name('model');
const MODEL_CONTEXT_WINDOW = new Name('model_context_window');
const INFO = new Name('info');
const LAST_TOKEN_USAGE = new Name('last_token_usage');
const TOTAL_TOKEN_USAGE = new Name('total_token_usage');
/** codex.ts totalsKey's counts, in their order. */
const INPUT_TOKENS = new Name('input_tokens');
const CACHED_INPUT_TOKENS = new Name('cached_input_tokens');
const CACHE_WRITE_INPUT_TOKENS = new Name('cache_write_input_tokens');
const OUTPUT_TOKENS = new Name('output_tokens');
const REASONING_OUTPUT_TOKENS = new Name('reasoning_output_tokens');
/** The events codex.ts reads: a line of any other event only moves the fork's clock. */
const TOKEN_COUNT = new Name('token_count');
const TASK_STARTED = new Name('task_started');
const TASK_COMPLETE = new Name('task_complete');
const TURN_ABORTED = new Name('turn_aborted');
const ENTERED_REVIEW_MODE = new Name('entered_review_mode');
const EXITED_REVIEW_MODE = new Name('exited_review_mode');
const ITEM_COMPLETED_TYPE = new Name('item_completed');
const ENTERED_REVIEW_ITEM = new Name('EnteredReviewMode');
const EXITED_REVIEW_ITEM = new Name('ExitedReviewMode');
const MESSAGE = new Name('message');
const CONTENT = new Name('content');
const ROLE = new Name('role');
const ITEM = new Name('item');
/** convert.ts partsText's text part types. */
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

/** The line's top-level `type`. */
const LINE_NONE: i32 = 0;
const LINE_META: i32 = 1;
const LINE_ITEM: i32 = 2;
const LINE_EVENT: i32 = 3;
const LINE_CONTEXT: i32 = 4;
/** A type the reader knows nothing of. */
const LINE_OTHER: i32 = 5;
let lineType: i32 = LINE_NONE;

/** The payload's `type`, as far as it matters. */
const ITEM_NONE: i32 = 0;
const ITEM_FUNCTION_OUTPUT: i32 = 1;
const ITEM_CUSTOM_OUTPUT: i32 = 2;
const ITEM_SHELL_OUTPUT: i32 = 3;
const ITEM_REASONING: i32 = 4;
/** An event codex.ts reads, or a type written with an escape: JavaScript reads the line. */
const ITEM_READ: i32 = 5;
/** A string naming nothing above, or no string. */
const ITEM_OTHER: i32 = 6;
const ITEM_TOKEN_COUNT: i32 = 7;
const ITEM_FUNCTION_CALL: i32 = 8;
const ITEM_MESSAGE: i32 = 9;
const ITEM_COMPLETED: i32 = 10;
let itemType: i32 = ITEM_NONE;

/** The payload's `output` is a string (its units in the record), `summary`'s text was measured, `content` was left unread. */
let outputString: bool = false;
let summaryKnown: bool = false;
let summaryUnits: u32 = 0;
let contentSkipped: bool = false;

@inline
function word(index: i32, value: i32): void {
  store<i32>(record + (<usize>index << 2), value);
}

/** The string just scanned into the record's string slot (two words: offset, length with flags). */
function putString(slot: i32): bool {
  return putPlace(record, slot, textFrom, textTo, textFlags, base, CODEX_STRING_BYTES, CODEX_STRING_ESCAPED, CODEX_STRING_WIDE);
}

/** A value that must be a string (`c` its first byte), kept in the record's string slot; false for anything else. */
function stringInto(slot: i32, c: i32): bool {
  return c == <i32>QUOTE && scanString(false, hashStart()) && putString(slot);
}

/** A value that is kept when it is a string and else only validated (codex.ts reads it with `typeof … === 'string'`). */
function stringIfAny(slot: i32, c: i32): bool {
  if (c != <i32>QUOTE) return skipValue();
  return scanString(false, hashStart()) && putString(slot);
}

// ---- counts ------------------------------------------------------------------------------------

/** Bits of the counts read so far (CODEX_COUNT_BITS). */
let countBits: i32 = 0;

/**
 * A count codex.ts reads with tokenCount: a plain count is stored at word `slot` and its bit set,
 * null is no count (tokenCount gives undefined); false for anything else (a string, a fraction:
 * JavaScript reads the line).
 */
function count(slot: i32, bit: i32): bool {
  const c = peek();
  if (c == 0x6e) return scanLiteral(<u32>c) && literalValue == -1;
  if (c < 0 || !scanNumber() || !numberIsCount) return false;
  store<i64>(record + (<usize>slot << 2), <i64>numberValue);
  countBits |= bit;
  return true;
}

/** A usage object of token_count (`{` under the cursor or null): its five counts from word `slot`, bits from `bit`. */
function tokenUsage(slot: i32, bit: i32, has: i32): bool {
  const c = peek();
  if (c == 0x6e) return scanLiteral(<u32>c) && literalValue == -1;
  if (c != <i32>OPEN_BRACE || !openObject()) return false;
  countBits |= has;
  let seen = 0;
  while (!ended) {
    if (!plainKey()) return false;
    let index = -1;
    if (is(INPUT_TOKENS)) index = 0;
    else if (is(CACHED_INPUT_TOKENS)) index = 1;
    else if (is(CACHE_WRITE_INPUT_TOKENS)) index = 2;
    else if (is(OUTPUT_TOKENS)) index = 3;
    else if (is(REASONING_OUTPUT_TOKENS)) index = 4;
    if (index < 0) {
      if (!skipValue()) return false;
    } else {
      seen = seenOnce(seen, 1 << index);
      if (seen < 0 || !count(slot + 2 * index, 1 << (bit + index))) return false;
    }
    if (!nextMember()) return false;
  }
  return true;
}

/** A token_count's `info`: null, or an object with the usages and the window. */
function info(c: i32): bool {
  if (c == 0x6e) return scanLiteral(<u32>c) && literalValue == -1;
  if (c != <i32>OPEN_BRACE || !openObject()) return false;
  countBits |= CODEX_HAS_INFO;
  let seen = 0;
  while (!ended) {
    if (!plainKey()) return false;
    let bit = 0;
    if (is(LAST_TOKEN_USAGE)) {
      bit = 1;
      if (!tokenUsage(CODEX_LAST, CODEX_LAST_BIT, CODEX_HAS_LAST)) return false;
    } else if (is(TOTAL_TOKEN_USAGE)) {
      bit = 2;
      if (!tokenUsage(CODEX_TOTAL, CODEX_TOTAL_BIT, CODEX_HAS_TOTAL)) return false;
    } else if (is(MODEL_CONTEXT_WINDOW)) {
      bit = 4;
      if (!count(CODEX_WINDOW, CODEX_HAS_WINDOW)) return false;
    } else if (!skipValue()) return false;
    seen = seenOnce(seen, bit);
    if (seen < 0 || !nextMember()) return false;
  }
  return true;
}

// ---- the payload ------------------------------------------------------------------------------

/** The payload's `type` string just scanned: what it names, for the line's type. */
function itemOf(): i32 {
  if ((textFlags & ESCAPED) != 0) return ITEM_READ;
  if (lineType == LINE_ITEM) {
    if (is(FUNCTION_CALL_OUTPUT)) return ITEM_FUNCTION_OUTPUT;
    if (is(CUSTOM_TOOL_CALL_OUTPUT)) return ITEM_CUSTOM_OUTPUT;
    if (is(LOCAL_SHELL_CALL_OUTPUT)) return ITEM_SHELL_OUTPUT;
    if (is(REASONING)) return ITEM_REASONING;
    if (is(FUNCTION_CALL)) return ITEM_FUNCTION_CALL;
    if (is(MESSAGE)) return ITEM_MESSAGE;
    return ITEM_READ;
  }
  if (lineType == LINE_EVENT) {
    if (is(TOKEN_COUNT)) return ITEM_TOKEN_COUNT;
    if (is(ITEM_COMPLETED_TYPE)) return ITEM_COMPLETED;
    if (is(TASK_STARTED) || is(TASK_COMPLETE) || is(TURN_ABORTED) || is(ENTERED_REVIEW_MODE) || is(EXITED_REVIEW_MODE)) return ITEM_READ;
  }
  return ITEM_OTHER;
}

/** Codex's record of a review's outcome (codex.ts REVIEW_OUTCOME), its first byte after a '<'. */
const USER_ACTION = new Name('<user_action>');

/**
 * Whether a text (its bytes [from, to) in a JSON string) certainly does not start with
 * `<user_action>` once trimmed at its start, as codex.ts tests a message in a review: its first
 * byte is printable ASCII and no space or escape, and, when it is '<', the bytes part from
 * `<user_action>` before an escape could hide the difference. An empty text is not certain (the
 * next part's text follows the newline that joins them).
 */
function safeStart(from: usize, to: usize): bool {
  if (from >= to) return false;
  const first = <u32>load<u8>(from);
  if (first <= 0x20 || first >= 0x7f || first == BACKSLASH) return false;
  if (first != 0x3c) return true;
  for (let index: usize = 1; index < USER_ACTION.length; index++) {
    // Shorter: the newline joining the next part breaks the prefix.
    if (from + index >= to) return true;
    const byte = <u32>load<u8>(from + index);
    if (byte != <u32>load<u8>(USER_ACTION.at + index)) return byte != BACKSLASH;
  }
  return false;
}

/**
 * What partsText makes of the last value read with partsLength: its text's UTF-16 units, how many
 * texts it joined, and whether its start is certainly no review outcome (safeStart).
 */
let partsUnits: u32 = 0;
let partsCount: u32 = 0;
let partsSafe: bool = true;

/** A text partsText keeps: its units, and for the first, whether its start is safe. */
function keptText(units: u32, from: usize, to: usize): void {
  if (partsCount == 0) partsSafe = safeStart(from, to);
  partsUnits += units;
  partsCount++;
}

/**
 * A part of a list as partsText reads it: a string, or an object without a `refusal` whose `text`
 * is a string or absent and whose `type` is absent or a string (its text counts when the type is a
 * text part's or absent). False for anything else (a `text` of another kind, a type written with
 * an escape): the line is left to JavaScript.
 */
function part(): bool {
  const c = peek();
  if (c == <i32>QUOTE) {
    if (!scanString(false, hashStart())) return false;
    keptText(textUnits, textFrom, textTo);
    return true;
  }
  if (c != <i32>OPEN_BRACE) return false;
  if (!openObject()) return false;
  let seen = 0;
  let units: u32 = 0;
  let from: usize = 0;
  let to: usize = 0;
  let counts = true;
  while (!ended) {
    if (!plainKey() || is(REFUSAL)) return false;
    const v = peek();
    if (is(TYPE)) {
      if ((seen & 1) != 0 || v != <i32>QUOTE || !scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
      seen |= 1;
      counts = is(TEXT) || is(INPUT_TEXT) || is(OUTPUT_TEXT) || is(SUMMARY_TEXT);
    } else if (is(TEXT)) {
      if ((seen & 2) != 0 || v != <i32>QUOTE || !scanString(false, hashStart())) return false;
      seen |= 2;
      units = textUnits;
      from = textFrom;
      to = textTo;
    } else if (!skipValue()) return false;
    if (!nextMember()) return false;
  }
  // Without a text (an image) the part adds nothing.
  if ((seen & 2) != 0 && counts) keptText(units, from, to);
  return true;
}

/** A value partsText reads (a reasoning's `summary`, a message's `content`): null (no text), a string, or a list of parts. */
function partsLength(c: i32): bool {
  partsUnits = 0;
  partsCount = 0;
  partsSafe = true;
  if (c == 0x6e) return scanLiteral(<u32>c) && literalValue == -1;
  if (c == <i32>QUOTE) {
    if (!scanString(false, hashStart())) return false;
    keptText(textUnits, textFrom, textTo);
    return true;
  }
  if (c != <i32>OPEN_BRACKET) return false;
  moveTo(at + 1);
  let next = peek();
  if (next == <i32>CLOSE_BRACKET) {
    moveTo(at + 1);
    return true;
  }
  while (true) {
    if (!part()) return false;
    next = peek();
    if (next == <i32>COMMA) {
      moveTo(at + 1);
      continue;
    }
    if (next == <i32>CLOSE_BRACKET) {
      moveTo(at + 1);
      // partsText joins the parts' texts with newlines.
      if (partsCount > 1) partsUnits += partsCount - 1;
      return true;
    }
    return false;
  }
}

/** A message's `content` as read (its units, and whether its start is safe), and an `item_completed` that enters or leaves a review. */
let contentUnits: u32 = 0;
let contentSafe: bool = false;
let reviewItem: bool = false;

/** An `item_completed`'s `item`: when an object, its `type` must be certain (review mode is read in JavaScript). */
function completedItem(c: i32): bool {
  if (c != <i32>OPEN_BRACE) return skipValue();
  if (!openObject()) return false;
  let seen = false;
  while (!ended) {
    if (!plainKey()) return false;
    if (is(TYPE)) {
      if (seen) return false;
      seen = true;
      if (peek() == <i32>QUOTE) {
        if (!scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
        reviewItem = is(ENTERED_REVIEW_ITEM) || is(EXITED_REVIEW_ITEM);
      } else if (!skipValue()) return false;
    } else if (!skipValue()) return false;
    if (!nextMember()) return false;
  }
  return true;
}

/** The line's `payload` object (cursor on its brace), its top-level type known. */
function payload(): bool {
  if (!openObject()) return false;
  let seen = 0;
  while (!ended) {
    if (!plainKey()) return false;
    let bit = 0;
    const c = peek();
    if (is(TYPE)) {
      bit = 1;
      if (c == <i32>QUOTE) {
        if (!scanString(false, hashStart())) return false;
        itemType = itemOf();
      } else {
        if (!skipValue()) return false;
        itemType = lineType == LINE_EVENT ? ITEM_OTHER : ITEM_READ;
      }
      // An event the reader reads: JavaScript reads the line, nothing more to see here.
      if (lineType == LINE_EVENT && itemType == ITEM_READ) return false;
    } else if (lineType == LINE_META && is(ID)) {
      bit = 2;
      if (!stringIfAny(CODEX_ID, c)) return false;
    } else if (lineType == LINE_META && is(CWD)) {
      bit = 4;
      if (!stringIfAny(CODEX_CWD, c)) return false;
    } else if (lineType == LINE_META && is(FORKED_FROM_ID)) {
      bit = 8;
      if (!stringIfAny(CODEX_FORKED_FROM, c)) return false;
    } else if (lineType == LINE_ITEM && is(CALL_ID)) {
      bit = 16;
      if (c != <i32>QUOTE || !scanString(false, hashStart()) || textTo == textFrom || !putString(CODEX_CALL_ID)) return false;
    } else if (lineType == LINE_ITEM && is(OUTPUT)) {
      bit = 32;
      if (c == <i32>QUOTE) {
        if (!scanString(false, hashStart())) return false;
        outputString = true;
        word(CODEX_UNITS, <i32>textUnits);
      } else if (!skipValue()) return false;
    } else if (lineType == LINE_ITEM && is(SUMMARY)) {
      bit = 64;
      if (!partsLength(c)) return false;
      summaryKnown = true;
      summaryUnits = partsUnits;
    } else if (lineType == LINE_ITEM && itemType == ITEM_MESSAGE && is(CONTENT)) {
      // Read only once the item is known to be a message (a reasoning's content is no text of it).
      bit = 4096;
      if (!partsLength(c)) return false;
      contentUnits = partsUnits;
      contentSafe = partsSafe;
    } else if (lineType == LINE_ITEM && is(CONTENT)) {
      // Before the type, or in another item: not read, and a message's is then JavaScript's.
      bit = 4096;
      contentSkipped = true;
      if (!skipValue()) return false;
    } else if (lineType == LINE_ITEM && is(ROLE)) {
      bit = 8192;
      if (!stringInto(CODEX_ROLE, c)) return false;
    } else if (lineType == LINE_EVENT && is(ITEM)) {
      bit = 16384;
      if (!completedItem(c)) return false;
    } else if (lineType == LINE_ITEM && is(NAME)) {
      bit = 128;
      if (!stringInto(CODEX_NAME, c)) return false;
    } else if (lineType == LINE_ITEM && is(ARGUMENTS)) {
      bit = 256;
      if (!stringInto(CODEX_ARGUMENTS, c)) return false;
    } else if (lineType == LINE_EVENT && is(INFO)) {
      bit = 512;
      if (!info(c)) return false;
    } else if (lineType == LINE_CONTEXT && is(MODEL)) {
      bit = 1024;
      if (!stringIfAny(CODEX_MODEL, c)) return false;
    } else if (lineType == LINE_CONTEXT && is(MODEL_CONTEXT_WINDOW)) {
      bit = 2048;
      if (!count(CODEX_WINDOW, CODEX_HAS_WINDOW)) return false;
    } else if (!skipValue()) return false;
    seen = seenOnce(seen, bit);
    if (seen < 0 || !nextMember()) return false;
  }
  // An item must say its type before this scan can read it; a tool output must name its call.
  if (lineType == LINE_ITEM) {
    if (itemType == ITEM_REASONING) {
      word(CODEX_UNITS, summaryKnown ? <i32>summaryUnits : 0);
      return true;
    }
    if (itemType == ITEM_FUNCTION_OUTPUT || itemType == ITEM_CUSTOM_OUTPUT || itemType == ITEM_SHELL_OUTPUT) return outputString && (seen & 16) != 0;
    // A call with its id, name and arguments all strings (else its `id`, or String() of a name, is JavaScript's).
    if (itemType == ITEM_FUNCTION_CALL) return (seen & (16 | 128 | 256)) == (16 | 128 | 256);
    // A message whose text was read (absent: no text) and whose start is no review's outcome.
    if (itemType == ITEM_MESSAGE) {
      if ((seen & 4096) == 0) {
        contentUnits = 0;
        contentSafe = true;
      }
      if (!contentSafe || contentSkipped) return false;
      word(CODEX_UNITS, <i32>contentUnits);
      return true;
    }
    return false;
  }
  // An item_completed entering or leaving a review: JavaScript reads it.
  if (itemType == ITEM_COMPLETED && reviewItem) return false;
  word(CODEX_COUNT_BITS, countBits);
  return true;
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
      if (c != <i32>QUOTE || !scanString(false, hashStart()) || (textFlags & ESCAPED) != 0) return false;
      if (is(SESSION_META)) lineType = LINE_META;
      else if (is(RESPONSE_ITEM)) lineType = LINE_ITEM;
      else if (is(EVENT_MSG)) lineType = LINE_EVENT;
      else if (is(TURN_CONTEXT)) lineType = LINE_CONTEXT;
      else if (is(COMPACTED) || is(TOKEN_USAGE_RECORD)) return false;
      else lineType = LINE_OTHER;
    } else if (is(PAYLOAD)) {
      bit = 2;
      // The type first: a payload before it is left to JavaScript.
      if (lineType == LINE_NONE || c != <i32>OPEN_BRACE) return false;
      if (lineType == LINE_OTHER) {
        if (!skipValue()) return false;
      } else if (!payload()) return false;
    } else if (is(TIMESTAMP)) {
      bit = 4;
      if (!stringIfAny(CODEX_TIMESTAMP, c)) return false;
    } else if (!skipValue()) return false;
    seen = seenOnce(seen, bit);
    if (seen < 0 || !nextMember()) return false;
  }
  // The schema's: a string type and an object payload.
  return (seen & 3) == 3;
}

// ---- the scan ----------------------------------------------------------------------------------

/** Lines seen so far (the last one's number), and lines read to a value (blank ones are not). */
export let codexLineNumber: i32 = 0;
export let codexValueLines: i32 = 0;
/** Where the records written by the last scan end, and whether they ran out of room. */
export let codexRecordsEnd: usize = 0;
export let codexFull: bool = false;

/** A raw record for the line [from, to) at `record`. */
function raw(from: usize, to: usize, terminated: bool): void {
  word(0, CODEX_KIND_RAW | (terminated ? CODEX_TERMINATED : 0));
  word(CODEX_WORD_LINE, codexLineNumber);
  word(CODEX_WORD_LENGTH, CODEX_RECORD_WORDS);
  word(CODEX_RAW_OFFSET, <i32>(from - base));
  word(CODEX_RAW_BYTES, <i32>(to - from));
  out = record + (<usize>CODEX_RECORD_WORDS << 2);
}

/** A fresh record at `out`: every string absent. */
function startRecord(): void {
  record = out;
  for (let index = 0; index < CODEX_MAX_WORDS; index++) word(index, -1);
  lineType = LINE_NONE;
  itemType = ITEM_NONE;
  outputString = false;
  summaryKnown = false;
  summaryUnits = 0;
  contentSkipped = false;
  contentUnits = 0;
  contentSafe = false;
  reviewItem = false;
  countBits = 0;
}

/** The record's kind, once the line's object is read. */
function settle(): void {
  let kind = CODEX_KIND_SKIP;
  let words = CODEX_RECORD_WORDS;
  if (lineType == LINE_META) kind = CODEX_KIND_META;
  else if (lineType == LINE_CONTEXT) {
    kind = CODEX_KIND_CONTEXT;
    words = CODEX_CONTEXT_WORDS;
  } else if (itemType == ITEM_TOKEN_COUNT) {
    kind = CODEX_KIND_TOKENS;
    words = CODEX_TOKEN_WORDS;
  } else if (itemType == ITEM_FUNCTION_CALL) kind = CODEX_KIND_CALL;
  else if (itemType == ITEM_MESSAGE) kind = CODEX_KIND_MESSAGE;
  else if (itemType == ITEM_REASONING) kind = CODEX_KIND_REASONING;
  else if (itemType == ITEM_FUNCTION_OUTPUT) kind = CODEX_KIND_OUTPUT | CODEX_OUTPUT_FUNCTION;
  else if (itemType == ITEM_CUSTOM_OUTPUT) kind = CODEX_KIND_OUTPUT | CODEX_OUTPUT_CUSTOM;
  else if (itemType == ITEM_SHELL_OUTPUT) kind = CODEX_KIND_OUTPUT | CODEX_OUTPUT_SHELL;
  word(0, kind);
  word(CODEX_WORD_LENGTH, words);
  out = record + (<usize>words << 2);
}

/**
 * Scans the lines of [from, to) as scanClaude does (claude.ts): the chunk starts at `chunk`,
 * records go to [records, recordsLimit); `final`: the input ends at `to`; `lines`: the number of
 * the line before `from`. Returns where the lines read end. Sets codexLineNumber,
 * codexValueLines, codexRecordsEnd and codexFull.
 */
export function scanCodex(chunk: usize, from: usize, to: usize, final: bool, records: usize, recordsLimit: usize, lines: i32): usize {
  base = chunk;
  out = records;
  outLimit = recordsLimit;
  codexLineNumber = lines;
  codexValueLines = 0;
  codexFull = false;
  let start = from;
  while (start < to) {
    if (out + (<usize>CODEX_MAX_WORDS << 2) > outLimit) {
      codexFull = true;
      break;
    }
    setCursor(start, to);
    startRecord();
    const number = codexLineNumber + 1;
    let ok = false;
    if (peek() == <i32>OPEN_BRACE) {
      // Only spaces after it until the newline (or the end of the input).
      ok = line() && lineEnds(final);
    }
    const lineEnd = newlineFrom(ok ? at : start);
    if (lineEnd >= to && !final) break;
    codexLineNumber = number;
    word(CODEX_WORD_LINE, number);
    if (ok) {
      settle();
      codexValueLines++;
    } else if (blank(start, lineEnd)) out = record;
    else raw(start, lineEnd, lineEnd < to);
    start = lineEnd < to ? lineEnd + 1 : to;
  }
  codexRecordsEnd = out;
  return start;
}
