/**
 * The records of the Codex line scanner (assembly/codex.ts, its layout in
 * assembly/codex-layout.ts): the same numbers, for JavaScript. test/scan/scan-codex-diff.test.ts
 * holds the two to each other through the scanner's exported globals. 32-bit words, one record a
 * line that JavaScript must hear of, in line order, its length in words at CODEX_WORD_LENGTH; a
 * string is its text's place in the chunk scanned and its byte length, with CODEX_STRING_ESCAPED
 * and CODEX_STRING_WIDE set above the length (length -1: absent).
 */
/** A record's first word: its kind in the low byte, flags above. */
export const CODEX_KIND_RAW = 1;
/** A line the reader does nothing with but note its time (an event it does not read, an unknown type). */
export const CODEX_KIND_SKIP = 2;
/** A tool's output: its kind of item in CODEX_OUTPUT_KIND, its call id, its text's UTF-16 length. */
export const CODEX_KIND_OUTPUT = 3;
/** A reasoning item: its summary's text's UTF-16 length (partsText's). */
export const CODEX_KIND_REASONING = 4;
/** A session_meta line: its id, cwd and forked_from_id, each when a string. */
export const CODEX_KIND_META = 5;
/** A token_count event: which of its counts are there (CODEX_COUNT_BITS), and the counts. */
export const CODEX_KIND_TOKENS = 6;
/** A turn_context line: its model when a string, its window when a count. */
export const CODEX_KIND_CONTEXT = 7;
/** A function_call item: its call id, name and arguments (all strings). */
export const CODEX_KIND_CALL = 8;
/** A message item: its role when a string, its text's UTF-16 length (partsText's), known to be no review's outcome. */
export const CODEX_KIND_MESSAGE = 9;

/** A raw line ended by a newline. */
export const CODEX_TERMINATED = 1 << 8;
/** A tool output's item type, above the kind. */
export const CODEX_OUTPUT_KIND = 3 << 8;
export const CODEX_OUTPUT_FUNCTION = 1 << 8;
export const CODEX_OUTPUT_CUSTOM = 2 << 8;
export const CODEX_OUTPUT_SHELL = 3 << 8;

/** Word 1: the line's number (1-based, over the whole file); word 2: the record's length in words. */
export const CODEX_WORD_LINE = 1;
export const CODEX_WORD_LENGTH = 2;
export const CODEX_RECORD_WORDS = 12;
/** The longest record (a token_count's). */
export const CODEX_MAX_WORDS = 34;

/** A raw line: its offset and length. */
export const CODEX_RAW_OFFSET = 3;
export const CODEX_RAW_BYTES = 4;

/** Strings, two words each. */
export const CODEX_TIMESTAMP = 3;
export const CODEX_CALL_ID = 5;
export const CODEX_ID = 5;
export const CODEX_CWD = 7;
export const CODEX_FORKED_FROM = 9;
export const CODEX_MODEL = 5;
export const CODEX_ROLE = 5;
export const CODEX_NAME = 7;
export const CODEX_ARGUMENTS = 9;
/** A text's UTF-16 length. */
export const CODEX_UNITS = 11;

/**
 * Counts (64-bit, two words each, low first): which are there in CODEX_COUNT_BITS (word 11), the
 * window (`model_context_window`) at CODEX_WINDOW, then `last_token_usage`'s and
 * `total_token_usage`'s five counts in CODEX_USAGE_KEYS's order (src/scan/codex-layout.ts).
 */
export const CODEX_COUNT_BITS = 11;
export const CODEX_WINDOW = 12;
export const CODEX_LAST = 14;
export const CODEX_TOTAL = 24;
export const CODEX_CONTEXT_WORDS = 14;
export const CODEX_TOKEN_WORDS = 34;
/** Bits of CODEX_COUNT_BITS: `info` is an object, its usages are objects, the window is there; a usage's counts from bit 8 (last) and 16 (total). */
export const CODEX_HAS_INFO = 1;
export const CODEX_HAS_LAST = 2;
export const CODEX_HAS_TOTAL = 4;
export const CODEX_HAS_WINDOW = 8;
export const CODEX_LAST_BIT = 8;
export const CODEX_TOTAL_BIT = 16;

/** Above a string's byte length: its text holds an escape, or bytes beyond ASCII. */
export const CODEX_STRING_ESCAPED = 1 << 30;
export const CODEX_STRING_WIDE = 1 << 29;
export const CODEX_STRING_BYTES = (1 << 29) - 1;
