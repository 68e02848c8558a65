/**
 * Following one JSON line member by member from its bytes, for the measuring cutters
 * (claude-code-lengths.ts, canonical-lengths.ts): keys, values skipped whole, strings found by
 * their quotes, and a string's UTF-16 length counted where it is long enough to be worth not
 * decoding. The walk expects the line as JSON.stringify writes it (no space between tokens, keys
 * without escapes) and throws UNCERTAIN at anything else; the cutter then leaves the line to be
 * parsed whole. Which members a format measures is its cutter's call.
 */
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, jsonStringLength, lastSignificant, nestedValueEnd, OPEN_BRACE, OPEN_BRACKET, QUOTE, SPACE, stringEnd } from './json-bytes.js';

/** Strings shorter than this (in bytes) are parsed as they are: measuring them saves nothing. */
export const MEASURED_MIN_BYTES = 256;

/**
 * A string of `length` UTF-16 units standing for a text that was measured, not read. V8 builds
 * `repeat` by doubling a rope, so it holds a few dozen nodes, not `length` characters, until
 * something reads its characters (nothing does in a measured read).
 */
export function measuredText(length: number): string {
  return ' '.repeat(length);
}

export class Uncertain extends Error {}
/** Thrown by a walk at what it does not expect (one instance: nothing is built for it). */
export const UNCERTAIN = new Uncertain();

/** What `walk` finds, or null when it met what it does not expect (UNCERTAIN); any other error is thrown. */
export function certainly<T>(walk: () => T): T | null {
  try {
    return walk();
  } catch (error) {
    if (error !== UNCERTAIN) throw error;
    return null;
  }
}

/** Whether bytes [from, to) spell `name` (keys are short: a loop beats Buffer.compare's call). */
export function equalBytes(bytes: Buffer, from: number, to: number, name: Buffer): boolean {
  if (to - from !== name.length) return false;
  for (let index = 0; index < name.length; index++) if (bytes[from + index] !== name[index]) return false;
  return true;
}

/** A string value's bytes [from, to), its quotes included. */
export interface Candidate {
  readonly from: number;
  readonly to: number;
}

/** A byte range of the line left out of the parsed text: replaced by `""`, or by nothing for `drop`. */
export interface LeftOut {
  readonly from: number;
  readonly to: number;
  readonly drop: boolean;
}

/** The line's text without the ranges `spans` leaves out (in order, not overlapping). */
export function textWithout(bytes: Buffer, spans: readonly LeftOut[]): string {
  let text = '';
  let from = 0;
  for (const span of spans) {
    text += bytes.toString('utf8', from, span.from);
    if (!span.drop) text += '""';
    from = span.to;
  }
  return text + bytes.toString('utf8', from, bytes.length);
}

/** A walk over one line's bytes, from its start; a cutter's walk extends it with the members it measures. */
export class JsonWalk {
  protected at = 0;

  constructor(protected readonly bytes: Buffer) {}

  protected expect(byte: number): void {
    if (this.bytes[this.at] !== byte) throw UNCERTAIN;
    this.at++;
  }

  /**
   * A key and its colon; returns the key's text range. No escape or raw control character in it
   * (JSON.parse refuses the latter): keys are short, so a loop finds the closing quote, where
   * asking indexOf for the first backslash could search the rest of the line.
   */
  protected key(): [number, number] {
    const { bytes } = this;
    const from = this.at;
    if (bytes[from] !== QUOTE) throw UNCERTAIN;
    let end = from + 1;
    for (let byte = bytes[end]; byte !== QUOTE; byte = bytes[++end]) if (byte === undefined || byte === BACKSLASH || byte < SPACE) throw UNCERTAIN;
    this.at = end + 1;
    this.expect(COLON);
    return [from + 1, end];
  }

  /** Skips a value of any kind; returns where it began. */
  protected skipValue(): number {
    const from = this.at;
    const first = this.bytes[from];
    let end: number;
    if (first === QUOTE || first === OPEN_BRACE || first === OPEN_BRACKET) end = nestedValueEnd(this.bytes, from);
    else {
      // A number, true, false or null: up to the next separator (JSON.parse checks its spelling).
      end = from;
      for (let byte = this.bytes[end]; byte !== undefined && byte !== COMMA && byte !== CLOSE_BRACE && byte !== CLOSE_BRACKET; byte = this.bytes[++end]) {
        if (byte <= SPACE || byte === QUOTE) throw UNCERTAIN;
      }
      if (end === from) throw UNCERTAIN;
    }
    if (end < 0) throw UNCERTAIN;
    this.at = end;
    return from;
  }

  /** A string value (or null when the value is something else, then skipped). */
  protected stringValue(): Candidate | null {
    if (this.bytes[this.at] !== QUOTE) {
      this.skipValue();
      return null;
    }
    const from = this.at;
    const end = stringEnd(this.bytes, from);
    if (end < 0) throw UNCERTAIN;
    this.at = end;
    return { from, to: end };
  }

  /** The members of an object, `visit` called with each key's range; the value is the visitor's to consume. */
  protected object(visit: (from: number, to: number) => void): void {
    this.expect(OPEN_BRACE);
    if (this.bytes[this.at] === CLOSE_BRACE) {
      this.at++;
      return;
    }
    for (;;) {
      const [from, to] = this.key();
      visit(from, to);
      const next = this.bytes[this.at++];
      if (next === CLOSE_BRACE) return;
      if (next !== COMMA) throw UNCERTAIN;
    }
  }

  /**
   * An object whose one member that matters is `name`: `visit` takes its value, every other
   * member is skipped. A second `name` is uncertain (JSON.parse keeps the last).
   */
  protected member(name: Buffer, visit: () => void): void {
    let seen = false;
    this.object((from, to) => {
      if (!equalBytes(this.bytes, from, to, name)) {
        this.skipValue();
        return;
      }
      if (seen) throw UNCERTAIN;
      seen = true;
      visit();
    });
  }

  protected array(visit: (index: number) => void): void {
    this.expect(OPEN_BRACKET);
    if (this.bytes[this.at] === CLOSE_BRACKET) {
      this.at++;
      return;
    }
    for (let index = 0; ; index++) {
      visit(index);
      const next = this.bytes[this.at++];
      if (next === CLOSE_BRACKET) return;
      if (next !== COMMA) throw UNCERTAIN;
    }
  }

  /** Nothing but a line end after what was walked. */
  protected ended(): void {
    if (lastSignificant(this.bytes) >= this.at) throw UNCERTAIN;
  }

  /** The UTF-16 length of a string worth measuring, null for one too short to be; uncertain when JSON.parse would refuse it. */
  protected measuredLength(value: Candidate): number | null {
    if (value.to - value.from < MEASURED_MIN_BYTES) return null;
    const length = jsonStringLength(this.bytes, value.from + 1, value.to - 1);
    if (length < 0) throw UNCERTAIN;
    return length;
  }
}
