/**
 * A read that only measures text (ReadOptions.textLengthsOnly) sizes long strings of Claude Code
 * user lines from their bytes (src/formats/claude-code-lengths.ts, json-bytes.ts
 * jsonStringLength) instead of decoding them: every number must come out as when they are
 * decoded. Checked three ways: the length function against JSON.parse on strings with every
 * kind of escape and UTF-8 sequence; the reader both ways on a generated session with the traps;
 * and `estimate`, `inspect` and `compact --dry-run` on every Claude Code fixture and the
 * generated session, against a copy whose lines start `{ "` (the walk refuses a space, so the
 * copy is read as before: same values, nothing measured).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeasuringCutter } from '../../src/formats/claude-code-lengths.js';
import { MEASURED_MIN_BYTES } from '../../src/formats/json/json-walk.js';
import { readClaudeCode } from '../../src/formats/claude-code.js';
import { jsonStringLength } from '../../src/formats/json/json-bytes.js';
import { KeyCutter } from '../../src/formats/json/json-cut.js';
import { FIXTURES, runCli } from '../helpers/cli.js';
import { readKept } from '../helpers/measured-read.js';

/** JSON.parse's length of a JSON string literal's text, or -1 when it refuses it. */
function parsedLength(text: string): number {
  try {
    return (JSON.parse(`"${text}"`) as string).length;
  } catch {
    return -1;
  }
}

/** The length function on `text` placed at each offset 0–7 of a buffer (the word grid moves). */
function measuredAtEveryOffset(text: string): number[] {
  const body = Buffer.from(text);
  return [0, 1, 2, 3, 4, 5, 6, 7].map((pad) => {
    const bytes = Buffer.concat([Buffer.alloc(pad, 0x78), body, Buffer.from('"')]);
    return jsonStringLength(bytes, pad, pad + body.length);
  });
}

