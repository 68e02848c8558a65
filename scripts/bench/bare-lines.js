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

/**
 * `counted`: also count the UTF-16 units of every other line, byte by byte (a byte that starts a
 * character counts one, a four-byte character's first byte two): the least an exact size of
 * what a line holds costs in JavaScript, with no parse and no structure. The count goes to
 * `onValue` as a number.
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
    } else if (counted) {
      for (let index = from; index < end; index++) {
        const byte = buffer[index];
        if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1;
      }
    }
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
