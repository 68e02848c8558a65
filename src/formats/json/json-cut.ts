/**
 * Cutting the values a reader never reads out of a JSON line's bytes before it is decoded and
 * parsed: Claude Code's `toolUseResult` (a duplicate of the tool output, 20–40% of a file's
 * bytes) and the bodies of its progress, attachment and snapshot lines. Decoding and parsing
 * those bytes was most of the time spent reading a Claude Code archive (README "Performance").
 *
 * Only the value of a key of the line's top-level object is cut, and only when its extent is
 * certain: strings (with their escapes) and nesting are followed, and the key is proven to sit at
 * depth one by the shorter of the text before it and the text after its value. Anything else
 * (spaces around the colon, a BOM, a key first in its object, a nested key of that name, a line
 * that does not end) leaves the line whole. What a cut value held is not checked, so a syntax
 * error inside it goes unreported; everything else on the line is parsed as before. A line of a
 * type its reader reads nothing of can be skipped whole (`KeyCutter.skip`), on the same kind of
 * proof from its bytes. Which keys and lines a format may lose is its reader's call; parsing and
 * error messages are jsonl-lines.ts's.
 */
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COMMA, lastSignificant, nestedValueEnd, OPEN_BRACE, OPEN_BRACKET, QUOTE, SPACE, stringEnd } from './json-bytes.js';
import { certainly, equalBytes, JsonWalk, UNCERTAIN } from './json-walk.js';

/**
 * How many containers are opened between `from` and `to` and not closed (strings skipped), or
 * -1 when more close than open along the way or a string runs past `to`.
 */
function netDepth(bytes: Buffer, from: number, to: number): number {
  let depth = 0;
  for (let at = from; at < to; ) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      at = stringEnd(bytes, at);
      if (at < 0 || at > to) return -1;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth < 0) return -1;
    at++;
  }
  return depth;
}

/**
 * What a skipped line stands for: the reader is handed `{ type }` instead of the parsed line (the
 * line's own type, and nothing else, which is all a reader that skips it reads of it), or for a
 * line read for its links (`KeyCutter` `links`) the type and those keys' values as JSON.parse
 * would give them.
 */
export interface SkippedLine {
  readonly type: string;
  readonly [link: string]: string | boolean | null;
}

/** The value of a link key taken from the bytes: a string without escapes, null, true or false; undefined: anything else. */
function linkValue(bytes: Buffer, from: number, to: number): string | boolean | null | undefined {
  const first = bytes[from];
  if (first === QUOTE) {
    // Raw control characters (JSON.parse refuses them) and escapes (decoding's business) are left to the parse.
    for (let at = from + 1; at < to - 1; at++) if (bytes[at]! < SPACE || bytes[at] === BACKSLASH) return undefined;
    return bytes.toString('utf8', from + 1, to - 1);
  }
  const length = to - from;
  if (length === 4 && first === 0x6e && bytes[from + 1] === 0x75 && bytes[from + 2] === 0x6c && bytes[from + 3] === 0x6c) return null;
  if (length === 4 && first === 0x74 && bytes[from + 1] === 0x72 && bytes[from + 2] === 0x75 && bytes[from + 3] === 0x65) return true;
  if (length === 5 && first === 0x66 && bytes[from + 1] === 0x61 && bytes[from + 2] === 0x6c && bytes[from + 3] === 0x73 && bytes[from + 4] === 0x65) return false;
  return undefined;
}

/** Index of the name bytes [from, to) spell among `names`, or -1. */
function nameIndex(bytes: Buffer, from: number, to: number, names: readonly Buffer[]): number {
  for (let index = 0; index < names.length; index++) if (equalBytes(bytes, from, to, names[index]!)) return index;
  return -1;
}

/**
 * A line cut before it is parsed: the text to parse, and what to put back into the parsed value
 * (claude-code-lengths.ts: stand-ins for strings that were measured, not decoded).
 */
export interface MeasuredCut {
  readonly text: string;
  readonly restore: (value: unknown) => void;
}

/** What jsonl-lines.ts asks of a reader's cutter, line by line. */
export interface LineCutter {
  /** The stand-in for a line the reader reads nothing of but its type (and links), or null to read it; `utf8`: the line is valid UTF-8. */
  skip(bytes: Buffer, utf8: boolean): SkippedLine | null;
  /** The text to parse instead of the whole line, or null to parse it whole; `utf8`: the line is valid UTF-8. */
  cut(bytes: Buffer, utf8: boolean): string | MeasuredCut | null;
}

