/**
 * The records of the Claude Code line scanner (assembly/claude.ts, its layout in
 * assembly/layout.ts): the same numbers, for JavaScript. test/scan-claude.test.ts holds the two
 * to each other through the scanner's exported globals. 32-bit words, one record a line that
 * JavaScript must hear of, in line order. Strings are never copied: a string is its text's place
 * in the chunk of input scanned (offset from the chunk's start) and its byte length, with
 * STRING_ESCAPED and STRING_WIDE set above the length.
 */


/** A record's first word: its kind in the low byte, flags above. */
export const KIND_RAW = 1;
export const KIND_LINK = 2;
export const KIND_CHAT = 3;

/** Word 1: the line's number (1-based, over the whole file); word 2: the record's length in words. */
export const WORD_LINE = 1;
export const WORD_LENGTH = 2;

/** A raw line (JavaScript reads it as before): its offset and length; flag: a newline ended it. */
export const RAW_OFFSET = 3;
export const RAW_BYTES = 4;
export const RAW_WORDS = 5;
export const FLAG_TERMINATED = 1 << 8;

/** Strings of a link or chat line: two words each (offset, length with flags; length -1: absent or null). */
export const STRING_UUID = 3;
export const STRING_PARENT = 5;
/**
 * The uuid and the parent as four words each, when the string is a uuid in its usual spelling
 * (FLAG_UUID_WORDS, FLAG_PARENT_WORDS): the words src/formats/uuid-table.ts keeps it as, so the
 * chain looks a line up without a string made of its ids.
 */
export const WORDS_UUID = 7;
export const WORDS_PARENT = 11;
export const LINK_WORDS = 15;
export const STRING_TIMESTAMP = 15;
export const STRING_REQUEST = 17;
export const STRING_MESSAGE_ID = 19;
export const STRING_MODEL = 21;
export const STRING_FORKED_FROM = 23;
/** Usage: which counts are there (USAGE_* bits), then six counts as 64-bit integers (two words each). */
export const WORD_USAGE_BITS = 25;
export const WORD_USAGE_COUNTS = 26;
export const WORD_BLOCKS = 38;
export const CHAT_WORDS = 39;

/** Flags of a link or chat line. */
export const FLAG_SIDECHAIN = 1 << 8;
export const FLAG_ASSISTANT = 1 << 9;
/** The response's `stop_reason` is a string: its output count is final. */
export const FLAG_FINAL = 1 << 10;
export const FLAG_USAGE = 1 << 11;
/** WORDS_UUID, WORDS_PARENT hold the uuid's, the parent's words. */
export const FLAG_UUID_WORDS = 1 << 12;
export const FLAG_PARENT_WORDS = 1 << 13;
/** A compaction's summary (`isCompactSummary`): its texts are read whole, not as stand-ins. */
export const FLAG_COMPACT_SUMMARY = 1 << 14;

/** Usage counts in their order, and their bits in WORD_USAGE_BITS. */
export const USAGE_INPUT = 0;
export const USAGE_OUTPUT = 1;
export const USAGE_CACHE_WRITE = 2;
export const USAGE_CACHE_READ = 3;
export const USAGE_WRITE_5M = 4;
export const USAGE_WRITE_1H = 5;
/** `cache_creation` is an object (its counts may still be absent). */
export const USAGE_SPLIT = 6;

/** A content block: eight words. */
export const BLOCK_WORDS = 8;
export const BLOCK_TEXT = 1;
export const BLOCK_THINKING = 2;
export const BLOCK_TOOL_USE = 3;
export const BLOCK_TOOL_RESULT = 4;
/** Flags of a block: a tool result's `is_error` is true; a tool call's `input` is an object. */
export const FLAG_IS_ERROR = 1 << 8;
export const FLAG_INPUT_OBJECT = 1 << 9;
/** Word 1: the text's UTF-16 length; words 2-3: its hash (claude.ts) or, for a tool call, its input's place. */
export const BLOCK_UNITS = 1;
export const BLOCK_HASH = 2;
export const BLOCK_INPUT = 2;
/** Words 4-5: a tool block's id; words 6-7: the text (absent for a list of parts) or a tool call's name. */
export const BLOCK_ID = 4;
export const BLOCK_TEXT_STRING = 6;
export const BLOCK_NAME = 6;

/** Above a string's byte length: its text holds an escape, or bytes beyond ASCII. */
export const STRING_ESCAPED = 1 << 30;
export const STRING_WIDE = 1 << 29;
export const STRING_BYTES = (1 << 29) - 1;
