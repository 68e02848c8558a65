/**
 * The records the Codex line scanner (codex.ts) writes for JavaScript (src/scan/codex-layout.ts
 * has the same numbers): 32-bit words, one record a line that JavaScript must hear of, in line order.
 * A string is its text's place in the chunk scanned (offset from the chunk's start) and its byte
 * length, with CODEX_STRING_ESCAPED and CODEX_STRING_WIDE set above the length; length -1: absent.
 * Exported, so a test can hold src/scan/ to the same numbers.
 */

/** A record's first word: its kind in the low byte, flags above. */
export const CODEX_KIND_RAW: i32 = 1;
/** A line the reader does nothing with but note its time (an event it does not read, an unknown type). */
export const CODEX_KIND_SKIP: i32 = 2;
/** A tool's output: its kind of item in CODEX_OUTPUT_KIND, its call id, its text's UTF-16 length. */
export const CODEX_KIND_OUTPUT: i32 = 3;
/** A reasoning item: its summary's text's UTF-16 length (partsText's). */
export const CODEX_KIND_REASONING: i32 = 4;
/** A session_meta line: its id, cwd and forked_from_id, each when a string. */
export const CODEX_KIND_META: i32 = 5;
/** A token_count event: which of its counts are there (CODEX_COUNT_BITS), and the counts. */
export const CODEX_KIND_TOKENS: i32 = 6;
/** A turn_context line: its model when a string, its window when a count. */
export const CODEX_KIND_CONTEXT: i32 = 7;
/** A function_call item: its call id, name and arguments (all strings). */
export const CODEX_KIND_CALL: i32 = 8;
/** A message item: its role when a string, its text's UTF-16 length (partsText's), known to be no review's outcome. */
export const CODEX_KIND_MESSAGE: i32 = 9;

/** A raw line ended by a newline. */
export const CODEX_TERMINATED: i32 = 1 << 8;
/** A tool output's item type, above the kind. */
export const CODEX_OUTPUT_KIND: i32 = 3 << 8;
export const CODEX_OUTPUT_FUNCTION: i32 = 1 << 8;
export const CODEX_OUTPUT_CUSTOM: i32 = 2 << 8;
export const CODEX_OUTPUT_SHELL: i32 = 3 << 8;

/** Word 1: the line's number (1-based, over the whole file); word 2: the record's length in words. */
export const CODEX_WORD_LINE: i32 = 1;
export const CODEX_WORD_LENGTH: i32 = 2;
export const CODEX_RECORD_WORDS: i32 = 12;
/** The longest record (a token_count's). */
export const CODEX_MAX_WORDS: i32 = 34;

/** A raw line: its offset and length. */
export const CODEX_RAW_OFFSET: i32 = 3;
export const CODEX_RAW_BYTES: i32 = 4;

/** Strings, two words each. */
export const CODEX_TIMESTAMP: i32 = 3;
export const CODEX_CALL_ID: i32 = 5;
export const CODEX_ID: i32 = 5;
export const CODEX_CWD: i32 = 7;
export const CODEX_FORKED_FROM: i32 = 9;
export const CODEX_MODEL: i32 = 5;
export const CODEX_ROLE: i32 = 5;
export const CODEX_NAME: i32 = 7;
export const CODEX_ARGUMENTS: i32 = 9;
/** A text's UTF-16 length. */
export const CODEX_UNITS: i32 = 11;

/**
 * Counts (64-bit, two words each, low first): which are there in CODEX_COUNT_BITS (word 11), the
 * window (`model_context_window`) at CODEX_WINDOW, then `last_token_usage`'s and
 * `total_token_usage`'s five counts in CODEX_USAGE_KEYS's order (src/scan/codex-layout.ts).
 */
export const CODEX_COUNT_BITS: i32 = 11;
export const CODEX_WINDOW: i32 = 12;
export const CODEX_LAST: i32 = 14;
export const CODEX_TOTAL: i32 = 24;
export const CODEX_CONTEXT_WORDS: i32 = 14;
export const CODEX_TOKEN_WORDS: i32 = 34;
/** Bits of CODEX_COUNT_BITS: `info` is an object, its usages are objects, the window is there; a usage's counts from bit 8 (last) and 16 (total). */
export const CODEX_HAS_INFO: i32 = 1;
export const CODEX_HAS_LAST: i32 = 2;
export const CODEX_HAS_TOTAL: i32 = 4;
export const CODEX_HAS_WINDOW: i32 = 8;
export const CODEX_LAST_BIT: i32 = 8;
export const CODEX_TOTAL_BIT: i32 = 16;

/** Above a string's byte length: its text holds an escape, or bytes beyond ASCII. */
export const CODEX_STRING_ESCAPED: i32 = 1 << 30;
export const CODEX_STRING_WIDE: i32 = 1 << 29;
export const CODEX_STRING_BYTES: i32 = (1 << 29) - 1;
