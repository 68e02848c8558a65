/**
 * Fitting a transcript into the summarizer's window: pack serialized messages into chunks of
 * at most a character budget (a message too large on its own is cut at line breaks), and halve
 * a chunk the endpoint said was still too large. Pure; sizes are characters (chars/4 tokens).
 */

/** Cuts text into pieces of at most `maxChars`, at the last line break in the second half of each piece when there is one. */
export function cutText(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars);
    const lineBreak = window.lastIndexOf('\n');
    const at = lineBreak >= maxChars / 2 ? lineBreak : maxChars;
    pieces.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^\n/, '');
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces;
}

/** Packs entries (one serialized message each) in order into chunks of at most `maxChars`. */
export function packChunks(entries: readonly string[], maxChars: number): string[] {
  if (maxChars < 1) throw new RangeError('chunk budget must be at least one character');
  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    if (current !== '') chunks.push(current);
    current = '';
  };
  for (const entry of entries) {
    for (const piece of cutText(entry, maxChars)) {
      const joined = current === '' ? piece : `${current}\n${piece}`;
      if (joined.length <= maxChars) current = joined;
      else {
        flush();
        current = piece;
      }
    }
  }
  flush();
  return chunks;
}

/** Chunks smaller than this are not split further: an overflow at this size is not the transcript's fault. */
export const MIN_SPLIT_CHARS = 400;

/** Two halves of a chunk, cut at a line break near the middle; null when it is too small to split. */
export function splitInHalf(chunk: string): [string, string] | null {
  if (chunk.length < MIN_SPLIT_CHARS) return null;
  const [first, ...rest] = cutText(chunk, Math.ceil(chunk.length / 2) + 1);
  return [first!, rest.join('\n')];
}