/** Follows a line's top-level members for its link keys (KeyCutter.links); throws UNCERTAIN at anything unexpected. */
class LinkWalk extends JsonWalk {
  constructor(
    bytes: Buffer,
    private readonly names: readonly Buffer[],
    private readonly keys: readonly string[],
  ) {
    super(bytes);
  }

  /** The link keys' values as JSON.parse gives them (the last of a key written twice). */
  line(): Record<string, string | boolean | null> {
    const found: Record<string, string | boolean | null> = {};
    this.object((from, to) => {
      const name = nameIndex(this.bytes, from, to, this.names);
      const valueFrom = this.skipValue();
      if (name < 0) return;
      const value = linkValue(this.bytes, valueFrom, this.at);
      if (value === undefined) throw UNCERTAIN;
      found[this.keys[name]!] = value;
    });
    this.ended();
    return found;
  }
}

/** How far into a line its `type` (and a cut key written early, as 2.1.x does) is looked for. */
const HEAD_BYTES = 2048;
const TYPE_KEY = Buffer.from('"type":"');
const TYPE_NAME = Buffer.from('"type"');
/** Longer than any line type a reader names. */
const MAX_TYPE_BYTES = 64;

/**
 * Cuts out of a JSON line the value of one top-level key chosen by the line's `type` (e.g. a
 * `progress` line's `data`). Build one per reader and reuse it for every line.
 *
 * Searching a line for a key costs a third of what decoding and parsing it does (measured), so
 * each line is searched for one key only: its type is read from the line's head, then the key is
 * looked for in the head and else from the end of the line.
 */
export class KeyCutter implements LineCutter {
  /** `,"key":` by line type: a key after another one, written without spaces (JSON.stringify). */
  private readonly needles: ReadonlyMap<string, Buffer>;
  private readonly skipped: ReadonlyMap<string, SkippedLine>;
  /** Keys whose presence anywhere in a line keeps it from being skipped (as `"key"`). */
  private readonly keepers: readonly Buffer[];
  /** Line types read for their links only; `type` and the link keys, as bytes and as names (`links`). */
  private readonly linkTypes: ReadonlySet<string>;
  private readonly linkNames: readonly string[];
  private readonly linkBytes: readonly Buffer[];

  /**
   * `skip`: line types the reader reads nothing of but their type, as long as none of the
   * `unlessKeys` is on the line (e.g. the keys that would link it into a chain). Such a line is
   * not decoded or parsed at all (see `skip`). `links`: line types the reader reads nothing of
   * but their type and the link `keys` (those of a chain: a progress line's uuid and parent); a
   * line of such a type that is not skipped is not parsed either when its top-level keys can be
   * followed from its bytes (see `links`).
   */
  constructor(
    keyByType: Readonly<Record<string, string>>,
    skip: { readonly types: readonly string[]; readonly unlessKeys: readonly string[] } = { types: [], unlessKeys: [] },
    links: { readonly types: readonly string[]; readonly keys: readonly string[] } = { types: [], keys: [] },
  ) {
    this.needles = new Map(Object.entries(keyByType).map(([type, key]) => [type, Buffer.from(`,${JSON.stringify(key)}:`)]));
    this.skipped = new Map(skip.types.map((type) => [type, Object.freeze({ type })]));
    this.keepers = skip.unlessKeys.map((key) => Buffer.from(JSON.stringify(key)));
    this.linkTypes = new Set(links.types);
    this.linkNames = ['type', ...links.keys];
    this.linkBytes = this.linkNames.map((name) => Buffer.from(name));
  }

  /**
   * The stand-in for a line the reader can skip, or null to read it. Skipped only when its bytes
   * prove it: an object that ends, one `"type"` on the whole line (so no nested one, and no
   * second top-level one that JSON.parse would take instead), written as a key at the top level
   * (after `{` or `,`, depth one), its value a skipped type, and none of the keys that keep a line
   * anywhere on it. What the skipped line held is not checked: a syntax error on it goes
   * unreported, as inside a cut value.
   */
  skip(bytes: Buffer, utf8: boolean): SkippedLine | null {
    if (bytes[0] !== OPEN_BRACE) return null;
    const type = this.headType(bytes);
    if (type === null) return null;
    return this.skipWhole(bytes, type) ?? (utf8 && this.linkTypes.has(type) ? this.links(bytes) : null);
  }

