/**
 * The records of the Codex line scanner (assembly/codex.ts, its layout in
 * assembly/codex-layout.ts): the same numbers, for JavaScript. test/scan/scan-codex-diff.test.ts
 * holds the two to each other through the scanner's exported globals. Twelve 32-bit words a line
 * that JavaScript must hear of, in line order; a string is its text's place in the chunk scanned
 * and its byte length, with CODEX_STRING_ESCAPED and CODEX_STRING_WIDE set above the length
 * (length -1: absent).
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

/** A raw line: its offset and length. */
export const CODEX_RAW_OFFSET = 3;
export const CODEX_RAW_BYTES = 4;

/** Strings, two words each. */
export const CODEX_TIMESTAMP = 3;
export const CODEX_CALL_ID = 5;
export const CODEX_ID = 5;
export const CODEX_CWD = 7;
export const CODEX_FORKED_FROM = 9;
/** A text's UTF-16 length. */
export const CODEX_UNITS = 11;

/** Above a string's byte length: its text holds an escape, or bytes beyond ASCII. */
export const CODEX_STRING_ESCAPED = 1 << 30;
export const CODEX_STRING_WIDE = 1 << 29;
export const CODEX_STRING_BYTES = (1 << 29) - 1;
