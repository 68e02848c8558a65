/**
 * A canonical read that only measures text (ReadOptions.textLengthsOnly) sizes a line's long
 * texts from their bytes (src/formats/canonical-lengths.ts) instead of decoding them: every number
 * must come out as when they are decoded. Checked three ways: the cutter against JSON.parse on
 * random lines with the traps (escapes, other key orders, spaces, keys twice or escaped, texts
 * JSON.parse refuses); the reader both ways on a generated session; and `estimate`, `inspect`,
 * `compact --dry-run` and `replay` on the canonical fixtures and that session, against a copy
 * whose lines start `{ "` (the walk refuses a space: the same values, nothing measured).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalReader } from '../../src/formats/canonical.js';
import { CanonicalMeasuringCutter } from '../../src/formats/canonical-lengths.js';
import { MEASURED_MIN_BYTES } from '../../src/formats/json/json-walk.js';
import { FIXTURES, runCli } from '../helpers/cli.js';
import { readKept } from '../helpers/measured-read.js';

/** A small deterministic generator, so a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

/** Pieces of JSON string text: every escape, surrogates, raw 1–4 byte UTF-8. */
const PIECES = ['a', 'xyzw ', 'é', '→', '├──', '😀', '\\n', '\\"', '\\\\', '\\/', '\\t', '\\u00e9', '\\ud83d\\ude00', '\\ud800', 'key', '"type":"text"', ',', '}', ']'];
/** Text JSON.parse refuses inside a string. */
const REFUSED = ['\t', '\u0001', '\\x', '\\u12g4'];

/** JSON string text (without quotes) of about `units` pieces. */
function stringText(next: () => number, units: number): string {
  let text = '';
  for (let index = 0; index < units; index++) {
    const piece = PIECES[Math.floor(next() * PIECES.length)]!;
    // Structural characters only escaped or inside the text: a raw `"` would end it.
    text += piece.includes('"') && !piece.startsWith('\\') ? piece.replaceAll('"', '\\"') : piece;
  }
  return text;
}

/** A string literal, long or short, now and then one JSON.parse refuses. */
function literal(next: () => number): string {
  const long = next() < 0.6;
  let text = stringText(next, long ? Math.floor(MEASURED_MIN_BYTES / 3 + next() * 400) : Math.floor(next() * 8));
  if (next() < 0.03) text += REFUSED[Math.floor(next() * REFUSED.length)]!;
  return `"${text}"`;
}

/** A block's members as [key, raw value] pairs, in some order, now and then with a trap. */
function block(next: () => number): string {
  const kind = ['text', 'thinking', 'tool_result', 'tool_request', 'image'][Math.floor(next() * 5)]!;
  const members: [string, string][] = [['"type"', `"${kind}"`]];
  if (kind === 'text' || kind === 'thinking') members.push(['"text"', literal(next)]);
  if (kind === 'tool_result') members.push(['"tool_request_id"', '"t1"'], ['"output"', literal(next)], ['"is_error"', next() < 0.5 ? 'false' : 'true']);
  if (kind === 'tool_request') members.push(['"id"', '"t1"'], ['"name"', '"bash"'], ['"arguments"', `{"command":"ls","text":${literal(next)},"nested":{"type":"text","text":${literal(next)}}}`]);
  if (kind === 'image') members.push(['"text"', literal(next)]);
  const trap = next();
  if (trap < 0.05) members.push([members[1]?.[0] ?? '"text"', literal(next)]);
  else if (trap < 0.08) members.push(['"type"', '"text"']);
  else if (trap < 0.11) members.reverse();
  else if (trap < 0.13 && members[1]) members[1] = [members[1][0].replace('t', '\\u0074'), members[1][1]];
  return `{${members.map(([key, value]) => `${key}:${value}`).join(',')}}`;
}

/** A canonical line with its keys in some order, now and then with a trap. */
function randomLine(next: () => number): string {
  const content = next() < 0.2 ? literal(next) : `[${Array.from({ length: Math.floor(next() * 4) }, () => (next() < 0.05 ? '42' : block(next))).join(',')}]`;
  const members: [string, string][] = [
    ['"id"', '"m1"'],
    ['"role"', '"user"'],
    ['"content"', content],
    ['"metadata"', '{"input_tokens":12,"output_tokens":3,"model":"gpt-5"}'],
    ['"timestamp"', '"2026-01-05T10:00:00.000Z"'],
  ];
  const trap = next();
  if (trap < 0.05) members.push(['"content"', '"again"']);
  else if (trap < 0.1) members.reverse();
  else if (trap < 0.12) members[2] = ['"cont\\u0065nt"', content];
  let text = `{${members.map(([key, value]) => `${key}:${value}`).join(',')}}`;
  const spaced = next();
  if (spaced < 0.03) text = text.replace('":', '": ');
  else if (spaced < 0.05) text += '\r';
  else if (spaced < 0.07) text = text.replace('"content":', '"content" :');
  return text;
}