  /** `{ type }` for a line of a skipped type that certainly names no key that keeps it (see `skip`). */
  private skipWhole(bytes: Buffer, type: string): SkippedLine | null {
    const skipped = this.skipped.get(type);
    if (!skipped) return null;
    const at = this.typeAt;
    const from = at + TYPE_KEY.length;
    const to = from + type!.length;
    if (at < 1) return null;
    if (bytes[at - 1] !== OPEN_BRACE && bytes[at - 1] !== COMMA) return null;
    // The keepers first: a line that has one (most progress lines) is given up on before any whole-line search for `"type"`.
    for (const key of this.keepers) if (bytes.indexOf(key) >= 0) return null;
    if (bytes.indexOf(TYPE_NAME) !== at || bytes.indexOf(TYPE_NAME, at + 1) >= 0) return null;
    const last = lastSignificant(bytes);
    if (bytes[last] !== CLOSE_BRACE) return null;
    // The type's value ends there (no escape inside it), and the key sits at depth one.
    if (stringEnd(bytes, from - 1) !== to + 1 || netDepth(bytes, 0, at) !== 1) return null;
    return skipped;
  }

  /**
   * A link type's line as the reader reads it: its `type` and link keys with the values JSON.parse
   * would give them (the last of a key written twice), or null to parse it. The top-level object
   * is followed key by key from its bytes (strings by their quotes, nested values by their
   * brackets), so a nested key of the same name is never taken for one. Parsed instead: anything
   * unexpected (a space between tokens, a key with an escape, a line that goes on after its
   * object), a link value that is not a string without escapes, null or a boolean (the reader
   * warns of it), a top-level type that is no link type. As with a skipped line or a cut value,
   * what the other values hold is not checked: a syntax error in them goes unreported.
   */
  links(bytes: Buffer): SkippedLine | null {
    const found = certainly(() => new LinkWalk(bytes, this.linkBytes, this.linkNames).line());
    if (found === null) return null;
    const type = found['type'];
    if (typeof type !== 'string' || !this.linkTypes.has(type)) return null;
    return found as SkippedLine;
  }

  /** The line `headType` last looked at (its bytes' view: a new one for each line), and what it found. */
  private typedLine: Buffer | null = null;
  private typeName: string | null = null;
  /** Where that line's first `"type":"` is (-1: not in its head). */
  private typeAt = -1;

  /**
   * The value of the first `"type":"…"` in a line's head (it may be a nested one: the callers
   * prove what they need), or null. `skip`, `cut` and a measuring cutter each ask it of every
   * line: the search (a needle that starts with a quote stops at every quote) is made once.
   */
  headType(bytes: Buffer): string | null {
    if (bytes === this.typedLine) return this.typeName;
    this.typedLine = bytes;
    this.typeName = null;
    this.typeAt = bytes.subarray(0, HEAD_BYTES).indexOf(TYPE_KEY);
    if (this.typeAt < 0) return null;
    const from = this.typeAt + TYPE_KEY.length;
    const to = bytes.indexOf(QUOTE, from);
    if (to >= 0 && to - from <= MAX_TYPE_BYTES) this.typeName = bytes.toString('latin1', from, to);
    return this.typeName;
  }

  /**
   * The line's text with the value cut out, or null when nothing is cut (the caller then decodes
   * the line whole). The bytes are left as they are.
   */
  cut(bytes: Buffer): string | null {
    if (bytes[0] !== OPEN_BRACE) return null;
    const type = this.headType(bytes);
    const needle = type === null ? undefined : this.needles.get(type);
    if (!needle) return null;
    const head = bytes.subarray(0, HEAD_BYTES);
    let start = head.indexOf(needle);
    if (start < 0) start = bytes.lastIndexOf(needle);
    if (start < 0) return null;
    const last = lastSignificant(bytes);
    if (bytes[last] !== CLOSE_BRACE) return null;
    const end = nestedValueEnd(bytes, start + needle.length);
    if (end < 0 || end > last) return null;
    // Prove depth one on whichever side is shorter: the text before the key, or after the value.
    const atTop = start < last - end ? netDepth(bytes, 0, start) === 1 : netDepth(bytes, end, last) === 0;
    if (!atTop) return null;
    return bytes.toString('utf8', 0, start) + bytes.toString('utf8', end, last + 1);
  }
}
