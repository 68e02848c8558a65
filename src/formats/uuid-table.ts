/**
 * A table from uuids to numbers that keeps a uuid as its 16 bytes, not as a string: the Claude
 * Code chain (claude-code-chain.ts) names every line of a file by its uuid, about 200,000 in a
 * 1 GB session, and a Map kept each one's 36-character string and its entry (about 90 bytes a
 * line, all of it traced by the garbage collector). Here a uuid in its usual spelling (lowercase
 * hex, 8-4-4-4-12) is four 32-bit words in a typed array, found by open addressing: 28 bytes an
 * entry, nothing to trace. Any other string (an uppercase or hand-written id) goes to a Map, so
 * the table answers exactly as a Map of the strings would. Keys are only added, never removed.
 */

import { grown } from './grown.js';

/** Each hex digit's value by its character code (lowercase only: 'A' and 'a' are other strings), else -1. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX_VALUE['0123456789abcdef'.charCodeAt(digit)] = digit;

const DASH = 45;
/** Room made first (doubled as needed): small, since an archive holds many small sessions, each read with a table of its own. */
const FIRST_ENTRIES = 64;

/** The four words of `key` into `into`, or false when `key` is not a uuid in its usual spelling. */
function uuidWords(key: string, into: Int32Array): boolean {
  if (key.length !== 36) return false;
  if (key.charCodeAt(8) !== DASH || key.charCodeAt(13) !== DASH || key.charCodeAt(18) !== DASH || key.charCodeAt(23) !== DASH) return false;
  let word = 0;
  let digits = 0;
  let at = 0;
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) continue;
    const code = key.charCodeAt(i);
    const value = code < 128 ? HEX_VALUE[code]! : -1;
    if (value < 0) return false;
    word = (word << 4) | value;
    if (++digits === 8) {
      into[at++] = word;
      word = 0;
      digits = 0;
    }
  }
  return true;
}

/** A slot for four words (uuids written by hand or in tests are far from random: mixed). */
function hashOf(a: number, b: number, c: number, d: number): number {
  let hash = Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b) ^ Math.imul(c, 0xc2b2ae35) ^ Math.imul(d, 0x27d4eb2f);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b3c6d);
  return hash ^ (hash >>> 13);
}

export class UuidTable {
  /** Four words an entry, in the order added. */
  private words = new Int32Array(4 * FIRST_ENTRIES);
  private values = new Int32Array(FIRST_ENTRIES);
  /** Entry + 1 by hash slot (0: empty); at most half full. */
  private slots = new Int32Array(2 * FIRST_ENTRIES);
  private entries = 0;
  private readonly others = new Map<string, number>();
  /** The words of the key being looked up. */
  private readonly key = new Int32Array(4);

  get size(): number {
    return this.entries + this.others.size;
  }

  /** How many keys are not uuids in their usual spelling. */
  get otherKeys(): number {
    return this.others.size;
  }

  get(key: string): number | undefined {
    if (!uuidWords(key, this.key)) return this.others.get(key);
    const entry = this.find();
    return entry < 0 ? undefined : this.values[entry];
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /**
   * `get` of a uuid in its usual spelling given as its four words, `words[at]` to `words[at + 3]`
   * (as uuidWords makes them; the WebAssembly scanner writes them so: src/scan/claude-layout.ts).
   */
  getWords(words: Int32Array, at: number): number | undefined {
    this.keyFrom(words, at);
    const entry = this.find();
    return entry < 0 ? undefined : this.values[entry];
  }

  /** `set` of a uuid in its usual spelling given as its four words (getWords). */
  setWords(words: Int32Array, at: number, value: number): void {
    this.keyFrom(words, at);
    this.setKey(value);
  }

  private keyFrom(words: Int32Array, at: number): void {
    const { key } = this;
    key[0] = words[at]!;
    key[1] = words[at + 1]!;
    key[2] = words[at + 2]!;
    key[3] = words[at + 3]!;
  }

  /** Sets `key`'s value (a new key, or a new value for one already there). */
  set(key: string, value: number): void {
    if (!uuidWords(key, this.key)) {
      this.others.set(key, value);
      return;
    }
    this.setKey(value);
  }

  /** Sets the value of the key whose words are in `key`. */
  private setKey(value: number): void {
    const known = this.find();
    if (known >= 0) {
      this.values[known] = value;
      return;
    }
    const entry = this.entries++;
    if (entry === this.values.length) this.growEntries();
    this.words.set(this.key, 4 * entry);
    this.values[entry] = value;
    if (2 * this.entries > this.slots.length) this.growSlots();
    else this.place(entry);
  }

  /** The entry holding the words in `key`, or -1. */
  private find(): number {
    const { key } = this;
    const a = key[0]!;
    const b = key[1]!;
    const c = key[2]!;
    const d = key[3]!;
    const { slots, words } = this;
    const mask = slots.length - 1;
    for (let slot = hashOf(a, b, c, d) & mask; ; slot = (slot + 1) & mask) {
      const held = slots[slot]!;
      if (held === 0) return -1;
      const at = 4 * (held - 1);
      if (words[at] === a && words[at + 1] === b && words[at + 2] === c && words[at + 3] === d) return held - 1;
    }
  }

  private place(entry: number): void {
    const { slots, words } = this;
    const mask = slots.length - 1;
    const at = 4 * entry;
    let slot = hashOf(words[at]!, words[at + 1]!, words[at + 2]!, words[at + 3]!) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = entry + 1;
  }

  private growEntries(): void {
    this.words = grown(this.words, this.words.length * 2);
    this.values = grown(this.values, this.values.length * 2);
  }

  private growSlots(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let entry = 0; entry < this.entries; entry++) this.place(entry);
  }
}
