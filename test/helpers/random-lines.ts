/**
 * Random near-valid and invalid JSONL for the scanner's differential tests (test/scan/): a JSON
 * writer that spaces, escapes and repeats keys at random, texts with characters of one to four
 * bytes at any offset and huge ones, values of the wrong kind, and damage to a line's bytes (cut,
 * bytes that are no UTF-8, NULs, CRs, blank lines, a stray byte), a BOM now and then. A format's
 * lines are its test's; this file only writes them.
 */
import fc from 'fast-check';
// @ts-expect-error: a plain JavaScript script of the bench, with no types
import { createRandom } from '../../scripts/bench/corpus.js';

/** Stands for a `__proto__` key, which JSON.parse makes an own key (an object literal cannot). */
export const PROTO_KEY = 'proto-key';

/** JSON text of `value` as a writer might spell it: random spaces, escapes for any character, keys written twice. */
export function writeJson(value: unknown, choice: () => number): string {
  const space = () => (choice() < 0.01 ? [' ', '\t', '  ', '\r'][Math.floor(choice() * 4)]! : '');
  /** How often a character is written as an escape it need not be: rarely in keys (a line with one is the reference's to read). */
  let escapes = 0.005;
  const string = (text: string) => {
    let out = '"';
    for (const char of text) {
      const code = char.codePointAt(0)!;
      const escape = choice() < escapes;
      if (char === '"' || char === '\\') out += `\\${char}`;
      else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
      else if (code >= 0xd800 && code <= 0xdfff) out += `\\u${code.toString(16)}`;
      else if (escape && code < 0x10000) out += `\\u${code.toString(16).padStart(4, '0').toUpperCase()}`;
      else if (escape) out += JSON.stringify(char).slice(1, -1).replace(/[\ud800-\udfff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16)}`);
      else if (choice() < 0.01 && char === '/') out += '\\/';
      else out += char;
    }
    return `${out}"`;
  };
  const write = (item: unknown): string => {
    if (item === null || typeof item !== 'object') return typeof item === 'string' ? string(item) : (JSON.stringify(item) ?? 'null');
    if (Array.isArray(item)) return `[${space()}${item.map((element) => write(element)).join(`${space()},${space()}`)}${space()}]`;
    const members = Object.entries(item).map(([key, member]) => {
      escapes = 0.0003;
      const name = string(key === PROTO_KEY ? '__proto__' : key);
      escapes = 0.005;
      return `${name}${space()}:${space()}${write(member)}`;
    });
    // A key written twice, with another member's value: JSON.parse keeps the last.
    const entries = Object.entries(item);
    if (entries.length > 0 && choice() < 0.04) {
      const [key] = entries[Math.floor(choice() * entries.length)]!;
      const [, other] = entries[Math.floor(choice() * entries.length)]!;
      members.push(`${string(key === PROTO_KEY ? '__proto__' : key)}:${write(other)}`);
    }
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
  };
  return write(value);
}

const TEXTS = ['', 'a', 'ok', 'abc', 'done.', 'é', '→ ├──', '😀 𝄞', 'tab\there', 'nl\nline', 'q"uote', 'back\\slash', '\ud800 lone', 'ctl\u0001', '[trimmed]', 'x'.repeat(40), 'é→😀'.repeat(30)];

/** A text, sometimes long, with characters of one to four bytes at any offset. */
export const text = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TEXTS) },
  { weight: 3, arbitrary: fc.tuple(fc.nat(33), fc.constantFrom('é', '→', '😀', '\\', '"', '\n', 'a'), fc.nat(40)).map(([before, char, after]) => `${'p'.repeat(before)}${char}${'s'.repeat(after)}`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('ab', 'é→', '😀x'), fc.integer({ min: 100, max: 3000 })).map(([unit, times]) => unit.repeat(times)) },
);

/** A value where a reader expects another kind (its schema's error, or a warning, is the reference's). */
export const odd = fc.constantFrom<unknown>(1, 1.5, -2, 1e3, 12345678901234567890, true, false, 'str', '', [], {}, { [PROTO_KEY]: 1 }, [1, 'a'], null);

/** Mostly `valid`, now and then a value of the wrong kind. */
export const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 24, arbitrary: valid }, { weight: 1, arbitrary: odd });

/** Uniform numbers in [0, 1) from a seed: the writer's choices, the same for the same seed. */
export const seeded = (seed: number): (() => number) => (createRandom(seed) as { next: () => number }).next;

/** What can happen to a line's bytes: `intact` lines left whole for each of the six kinds of damage. */
const damage = (intact: number) =>
  fc.oneof(
    { weight: intact, arbitrary: fc.constant('none' as const) },
    { weight: 1, arbitrary: fc.constant('cut' as const) },
    { weight: 1, arbitrary: fc.constant('bad-utf8' as const) },
    { weight: 1, arbitrary: fc.constant('nul' as const) },
    { weight: 1, arbitrary: fc.constant('crlf' as const) },
    { weight: 1, arbitrary: fc.constant('blank' as const) },
    { weight: 1, arbitrary: fc.constant('byte' as const) },
  );

function damaged(line: string, kind: string, at: number): Buffer {
  const bytes = Buffer.from(line);
  const place = bytes.length === 0 ? 0 : at % bytes.length;
  switch (kind) {
    case 'cut':
      return bytes.subarray(0, place);
    case 'bad-utf8':
      return Buffer.concat([bytes.subarray(0, place), Buffer.from([0xc3, 0x28]), bytes.subarray(place)]);
    case 'nul':
      return Buffer.concat([bytes.subarray(0, place), Buffer.from([0]), bytes.subarray(place)]);
    case 'crlf':
      return Buffer.concat([bytes, Buffer.from('\r')]);
    case 'blank':
      return Buffer.from(['', '   ', '\t', '\u00a0', '\f'][at % 5]!);
    case 'byte': {
      const copy = Buffer.from(bytes);
      if (copy.length > 0) copy[place] = [0x7b, 0x7d, 0x22, 0x5c, 0x2c, 0x3a, 0x20, 0x80][at % 8]!;
      return copy;
    }
  }
  return bytes;
}

/**
 * A file of 1 to 40 lines, the line at index i drawn from `lineValue(i)`, written by writeJson,
 * some damaged (one in `intact` + 6 or so: most damage ends a read); a BOM now and then; the last
 * newline now and then left out.
 */
export function randomFile(lineValue: (index: number) => fc.Arbitrary<unknown>, { intact = 60 }: { intact?: number } = {}): fc.Arbitrary<Buffer> {
  return fc
    .integer({ min: 1, max: 40 })
    .chain((count) => fc.tuple(fc.tuple(...Array.from({ length: count }, (_, index) => fc.tuple(lineValue(index), damage(intact), fc.nat(), fc.integer()))), fc.boolean(), fc.boolean()))
    .map(([lines, bom, lastNewline]) => {
      const parts = lines.map(([value, kind, at, seed]) => damaged(writeJson(value, seeded(seed)), kind, at));
      const body = Buffer.concat(parts.flatMap((part, index) => (index < parts.length - 1 || lastNewline ? [part, Buffer.from('\n')] : [part])));
      return bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
    });
}
