/**
 * The records the Codex line scanner (codex.ts) writes for JavaScript (src/scan/codex-layout.ts
 * has the same numbers): twelve 32-bit words a line that JavaScript must hear of, in line order.
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

/** A raw line: its offset and length. */
export const CODEX_RAW_OFFSET: i32 = 3;
export const CODEX_RAW_BYTES: i32 = 4;

/** Strings, two words each. */
export const CODEX_TIMESTAMP: i32 = 3;
export const CODEX_CALL_ID: i32 = 5;
export const CODEX_ID: i32 = 5;
export const CODEX_CWD: i32 = 7;
export const CODEX_FORKED_FROM: i32 = 9;
/** A text's UTF-16 length. */
export const CODEX_UNITS: i32 = 11;

/** Above a string's byte length: its text holds an escape, or bytes beyond ASCII. */
export const CODEX_STRING_ESCAPED: i32 = 1 << 30;
export const CODEX_STRING_WIDE: i32 = 1 << 29;
export const CODEX_STRING_BYTES: i32 = (1 << 29) - 1;