/** A small deterministic generator, so a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

/** Pieces of JSON string text: every escape, lone and paired surrogates, raw 1–4 byte UTF-8, and some JSON refuses. */
const PIECES = ['a', 'xyzw', ' ', 'é', '→', '├──', '😀', '𝄞', '\\n', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r', '\\t', '\\u00e9', '\\u00E9', '\\ud83d\\ude00', '\\ud800', '\\udc00', '\\u0000'];
const REFUSED = ['\t', '\u0001', '\\x', '\\u12g4', '\\U0041', '\\'];

describe('jsonStringLength', () => {
  it('gives JSON.parse’s length for every kind of escape and UTF-8 sequence, wherever the text lies on the word grid', () => {
    const next = random(17);
    for (let run = 0; run < 3300; run++) {
      let text = '';
      // Long texts too: escapes and sequences across many words, and backslashes two to a word.
      const count = Math.floor(next() * (run < 3000 ? 40 : 400));
      for (let index = 0; index < count; index++) text += PIECES[Math.floor(next() * PIECES.length)];
      const want = parsedLength(text);
      expect(want).toBeGreaterThanOrEqual(0);
      expect(measuredAtEveryOffset(text), text).toEqual(Array(8).fill(want));
    }
  });

  it('counts long runs of one sequence, where a lane of the word count fills up (every word the same bytes)', () => {
    // 'é' puts a continuation byte in two lanes of every word, '😀' a four-byte lead in one:
    // thousands of words of them overflow a lane unless the lanes are summed in time.
    for (const piece of ['é', '😀', '→', 'é😀', '\\u00e9é']) {
      for (const times of [255, 256, 257, 1021, 1024, 5000]) {
        const text = piece.repeat(times);
        expect(measuredAtEveryOffset(text), `${piece} x ${times}`).toEqual(Array(8).fill(parsedLength(text)));
      }
    }
  });

  it('refuses what JSON.parse refuses: raw control characters, unknown escapes, a cut-off \\u', () => {
    const next = random(5);
    for (const refused of REFUSED) {
      for (let run = 0; run < 40; run++) {
        const before = PIECES.slice(0, Math.floor(next() * 10)).join('');
        const text = `${before}${refused}${'abcd'.repeat(Math.floor(next() * 4))}`;
        expect(parsedLength(text), text).toBe(-1);
        expect(measuredAtEveryOffset(text), text).toEqual(Array(8).fill(-1));
      }
    }
  });
});

/** A JSON line with some of its strings written by hand (`raw`: a placeholder's JSON text). */
function line(value: unknown, raw: Record<string, string> = {}): string {
  let text = JSON.stringify(value);
  for (const [name, literal] of Object.entries(raw)) text = text.replace(JSON.stringify(name), literal);
  return text;
}

/** JSON string text of `bytes` bytes or so, with every escape and sequence in it. */
function mixed(units: number): string {
  const parts = ['line one\\n', '\\ttab \\"q\\" \\\\ \\/ ', 'caf\\u00e9 \\ud83d\\ude00 lone \\ud800 \\udc00 ', 'é → ├── 😀 𝄞 ', '\\b\\f\\r'];
  let text = '';
  for (let index = 0; text.length < units; index++) text += parts[index % parts.length];
  return text;
}

const SESSION = 'a1b2c3d4-0000-4000-8000-00000000000a';
const base = { cwd: '/home/dev/app', sessionId: SESSION, version: '2.0.50', gitBranch: 'main', userType: 'external', isSidechain: false };

/** A session with the traps: long and threshold-sized strings, escapes, nested keys of the same names, a compaction, CRLF. */
function generatedSession(): string {
  const lines: string[] = [];
  let parent: string | null = null;
  let count = 0;
  const add = (value: Record<string, unknown>, raw: Record<string, string> = {}, crlf = false) => {
    const uuid = `g${++count}`;
    lines.push(line({ ...base, parentUuid: parent, uuid, timestamp: `2026-01-05T10:${String(count).padStart(2, '0')}:00.000Z`, ...value }, raw) + (crlf ? '\r' : ''));
    parent = uuid;
  };
  const usage = { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 50 };
  const assistant = (id: string, content: unknown[], raw: Record<string, string> = {}, stop: string | null = 'tool_use') =>
    add({ type: 'assistant', requestId: `req_${id}`, message: { id: `msg_${id}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content, stop_reason: stop, usage } }, raw);
  const result = (id: string, content: unknown, raw: Record<string, string> = {}, crlf = false, extra: Record<string, unknown> = {}) =>
    add({ type: 'user', message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content, is_error: false, ...extra }] }, toolUseResult: { stdout: 'dup', content: 'x'.repeat(400) } }, raw, crlf);

  add({ type: 'user', message: { role: 'user', content: '@PROMPT' } }, { '@PROMPT': `"${mixed(900)}"` });
  assistant('01', [{ type: 'thinking', thinking: '@THINK', signature: 'S'.repeat(600) }], { '@THINK': `"${mixed(700)}"` }, null);
  // A tool call whose arguments hold keys named like measured ones: never measured.
  assistant('01', [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: { file_path: 'src/a.ts', content: 'y'.repeat(800), text: 'z'.repeat(700), nested: { type: 'text', text: '@NESTED' } } }], { '@NESTED': `"${mixed(500)}"` });
  result('toolu_1', '@OUT1', { '@OUT1': `"${mixed(3000)}"` }, true);
  // Strings right at the threshold: the literal (quotes included) one under, at and over it.
  for (const delta of [-1, 0, 1]) {
    const id = `toolu_t${delta + 1}`;
    assistant(`t${delta + 1}`, [{ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } }]);
    result(id, 'é'.repeat(0) + 'w'.repeat(MEASURED_MIN_BYTES - 2 + delta));
  }
  assistant('02', [{ type: 'tool_use', id: 'toolu_2', name: 'mcp__docs__fetch', input: { url: 'https://example.com' } }]);
  // A result as a list of parts: text parts measured, the image left alone, a part's own "content" untouched.
  result(
    'toolu_2',
    [{ type: 'text', text: '@PART1' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(900) } }, { type: 'text', text: '@PART2', content: 'q'.repeat(300) }],
    { '@PART1': `"${mixed(1200)}"`, '@PART2': `"${mixed(260)}"` },
  );
  assistant('03', [{ type: 'tool_use', id: 'toolu_3', name: 'Bash', input: { command: 'false' } }]);
  result('toolu_3', `Error: ${'e'.repeat(500)}`, {}, false, { is_error: true });
  assistant('04', [{ type: 'text', text: `done ${'t'.repeat(600)}` }], {}, 'end_turn');
  // A text block and a prompt with text in a user line.
  add({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: '@TEXT' }, { type: 'text', text: 'short' }] } }, { '@TEXT': `"${mixed(2000)}"` }, true);
  assistant('05', [{ type: 'text', text: 'ok' }], {}, 'end_turn');
  // A compaction Claude Code recorded: the summary's text is read, so never measured.
  add({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 5000 } });
  add({ type: 'user', isCompactSummary: true, message: { role: 'user', content: '@SUMMARY' } }, { '@SUMMARY': `"${mixed(1500)}"` });
  assistant('06', [{ type: 'text', text: 'continuing' }], {}, 'end_turn');
  add({ type: 'user', message: { role: 'user', content: '@LAST' } }, { '@LAST': `"${mixed(MEASURED_MIN_BYTES)}"` });
  return `${lines.join('\n')}\n`;
}

/** Every line starting `{ "`: the same values, and a line the measuring walk refuses. */
function unmeasurable(text: string): string {
  return text.replace(/^\{"/gm, '{ "');
}

function copyTree(from: string, to: string, transform: (text: string) => string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    if (statSync(source).isDirectory()) copyTree(source, join(to, name), transform);
    else writeFileSync(join(to, name), name.endsWith('.jsonl') ? transform(readFileSync(source, 'utf8')) : readFileSync(source));
  }
}

describe('the Claude Code reader, measuring or decoding', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'compactor-lengths-'));
    writeFileSync(join(dir, `${SESSION}.jsonl`), generatedSession());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const read = (path: string, textLengthsOnly: boolean) => readKept((file, options) => readClaudeCode(file, options), path, textLengthsOnly);

  it('gives the same messages, lengths and estimates, and measures the long user strings only', async () => {
    const path = join(dir, `${SESSION}.jsonl`);
    const decoded = await read(path, false);
    const measured = await read(path, true);
    expect(measured.lengths).toEqual(decoded.lengths);
    expect(measured.tokens).toEqual(decoded.tokens);
    expect(JSON.stringify(measured.session)).toBe(JSON.stringify(decoded.session));
    // The stand-ins: long tool outputs and prompts are spaces; tool calls, assistant text, short strings and the summary are real.
    const standIns = measured.seen.flatMap((message) => message.content.flatMap((block) => (block.type === 'tool_result' ? [block.output] : block.type === 'text' ? [block.text] : []))).filter((text) => text.length > 0 && text.trim() === '');
    expect(standIns.length).toBeGreaterThanOrEqual(6);
    const call = measured.seen.flatMap((message) => message.content).find((block) => block.type === 'tool_request' && block.name === 'Write');
    expect(JSON.stringify(call)).toContain('é → ├──');
    expect(measured.session.recordedCompactions[0]!.summary).toContain('caf');
    expect(measured.seen.some((message) => message.content.some((block) => block.type === 'tool_result' && block.output === 'w'.repeat(MEASURED_MIN_BYTES - 3)))).toBe(true);
    expect(measured.seen.some((message) => message.content.some((block) => block.type === 'tool_result' && block.output === ' '.repeat(MEASURED_MIN_BYTES - 2)))).toBe(true);
  });

  it('leaves a line it is not certain of to the usual cut, and refuses a string JSON.parse refuses', () => {
    const cutter = new MeasuringCutter(new KeyCutter({ user: 'toolUseResult' }));
    const long = 'x'.repeat(MEASURED_MIN_BYTES);
    const user = (content: string) => `{"type":"user","uuid":"u","message":{"role":"user","content":${content}}}`;
    expect(cutter.cut(Buffer.from(user(`"${long}"`)), true)).toMatchObject({ text: user('""') });
    // Not valid UTF-8, a raw tab, a key written with an escape, a key twice, a space: parsed as it is.
    expect(cutter.cut(Buffer.from(user(`"${long}"`)), false)).toBeNull();
    expect(cutter.cut(Buffer.from(user(`"${long}\t"`)), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"type":"user","uuid":"u","message":{"role":"user","cont\\u0065nt":"${long}"}}`), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"type":"user","message":{"content":"${long}"},"message":{"content":"x"}}`), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"type":"user","uuid":"u","message":{"role":"user","content": "${long}"}}`), true)).toBeNull();
    // An assistant line is parsed whole, its thinking's signature too: walking it to cut the signature cost more than parsing it.
    const assistant = `{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"${long}","signature":"${long}"},{"type":"text","text":"${long}"}]}}`;
    expect(cutter.cut(Buffer.from(assistant), true)).toBeNull();
    expect(cutter.cut(Buffer.from(`{"parentUuid":null,"message":{"type":"message","content":[{"type":"thinking","thinking":"${long}","signature":"${long}"}]},"type":"assistant"}`), true)).toBeNull();
  });
});

describe('estimate, inspect and compact --dry-run, measuring or decoding', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'compactor-lengths-cli-'));
    const sources = join(dir, 'sources');
    mkdirSync(join(sources, 'formats'), { recursive: true });
    for (const name of readdirSync(join(FIXTURES, 'formats')).filter((name) => name.startsWith('claude-code'))) cpSync(join(FIXTURES, 'formats', name), join(sources, 'formats', name), { recursive: true });
    cpSync(join(FIXTURES, 'real', 'claude-code'), join(sources, 'real'), { recursive: true });
    mkdirSync(join(sources, 'generated'));
    writeFileSync(join(sources, 'generated', `${SESSION}.jsonl`), generatedSession());
    copyTree(sources, join(dir, 'measured'), (text) => text);
    copyTree(sources, join(dir, 'decoded'), unmeasurable);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const COMMANDS: Record<string, readonly string[]> = {
    estimate: ['estimate', '--json'],
    inspect: ['inspect', '--json'],
    'compact --dry-run': ['compact', '--dry-run', '--json', '--strategy', 'truncate', '--force', '--keep-recent', '5000'],
  };
  it.each(Object.entries(COMMANDS))('%s gives the same output', async (_name, args) => {
    const measured = await runCli([...args, '--jobs', '1', '.'], { cwd: join(dir, 'measured') });
    const decoded = await runCli([...args, '--jobs', '1', '.'], { cwd: join(dir, 'decoded') });
    expect(measured.stdout.length).toBeGreaterThan(1000);
    expect(measured).toEqual(decoded);
  });
});
