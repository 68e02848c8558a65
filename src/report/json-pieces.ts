/**
 * A record's JSON text made in pieces: the same characters `JSON.stringify` gives, as UTF-8
 * bytes of about a megabyte each, for a record too long to hold as one string. The long lists in
 * it (replay's turns) are `JsonList`s, each item mapped to its JSON object only as it is written,
 * so neither the whole tree of the record nor its whole text is ever held; only its bytes, in
 * buffers of their own that a worker thread hands over without a copy (src/worker.ts), and with
 * `jsonPiecesTo` not even those: each piece goes on, as text, as it is made.
 */

/**
 * A list whose items become JSON objects one at a time (`map`, given each item and its index),
 * for `jsonPieces`. To `JSON.stringify` it is the mapped array (toJSON), so a record holding one
 * serializes to the same text either way.
 */
export class JsonList<Item> {
  constructor(
    readonly items: readonly Item[],
    readonly map: (item: Item, index: number) => unknown,
  ) {}

  toJSON(): unknown[] {
    return this.items.map((item, index) => this.map(item, index));
  }
}

/** Characters of text encoded into one piece. */
const PIECE_CHARS = 1 << 20;

/** Levels of plain objects and arrays written member by member; deeper ones are stringified whole. */
const WALKED_LEVELS = 3;

/** Items of an array past which its items are stringified whole rather than walked. */
const WALKED_ITEMS = 16;

/** Where a record's pieces go as each is made: about a megabyte of its text. */
export type PieceSink = (text: string) => void;

/** The text, handed to `sink` a piece at a time as it reaches a piece's length. */
class Pieces {
  text = '';
  /** Pieces handed over so far. */
  handed = 0;

  constructor(private readonly sink: PieceSink) {}

  add(text: string): void {
    this.text += text;
    if (this.text.length >= PIECE_CHARS) this.flush();
  }

  flush(): void {
    if (this.text.length === 0) return;
    this.sink(this.text);
    this.handed++;
    this.text = '';
  }
}

/** True for what JSON.stringify leaves out of an object (and writes as null in an array). */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** `value`'s JSON text into `out`; `levels`: how deep plain objects and arrays are still walked. */
function write(value: unknown, levels: number, out: Pieces): void {
  if (value instanceof JsonList) {
    out.add('[');
    value.items.forEach((item, i) => {
      out.add(`${i > 0 ? ',' : ''}${JSON.stringify(value.map(item, i)) ?? 'null'}`);
    });
    out.add(']');
    return;
  }
  if (levels <= 0 || typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    out.add(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    // A long array's items are stringified whole, one at a time (walked member by member,
    // 17,784 turns shaped as inspect's took 3.5 times JSON.stringify's time, against 1.4); a
    // short one's (replay's policies) are walked, so the JsonLists in them stream too.
    const itemLevels = value.length > WALKED_ITEMS ? 0 : levels - 1;
    out.add('[');
    value.forEach((item: unknown, i) => {
      if (i > 0) out.add(',');
      if (omitted(item)) out.add('null');
      else write(item, itemLevels, out);
    });
    out.add(']');
    return;
  }
  out.add('{');
  let first = true;
  for (const name of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[name];
    if (omitted(member)) continue;
    out.add(`${first ? '' : ','}${JSON.stringify(name)}:`);
    first = false;
    write(member, levels - 1, out);
  }
  out.add('}');
}

/**
 * `value` as `JSON.stringify(value)` writes it (a record: plain objects, arrays, JsonLists and
 * primitives): as that text when it is shorter than `bytesFrom` characters, else as its UTF-8
 * bytes in pieces, each in a buffer of its own.
 */
export function jsonPieces(value: unknown, bytesFrom: number): string | Uint8Array[] {
  const bytes: Uint8Array[] = [];
  const encoder = new TextEncoder();
  const text = jsonPiecesTo(value, bytesFrom, (piece) => bytes.push(encoder.encode(piece)));
  return text ?? bytes;
}

/**
 * `value`'s JSON as jsonPieces makes it, each piece handed to `sink` as text as soon as it is
 * made, so the record is never held whole: its text when shorter than `bytesFrom` characters
 * (then `sink` was never called), else null once the last piece is handed over.
 */
export function jsonPiecesTo(value: unknown, bytesFrom: number, sink: PieceSink): string | null {
  const out = new Pieces(sink);
  write(value, WALKED_LEVELS, out);
  if (out.handed === 0 && out.text.length < bytesFrom) return out.text;
  out.flush();
  return null;
}
