/**
 * Cutting unread values out of JSON lines before parsing (src/formats/json-cut.ts): the value of
 * the key for the line's type goes, and only when it is certainly a key of the top-level object;
 * everything else on the line parses as it would whole. Checked on hand-made lines with the traps
 * (escaped quotes, braces in strings, a nested key of the same name) and on every line of the
 * real Claude Code sessions.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { readSession } from '../src/formats/index.js';
import { KeyCutter } from '../src/formats/json-cut.js';

const cutter = new KeyCutter({ user: 'toolUseResult', progress: 'data' });

function cut(line: string): unknown {
  const text = cutter.cut(Buffer.from(line));
  return text === null ? null : JSON.parse(text);
}

describe('KeyCutter', () => {
  it('cuts the value of the top-level key named for the line type, at the end or in the head', () => {
    expect(cut('{"type":"user","message":{"content":"hi"},"uuid":"a","toolUseResult":{"stdout":"x"}}')).toEqual({
      type: 'user',
      message: { content: 'hi' },
      uuid: 'a',
    });
    expect(cut('{"parentUuid":null,"type":"user","toolUseResult":"Error: no","message":{"content":"hi"},"uuid":"a"}')).toEqual({
      parentUuid: null,
      type: 'user',
      message: { content: 'hi' },
      uuid: 'a',
    });
    expect(cut('{"parentUuid":"p","type":"progress","data":{"type":"hook_progress","n":[1,{"a":"}"}]},"uuid":"u"}\r')).toEqual({
      parentUuid: 'p',
      type: 'progress',
      uuid: 'u',
    });
  });

  it('follows escaped quotes, backslashes and brackets inside strings', () => {
    const value = { stdout: 'say \\"}]{ "x" \\\\', file: { content: 'a\\\\"b' } };
    const line = JSON.stringify({ type: 'user', uuid: 'a', toolUseResult: value, timestamp: 't' });
    expect(cut(line)).toEqual({ type: 'user', uuid: 'a', timestamp: 't' });
  });

  it('leaves a line whole when the key is not at the top level, or the type names no key', () => {
    const nested = JSON.stringify({ type: 'user', message: { content: [{ type: 'x', toolUseResult: { a: 1 } }] }, uuid: 'a' });
    expect(cutter.cut(Buffer.from(nested))).toBeNull();
    // Past the head, the key is searched from the end: a nested one found there cuts nothing.
    const inside = JSON.stringify({ type: 'user', message: 'x'.repeat(3000), toolUseResult: { inner: { a: 1, toolUseResult: 1 } } });
    expect(cutter.cut(Buffer.from(inside))).toBeNull();
    // In the head the first one is the top-level key: its whole value goes.
    expect(cut(JSON.stringify({ type: 'user', uuid: 'a', toolUseResult: { inner: { toolUseResult: 1 } } }))).toEqual({ type: 'user', uuid: 'a' });
    expect(cutter.cut(Buffer.from('{"type":"assistant","toolUseResult":{"a":1},"uuid":"a"}'))).toBeNull();
    expect(cutter.cut(Buffer.from('{"type":"user","toolUseResult": {"a":1},"uuid":"a"}'))).toBeNull();
    expect(cutter.cut(Buffer.from('\ufeff{"type":"user","uuid":"a","toolUseResult":{"a":1}}'))).toBeNull();
  });

  it('gives text that fails to parse when the line is broken outside the value, and null for a line that does not end', () => {
    const broken = cutter.cut(Buffer.from('{"type":"user","uuid":"a" "toolUseResult":{"a":1},"x":1}'));
    expect(broken).toBeNull();
    const afterValue = cutter.cut(Buffer.from('{"type":"user","uuid":"a","toolUseResult":{"a":1},"x":tru}'));
    expect(() => JSON.parse(afterValue ?? '')).toThrow();
    expect(cutter.cut(Buffer.from('{"type":"user","uuid":"a","toolUseResult":{"a":"}'))).toBeNull();
  });

  it('parses every line of the real Claude Code sessions to the whole line minus the cut key', () => {
    const claude = new KeyCutter({ user: 'toolUseResult', progress: 'data', attachment: 'attachment', 'file-history-snapshot': 'snapshot' });
    const dir = 'fixtures/real/claude-code';
    let cuts = 0;
    for (const name of readdirSync(dir).filter((file) => file.endsWith('.jsonl'))) {
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean)) {
        const whole = JSON.parse(line) as Record<string, unknown>;
        const text = claude.cut(Buffer.from(line));
        if (text === null) continue;
        cuts++;
        const key = { user: 'toolUseResult', progress: 'data', attachment: 'attachment', 'file-history-snapshot': 'snapshot' }[String(whole['type'])]!;
        const { [key]: _dropped, ...rest } = whole;
        expect(JSON.parse(text)).toEqual(rest);
      }
    }
    // Of the 242 lines with such a key; the others are parsed whole (e.g. attachment lines that
    // write `type` after the attachment, whose head then shows the attachment's own type).
    expect(cuts).toBe(214);
  });

  it('reports a line broken after a cut value with the whole line\'s error and column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-cut-'));
    try {
      const file = join(dir, 'session.jsonl');
      const first = '{"type":"user","sessionId":"s","uuid":"a","parentUuid":null,"message":{"role":"user","content":"hi"}}';
      const broken = '{"type":"user","sessionId":"s","uuid":"b","parentUuid":"a","toolUseResult":{"stdout":"ok"},"message":"a" x}';
      writeFileSync(file, `${first}\n${broken}\n`);
      const error = await readSession(file, 'claude-code').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InputError);
      // The column in the whole line (in the cut text it would be 74).
      expect((error as InputError).location).toBe(`${file}:2: invalid JSON: Expected ',' or '}' after property value at column 106`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
