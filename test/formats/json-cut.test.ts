/**
 * Cutting unread values out of JSON lines before parsing (src/formats/json/json-cut.ts): the value of
 * the key for the line's type goes, and only when it is certainly a key of the top-level object;
 * everything else on the line parses as it would whole. Checked on hand-made lines with the traps
 * (escaped quotes, braces in strings, a nested key of the same name) and on every line of the
 * real Claude Code sessions.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { readSession } from '../../src/formats/index.js';
import { KeyCutter } from '../../src/formats/json/json-cut.js';

const cutter = new KeyCutter({ user: 'toolUseResult', progress: 'data' });

/** What every hand-made Claude Code line below shares. */
const BASE = { sessionId: 's', isSidechain: false, userType: 'external' };

/** A Claude Code assistant line `a1` (one text block, usage 10 in and 5 out) hanging off `parentUuid`. */
function assistantLine(parentUuid: string, text: string): Record<string, unknown> {
  return {
    ...BASE,
    uuid: 'a1',
    parentUuid,
    requestId: 'r1',
    message: { id: 'm1', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } },
    type: 'assistant',
  };
}

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

describe('KeyCutter.skip: lines the reader reads nothing of, proven from their bytes', () => {
  const skipper = new KeyCutter({}, { types: ['queue-operation', 'summary', 'progress', 'file-history-snapshot'], unlessKeys: ['uuid', 'parentUuid', 'logicalParentUuid'] });
  const skip = (line: string) => skipper.skip(Buffer.from(line), true);

  it('skips a line of a skipped type, its type key first or not, with escaped quotes in its values', () => {
    expect(skip('{"type":"queue-operation","operation":"enqueue","content":"say \\"hi\\" {]"}')).toEqual({ type: 'queue-operation' });
    expect(skip('{"operation":"enqueue","timestamp":"t","type":"queue-operation","content":"x"}')).toEqual({ type: 'queue-operation' });
    expect(skip('{"content":"a \\"type\\":\\"user\\" b","type":"summary"}\r')).toEqual({ type: 'summary' });
    expect(skip('{"type":"file-history-snapshot","messageId":"m","snapshot":{"messageId":"m","trackedFileBackups":{}}}')).toEqual({ type: 'file-history-snapshot' });
  });

  it('reads a line whose "type":"progress" is not its own top-level type', () => {
    // Inside a message's text (escaped), and as a nested block's type written before the line's own.
    expect(skip('{"type":"user","message":{"content":"{\\"type\\":\\"progress\\"}"}}')).toBeNull();
    expect(skip('{"message":{"content":[{"type":"progress","text":"x"}]},"type":"user"}')).toBeNull();
    expect(skip('{"message":{"content":[{"type":"progress"}]}}')).toBeNull();
    expect(skip('{"data":{"type":"summary"},"x":1}')).toBeNull();
    // A second top-level type (JSON.parse keeps the last one), or a second "type" anywhere.
    expect(skip('{"type":"summary","x":1,"type":"user"}')).toBeNull();
    expect(skip('{"type":"progress","data":{"type":"hook_progress"}}')).toBeNull();
  });

  it('reads a line that links into the chain, or whose bytes do not prove what it is', () => {
    expect(skip('{"type":"progress","uuid":"p1","data":{}}')).toBeNull();
    expect(skip('{"type":"summary","parentUuid":"a"}')).toBeNull();
    expect(skip('{"type":"summary","logicalParentUuid":"a"}')).toBeNull();
    expect(skip('{"type": "summary"}')).toBeNull();
    expect(skip('{"type":"summ\\u0061ry"}')).toBeNull();
    expect(skip('{"type":"summary","summary":"cut off')).toBeNull();
    expect(skip('\ufeff{"type":"summary"}')).toBeNull();
    expect(skip('{"type":"assistant","message":{}}')).toBeNull();
    expect(new KeyCutter({}).skip(Buffer.from('{"type":"summary"}'), true)).toBeNull();
  });

  it('reads a Claude Code session the same with its skippable lines as without them, tricky lines included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-skip-'));
    try {
      const user = { ...BASE, type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'print {"type":"progress"} and "type":"summary"' } };
      const assistant = assistantLine('q1', 'ok "type":"queue-operation"');
      // A queue operation with a uuid is a link of the chain (the assistant line hangs off it): read.
      const linking = { type: 'queue-operation', operation: 'enqueue', uuid: 'q1', parentUuid: 'u1', content: 'x' };
      const skippable = [
        '{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{}},"isSnapshotUpdate":false}',
        '{"operation":"dequeue","type":"queue-operation","content":"say \\"hi\\""}',
        '{"type":"summary","summary":"An \\"old\\" summary","leafUuid":"a1"}',
      ];
      const lines = [skippable[0], JSON.stringify(user), skippable[1], JSON.stringify(linking), JSON.stringify(assistant), skippable[2]];
      const withSkipped = join(dir, 'with.jsonl');
      const without = join(dir, 'without.jsonl');
      writeFileSync(withSkipped, `${lines.join('\n')}\n`);
      // The same lines but the skippable ones as blank lines, so line numbers stay.
      writeFileSync(without, `${lines.map((line) => (skippable.includes(line!) ? '' : line)).join('\n')}\n`);
      const read = await readSession(withSkipped, 'claude-code');
      const reference = await readSession(without, 'claude-code');
      expect(read.messages).toEqual(reference.messages);
      expect(read.offContext).toEqual(reference.offContext);
      expect(read.warnings).toEqual(reference.warnings.map((warning) => ({ ...warning, file: withSkipped })));
      expect(read.messages.map((message) => message.id)).toEqual(['u1', 'a1']);
      expect(read.messages[1]!.usage).toMatchObject({ input: 10, output: 5 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves a syntax error on a skipped line unreported (as inside a cut value); one on a read line still fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-skip-'));
    try {
      const first = '{"type":"user","sessionId":"s","uuid":"a","parentUuid":null,"message":{"role":"user","content":"hi"}}';
      const file = join(dir, 'session.jsonl');
      writeFileSync(file, `${first}\n{"type":"queue-operation","content":"x",}\n`);
      expect((await readSession(file, 'claude-code')).messages).toHaveLength(1);
      writeFileSync(file, `${first}\n{"type":"queue-operation","uuid":"q","content":"x",}\n`);
      await expect(readSession(file, 'claude-code')).rejects.toBeInstanceOf(InputError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('KeyCutter.links: link lines read from their bytes, as JSON.parse would give their type and links', () => {
  const cutter = new KeyCutter({}, undefined, { types: ['progress', 'attachment'], keys: ['uuid', 'parentUuid', 'logicalParentUuid', 'isSidechain'] });
  const links = (line: string, utf8 = true) => cutter.skip(Buffer.from(line), utf8);
  /** What a reader reads of the parsed line: its type and the link keys it has. */
  const parsedLinks = (line: string) => {
    const value = JSON.parse(line) as Record<string, unknown>;
    return Object.fromEntries(['type', 'uuid', 'parentUuid', 'logicalParentUuid', 'isSidechain'].filter((key) => key in value).map((key) => [key, value[key]]));
  };

  it('takes the type and the link keys of the top-level object, whatever the other values hold', () => {
    const lines = [
      '{"parentUuid":"a","isSidechain":false,"type":"progress","data":{"type":"hook_progress","uuid":"nested","parentUuid":"x"},"toolUseID":"t","uuid":"b","timestamp":"2025"}',
      '{"parentUuid":null,"isSidechain":true,"type":"attachment","attachment":{"content":"say \\"}\\" [{"},"uuid":"c"}\r',
      '{"type":"progress","uuid":"u","n":-1.5e3,"ok":true,"none":null,"list":[1,"]",{"a":[]}],"empty":{}}',
      // A key written twice: JSON.parse keeps the last, and so does this.
      '{"type":"progress","uuid":"first","isSidechain":true,"uuid":"second","isSidechain":false}',
      // A link that is no string (the reader warns of it) but a boolean or null.
      '{"type":"progress","uuid":true,"parentUuid":null,"logicalParentUuid":false}',
      '{"type":"progress","uuid":"é → ├──"}',
    ];
    for (const line of lines) expect(links(line)).toEqual(parsedLinks(line));
  });

  it('leaves to JSON.parse a line it cannot follow, a link it cannot take, another top-level type', () => {
    const parsed = [
      '{"type":"progress","uuid":"a\\u0062"}',
      '{"type":"progress","uuid":1}',
      '{"type":"progress","uuid":["a"]}',
      '{"type":"progress","uuid":{"a":1}}',
      '{"type":"progress","uuid":"a\tb"}',
      '{"type":"progress", "uuid":"a"}',
      '{"type":"progress","uuid" :"a"}',
      '{"type":"progress","uu\\u0069d":"a"}',
      // A raw control character in a key (JSON.parse refuses the line): the walk refuses the key.
      '{"type":"progress","a\u0001b":1,"uuid":"a"}',
      '{"type":"progress","uuid":"a"} x',
      '{"type":"progress","uuid":"a"',
      '{"type":"progress","uuid":"a","data":{"x":"unterminated}',
      '{"type":"progress","uuid":"a",}',
      '{"type":"progress","type":"user","uuid":"a"}',
      '{"data":{"type":"progress"},"uuid":"a"}',
      '{"data":{"type":"progress"},"type":"system","uuid":"a"}',
      '{}',
    ];
    for (const line of parsed) expect(links(line), line).toBeNull();
    // Not valid UTF-8: decoded (with replacements) and parsed, not read from the bytes.
    expect(links('{"type":"progress","uuid":"a"}', false)).toBeNull();
    // A cutter given no link types reads every line.
    expect(new KeyCutter({}).skip(Buffer.from('{"type":"progress","uuid":"a"}'), true)).toBeNull();
  });

  it('reads a Claude Code session the same from the link lines\' bytes as parsed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compactor-links-'));
    try {
      const user = { ...BASE, type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } };
      const progress = { ...BASE, type: 'progress', uuid: 'p1', parentUuid: 'u1', data: { type: 'hook_progress', uuid: 'nested', parentUuid: 'zz' } };
      const attachment = { ...BASE, type: 'attachment', uuid: 'p2', parentUuid: 'p1', attachment: { type: 'file', content: 'x' } };
      // A link of a kind the reader warns of: a number where a uuid goes.
      const odd = { ...BASE, type: 'progress', uuid: 'p3', parentUuid: 'p2', logicalParentUuid: 7, data: {} };
      const assistant = assistantLine('p3', 'ok');
      const lines = [user, progress, attachment, odd, assistant].map((line) => JSON.stringify(line));
      const bytes = join(dir, 'bytes.jsonl');
      // The same lines written with a space after each colon: no line can be followed from its bytes, all are parsed.
      const spaced = join(dir, 'spaced.jsonl');
      writeFileSync(bytes, `${lines.join('\n')}\n`);
      writeFileSync(spaced, `${lines.map((line) => JSON.stringify(JSON.parse(line), null, 1).replace(/\n */g, '')).join('\n')}\n`);
      const read = await readSession(bytes, 'claude-code');
      const reference = await readSession(spaced, 'claude-code');
      expect(read.messages).toEqual(reference.messages);
      expect(read.warnings).toEqual(reference.warnings.map((warning) => ({ ...warning, file: bytes })));
      expect(read.messages.map((message) => message.id)).toEqual(['u1', 'a1']);
      expect(read.warnings.map((warning) => warning.message)).toEqual(['logicalParentUuid: expected a string, got a number; the line is not linked into the conversation']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
