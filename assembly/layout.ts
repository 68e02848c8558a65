/**
 * The records the Claude Code line scanner (claude.ts) writes for JavaScript
 * (src/scan/claude-layout.ts has the same numbers): 32-bit words, one record a line that JavaScript must
 * hear of, in line order. Strings are never copied: a string is its text's place in the chunk
 * of input scanned (offset from the chunk's start) and its byte length, with STRING_ESCAPED and
 * STRING_WIDE set above the length. Exported, so a test can hold src/scan/ to the same numbers.
 */

/** A record's first word: its kind in the low byte, flags above. */
export const KIND_RAW: i32 = 1;
export const KIND_LINK: i32 = 2;
export const KIND_CHAT: i32 = 3;

/** Word 1: the line's number (1-based, over the whole file); word 2: the record's length in words. */
export const WORD_LINE: i32 = 1;
export const WORD_LENGTH: i32 = 2;

/** A raw line (JavaScript reads it as before): its offset and length; flag: a newline ended it. */
export const RAW_OFFSET: i32 = 3;
export const RAW_BYTES: i32 = 4;
export const RAW_WORDS: i32 = 5;
export const FLAG_TERMINATED: i32 = 1 << 8;

/** Strings of a link or chat line: two words each (offset, length with flags; length -1: absent or null). */
export const STRING_UUID: i32 = 3;
export const STRING_PARENT: i32 = 5;
/**
 * The uuid and the parent as four words each, when the string is a uuid in its usual spelling
 * (FLAG_UUID_WORDS, FLAG_PARENT_WORDS): the words src/formats/uuid-table.ts keeps it as, so the
 * chain looks a line up without a string made of its ids.
 */
export const WORDS_UUID: i32 = 7;
export const WORDS_PARENT: i32 = 11;
export const LINK_WORDS: i32 = 15;
export const STRING_TIMESTAMP: i32 = 15;
export const STRING_REQUEST: i32 = 17;
export const STRING_MESSAGE_ID: i32 = 19;
export const STRING_MODEL: i32 = 21;
export const STRING_FORKED_FROM: i32 = 23;
/** Usage: which counts are there (USAGE_* bits), then six counts as 64-bit integers (two words each). */
export const WORD_USAGE_BITS: i32 = 25;
export const WORD_USAGE_COUNTS: i32 = 26;
export const WORD_BLOCKS: i32 = 38;
export const CHAT_WORDS: i32 = 39;

/** Flags of a link or chat line. */
export const FLAG_SIDECHAIN: i32 = 1 << 8;
export const FLAG_ASSISTANT: i32 = 1 << 9;
/** The response's `stop_reason` is a string: its output count is final. */
export const FLAG_FINAL: i32 = 1 << 10;
export const FLAG_USAGE: i32 = 1 << 11;
/** WORDS_UUID, WORDS_PARENT hold the uuid's, the parent's words. */
export const FLAG_UUID_WORDS: i32 = 1 << 12;
export const FLAG_PARENT_WORDS: i32 = 1 << 13;
/** A compaction's summary (`isCompactSummary`): its texts are read whole, not as stand-ins. */
export const FLAG_COMPACT_SUMMARY: i32 = 1 << 14;

/** Usage counts in their order, and their bits in WORD_USAGE_BITS. */
export const USAGE_INPUT: i32 = 0;
export const USAGE_OUTPUT: i32 = 1;
export const USAGE_CACHE_WRITE: i32 = 2;
export const USAGE_CACHE_READ: i32 = 3;
export const USAGE_WRITE_5M: i32 = 4;
export const USAGE_WRITE_1H: i32 = 5;
/** `cache_creation` is an object (its counts may still be absent). */
export const USAGE_SPLIT: i32 = 6;

/** A content block: eight words. */
export const BLOCK_WORDS: i32 = 8;
export const BLOCK_TEXT: i32 = 1;
export const BLOCK_THINKING: i32 = 2;
export const BLOCK_TOOL_USE: i32 = 3;
export const BLOCK_TOOL_RESULT: i32 = 4;
/** Flags of a block: a tool result's `is_error` is true; a tool call's `input` is an object. */
export const FLAG_IS_ERROR: i32 = 1 << 8;
export const FLAG_INPUT_OBJECT: i32 = 1 << 9;
/** Word 1: the text's UTF-16 length; words 2-3: its hash (claude.ts) or, for a tool call, its input's place. */
export const BLOCK_UNITS: i32 = 1;
export const BLOCK_HASH: i32 = 2;
export const BLOCK_INPUT: i32 = 2;
/** Words 4-5: a tool block's id; words 6-7: the text (absent for a list of parts) or a tool call's name. */
export const BLOCK_ID: i32 = 4;
export const BLOCK_TEXT_STRING: i32 = 6;
export const BLOCK_NAME: i32 = 6;

/** Above a string's byte length: its text holds an escape, or bytes beyond ASCII. */
export const STRING_ESCAPED: i32 = 1 << 30;
export const STRING_WIDE: i32 = 1 << 29;
export const STRING_BYTES: i32 = (1 << 29) - 1;
