/**
 * The bare loop's body, shared by the yardsticks: find each newline with indexOf, JSON.parse the
 * line, hand the value over.
 *
 * `parseEveryLine` reads the whole file into one Buffer: the strongest loop for the corpora's
 * files (a few MB each). `parseEveryLineInPieces` reads 1 MiB at a time into one reused Buffer,
 * as our own reader does: for a single 1 GB session, allocating and faulting in a 1 GB Buffer
 * made the yardstick's wall move by a third from run to run while the rows' walls held still.
 * `parseUsageLines` reads the whole file too but parses only the lines that hold `"usage":`
 * (and, `counted`, counts the characters of the others).
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

export function parseEveryLine(file, onValue) {
  const buffer = readFileSync(file);
  let from = 0;
  while (from < buffer.length) {
    let end = buffer.indexOf(0x0a, from);
    if (end < 0) end = buffer.length;
    if (end > from) onValue(JSON.parse(buffer.toString('utf8', from, end)));
    from = end + 1;
  }
}

const USAGE_KEY = Buffer.from('"usage":');

/** How many bits are set in a 32-bit word. */
function bitCount(word) {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** UTF-16 units of one byte of UTF-8: none for a continuation byte, two for a four-byte character's first. */
const byteUnits = (byte) => ((byte & 0xc0) === 0x80 ? 0 : byte >= 0xf0 ? 2 : 1);

/**
 * The UTF-16 units of the UTF-8 bytes [from, end) of `buffer`, four bytes at a time: a word of
 * ASCII is four units at once; otherwise its continuation bytes (10xxxxxx) count none and its
 * four-byte characters' first bytes (11110xxx) two. About three times a byte loop's speed here.
 */
function utf16Units(buffer, from, end) {
  let units = 0;
  let index = from;
  for (; index < end && (buffer.byteOffset + index) % 4 !== 0; index++) units += byteUnits(buffer[index]);
  const count = (end - index) >>> 2;
  const words = new Int32Array(buffer.buffer, buffer.byteOffset + index, count);
  let continuations = 0;
  let fourByteLeads = 0;
  for (let at = 0; at < count; at++) {
    const word = words[at];
    const high = word & 0x80808080;
    if (high === 0) continue;
    continuations += bitCount(high & ~(word << 1));
    fourByteLeads += bitCount(high & (word << 1) & (word << 2) & (word << 3));
  }
  units += count * 4 - continuations + fourByteLeads;
  for (index += count * 4; index < end; index++) units += byteUnits(buffer[index]);
  return units;
}

/**
 * `counted`: also count the UTF-16 units of every other line (utf16Units): the least an exact
 * size of what a line holds costs in JavaScript, with no parse and no structure. The count goes
 * to `onValue` as a number.
 */
export function parseUsageLines(file, onValue, counted = false) {
  const buffer = readFileSync(file);
  let from = 0;
  let units = 0;
  // The first `"usage":` at or after the line's start; a line is parsed when it holds it.
  let usage = buffer.indexOf(USAGE_KEY);
  while (from < buffer.length) {
    let end = buffer.indexOf(0x0a, from);
    if (end < 0) end = buffer.length;
    if (usage >= 0 && usage < end) {
      onValue(JSON.parse(buffer.toString('utf8', from, end)));
      usage = buffer.indexOf(USAGE_KEY, end);
    } else if (counted) units += utf16Units(buffer, from, end);
    from = end + 1;
  }
  if (counted) onValue(units);
}

const PIECE = 1 << 20;

export function parseEveryLineInPieces(file, onValue) {
  const fd = openSync(file, 'r');
  try {
    let buffer = Buffer.allocUnsafe(PIECE);
    // Bytes [0, kept) are the start of a line the last read cut off.
    let kept = 0;
    for (;;) {
      if (kept === buffer.length) {
        // A line longer than the buffer: grow it, keeping what it holds.
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, kept);
        buffer = bigger;
      }
      const read = readSync(fd, buffer, kept, buffer.length - kept, null);
      const filled = kept + read;
      let from = 0;
      for (;;) {
        const end = buffer.indexOf(0x0a, from);
        if (end < 0 || end >= filled) break;
        if (end > from) onValue(JSON.parse(buffer.toString('utf8', from, end)));
        from = end + 1;
      }
      if (read === 0) {
        if (filled > from) onValue(JSON.parse(buffer.toString('utf8', from, filled)));
        return;
      }
      buffer.copy(buffer, 0, from, filled);
      kept = filled - from;
    }
  } finally {
    closeSync(fd);
  }
}