/** The value with every text the cutter may measure replaced by its length (and non-text left as it is). */
function lengthsOf(value: unknown): unknown {
  const line = structuredClone(value) as { content?: unknown };
  if (typeof line.content === 'string') line.content = line.content.length;
  if (Array.isArray(line.content)) {
    for (const item of line.content as Record<string, unknown>[]) {
      if (item === null || typeof item !== 'object') continue;
      const key = item['type'] === 'tool_result' ? 'output' : item['type'] === 'text' || item['type'] === 'thinking' ? 'text' : null;
      if (key !== null && typeof item[key] === 'string') item[key] = (item[key] as string).length;
    }
  }
  return line;
}

/** The texts the cutter measured: stand-ins, spaces only. */
function standIns(value: unknown, original: unknown): string[] {
  const found: string[] = [];
  const visit = (a: unknown, b: unknown) => {
    if (typeof a === 'string' && a !== b) found.push(a);
    else if (a !== null && typeof a === 'object') for (const key of Object.keys(a)) visit((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]);
  };
  visit(value, original);
  return found;
}

describe('the canonical measuring cutter', () => {
  it('gives JSON.parse’s value on random lines, each measured text a stand-in of its length', () => {
    const cutter = new CanonicalMeasuringCutter();
    const next = random(29);
    let measuredLines = 0;
    let refusedLines = 0;
    for (let run = 0; run < 4000; run++) {
      const text = randomLine(next);
      const bytes = Buffer.from(text);
      const cut = cutter.cut(bytes, true);
      let expected: unknown;
      try {
        expected = JSON.parse(text);
      } catch {
        // A line JSON.parse refuses is never made parseable by a cut.
        refusedLines++;
        if (cut !== null) expect(() => JSON.parse(cut.text)).toThrow();
        continue;
      }
      if (cut === null) continue;
      measuredLines++;
      const value = JSON.parse(cut.text) as unknown;
      cut.restore(value);
      expect(lengthsOf(value)).toEqual(lengthsOf(expected));
      const replaced = standIns(value, expected);
      expect(replaced.length).toBeGreaterThan(0);
      for (const standIn of replaced) expect(standIn.trim()).toBe('');
    }
    // Enough of each for the check to mean something.
    expect(measuredLines).toBeGreaterThan(1000);
    expect(refusedLines).toBeGreaterThan(20);
  });

  it('leaves a line it is not certain of to be parsed whole', () => {
    const cutter = new CanonicalMeasuringCutter();
    const long = 'x'.repeat(MEASURED_MIN_BYTES);
    const line = (content: string) => `{"id":"m1","role":"user","content":${content}}`;
    expect(cutter.cut(Buffer.from(line(`"${long}"`)), true)).toMatchObject({ text: line('""') });
    expect(cutter.cut(Buffer.from(line(`[{"type":"tool_result","tool_request_id":"t","output":"${long}"}]`)), true)).toMatchObject({ text: line('[{"type":"tool_result","tool_request_id":"t","output":""}]') });
    // Not valid UTF-8, a raw tab, a key with an escape, content twice, the type not first, a space: parsed whole.
    expect(cutter.cut(Buffer.from(line(`"${long}"`)), false)).toBeNull();
    expect(cutter.cut(Buffer.from(line(`"${long}\t"`)), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"id":"m1","role":"user","cont\\u0065nt":"${long}"}`), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"id":"m1","content":"${long}","content":"x"}`), true)).toBeNull();
    expect(cutter.cut(Buffer.from(line(`[{"text":"${long}","type":"text"}]`)), true)).toBeNull();
    expect(cutter.cut(Buffer.from(line(`[{"type":"text","text":"${long}","text":"x"}]`)), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"id":"m1","role":"user","content": "${long}"}`), true)).toBeNull();
    // Short texts and a tool call's arguments are never measured.
    expect(cutter.cut(Buffer.from(line('"short"')), true)).toBeNull();
    expect(cutter.cut(Buffer.from(line(`[{"type":"tool_request","id":"t","name":"w","arguments":{"text":"${long}"}}]`)), true)).toBeNull();
  });
});

/** A canonical session with long texts, escapes, texts at the threshold, a tool call with long arguments. */
function generatedSession(): string {
  const next = random(7);
  const lines: string[] = [];
  const push = (role: string, content: string, usage = false) =>
    lines.push(`{"id":"m${lines.length + 1}","role":"${role}","content":${content}${usage ? ',"metadata":{"input_tokens":1200,"output_tokens":40}' : ''}}`);
  for (let turn = 0; turn < 12; turn++) {
    push('user', literal(next));
    push('assistant', `[{"type":"thinking","text":${literal(next)}},{"type":"tool_request","id":"t${turn}","name":"write","arguments":{"path":"src/a${turn}.ts","content":"${'y'.repeat(600)}"}}]`, true);
    push('user', `[{"type":"tool_result","tool_request_id":"t${turn}","output":"${stringText(next, 200 + turn * 40)}","is_error":${turn % 5 === 0}}]`);
    push('assistant', `[{"type":"text","text":"${'w'.repeat(MEASURED_MIN_BYTES - 3 + (turn % 3))}"}]`, true);
  }
  return `${lines.join('\n')}\n`;
}

describe('the canonical reader, measuring or decoding', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'compactor-canonical-lengths-'));
    writeFileSync(join(dir, 's.jsonl'), generatedSession());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const read = (path: string, textLengthsOnly: boolean) => readKept((file, options) => canonicalReader.read(file, options), path, textLengthsOnly);

  it('gives the same messages, lengths and estimates, with the long texts measured', async () => {
    const path = join(dir, 's.jsonl');
    const decoded = await read(path, false);
    const measured = await read(path, true);
    expect(measured.lengths).toEqual(decoded.lengths);
    expect(measured.tokens).toEqual(decoded.tokens);
    expect(JSON.stringify(measured.session)).toBe(JSON.stringify(decoded.session));
    const texts = measured.seen.flatMap((message) => message.content.flatMap((block) => (block.type === 'tool_result' ? [block.output] : block.type === 'text' || block.type === 'thinking' ? [block.text] : [])));
    expect(texts.filter((text) => text.length > 0 && text.trim() === '').length).toBeGreaterThanOrEqual(24);
    // A tool call's arguments are read, never measured.
    expect(JSON.stringify(measured.seen[1]!.content[1])).toContain('y'.repeat(600));
  });
});

describe('estimate, inspect, compact --dry-run and replay on canonical sessions, measuring or decoding', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'compactor-canonical-lengths-cli-'));
    const sessions: Record<string, string> = {
      'bug.jsonl': readFileSync(join(FIXTURES, 'bug.jsonl'), 'utf8'),
      'growth.jsonl': readFileSync(join(FIXTURES, 'audit', 'growth.jsonl'), 'utf8'),
      'prune.jsonl': readFileSync(join(FIXTURES, 'audit', 'prune.jsonl'), 'utf8'),
      'generated.jsonl': generatedSession(),
    };
    for (const [copy, transform] of [['measured', (text: string) => text], ['decoded', (text: string) => text.replace(/^\{"/gm, '{ "')]] as const) {
      mkdirSync(join(dir, copy));
      for (const [name, text] of Object.entries(sessions)) writeFileSync(join(dir, copy, name), transform(text));
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const COMMANDS: Record<string, readonly string[]> = {
    estimate: ['estimate', '--json'],
    inspect: ['inspect', '--json'],
    'compact --dry-run': ['compact', '--dry-run', '--json', '--strategy', 'truncate', '--force', '--keep-recent', '2000'],
    replay: ['replay', '--json', '--policy', 'custom,pi,opencode'],
  };
  it.each(Object.entries(COMMANDS))('%s gives the same output', async (_name, args) => {
    const measured = await runCli([...args, '--jobs', '1', '.'], { cwd: join(dir, 'measured') });
    const decoded = await runCli([...args, '--jobs', '1', '.'], { cwd: join(dir, 'decoded') });
    expect(measured.stdout.length).toBeGreaterThan(500);
    for (const name of ['bug', 'growth', 'prune', 'generated']) expect(measured.stdout).toContain(`${name}.jsonl`);
    expect(measured).toEqual(decoded);
  });
});
