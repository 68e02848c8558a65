/**
 * The WebAssembly scanner's Claude Code reader (src/formats/claude-code-scanned.ts) against the
 * JavaScript reader, the reference: on a read that only measures text (estimate, inspect), both
 * must give the same session (slim messages, recorded compactions, spend, warnings), the same
 * estimates and inspect's growth facts, and the same error at the same line. Run over every
 * Claude Code file of the fixtures (the real sessions among them), and over random files of
 * near-valid and invalid lines: a JSON writer that spaces, escapes and repeats keys at random,
 * wrong types where the reader checks them, cut lines, bytes that are no UTF-8, NULs, CRs, a
 * BOM, characters of one to four bytes at every offset of the scanner's sixteen-byte steps, huge
 * strings, and responses split over lines whose blocks repeat (merged by comparing texts).
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashedStandIn } from '../../src/formats/claude-code-scanned.js';
import { readClaudeCodeWith } from '../../src/formats/claude-code.js';
import * as layout from '../../src/scan/claude-layout.js';
import { ClaudeScanner, scannerModule } from '../../src/scan/scanner.js';
import { FIXTURES } from '../helpers/cli.js';
import { expectSameRead as sameRead, jsonlFiles } from '../helpers/scanned-read.js';
import { PROTO_KEY, mostly, odd, randomFile, text } from '../helpers/random-lines.js';

const module = scannerModule();
/** One scanner for every scanned read here, as a thread lends its own to one read after another. */
const scanner = module ? new ClaudeScanner(module) : null;

/** The file read the same with the scanner as without it (test/helpers/scanned-read.ts); whether the read succeeded. */
const expectSameRead = (path: string) => sameRead(readClaudeCodeWith, path, scanner);

describe('the scanner', () => {
  it('is built, loads here (WebAssembly SIMD), and has the record layout src/scan/ reads', () => {
    expect(module).not.toBeNull();
    const instance = new WebAssembly.Instance(module!, { env: { abort: () => {} } });
    for (const [name, value] of Object.entries(layout)) expect((instance.exports[name] as WebAssembly.Global | undefined)?.value, name).toBe(value);
  });

  it('makes the stand-in of a text the way claude-code-scanned.ts does (FNV-1a over its UTF-16 units)', () => {
    // One assistant line scanned, its text's stand-in against hashedStandIn of the same text.
    const text = 'caf\u00e9 \ud83d\ude00 \ud800 → "quoted" \\ done';
    const line = `${JSON.stringify({ type: 'assistant', uuid: 'u1', message: { id: 'm1', content: [{ type: 'text', text }] } })}\n`;
    const scanner = new ClaudeScanner(module!);
    const bytes = Buffer.from(line);
    scanner.input.set(bytes);
    const { words } = scanner.scan(0, bytes.length, true, 0);
    expect(words[0]! & 0xff).toBe(layout.KIND_CHAT);
    const block = layout.CHAT_WORDS;
    expect(words[block + layout.BLOCK_UNITS]).toBe(text.length);
    const low = words[block + layout.BLOCK_HASH]!;
    const high = words[block + layout.BLOCK_HASH + 1]!;
    expect(hashedStandIn(text).slice(0, 4)).toBe(String.fromCharCode(low & 0xffff, low >>> 16, high & 0xffff, high >>> 16));
  });
});

describe('the scanned reader against the JavaScript reader', () => {
  const files = [...jsonlFiles(join(FIXTURES, 'real', 'claude-code')), ...jsonlFiles(join(FIXTURES, 'agents', 'claude-code')), ...jsonlFiles(join(FIXTURES, 'formats')).filter((file) => file.includes('claude-code'))];

  it('reads every Claude Code fixture and real session alike', async () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
    for (const file of files) await expectSameRead(file);
  });

  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'compactor-scan-diff-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads random near-valid and invalid lines alike', async () => {
    let run = 0;
    /** Lines by what the scanner made of them: the random files must put both ways to work. */
    const kinds = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(sessionFile(), async (bytes) => {
        const path = join(dir, `s${run++}.jsonl`);
        writeFileSync(path, bytes);
        await expectSameRead(path);
        for (const kind of recordKinds(bytes)) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }),
      { numRuns: 300 },
    );
    // Ids as words and as strings (uppercase, escaped, other ids), parents as words.
    const ids = kinds.get(UUID_WORDS)! + kinds.get(UUID_STRING)!;
    expect(kinds.get(UUID_WORDS)! / ids).toBeGreaterThan(0.3);
    expect(kinds.get(UUID_STRING)! / ids).toBeGreaterThan(0.1);
    expect(kinds.get(PARENT_WORDS)! / ids).toBeGreaterThan(0.3);
    expect(kinds.get(SUMMARY)).toBeGreaterThan(10);
    for (const mark of [UUID_WORDS, UUID_STRING, PARENT_WORDS, SUMMARY]) kinds.delete(mark);
    const total = [...kinds.values()].reduce((sum, count) => sum + count, 0);
    expect(kinds.get(layout.KIND_CHAT)! / total).toBeGreaterThan(0.2);
    expect(kinds.get(layout.KIND_LINK)! / total).toBeGreaterThan(0.05);
    expect(kinds.get(layout.KIND_RAW)! / total).toBeGreaterThan(0.1);
  }, 600_000);

  it('reads a file of huge lines and characters at every offset alike, across the reads of its chunks', async () => {
    const path = join(dir, 'huge.jsonl');
    const lines: string[] = [];
    let parent: string | null = null;
    for (let index = 0; index < 40; index++) {
      const uuid = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
      const pad = 'x'.repeat(index % 17);
      const wide = ['é', '→', '😀', '\u0001', '"', '\\'][index % 6]!;
      const output = `${pad}${wide}${'ok '.repeat(index % 3 === 0 ? 300_000 : 10)}${wide}${pad}`;
      const value =
        index % 2 === 0
          ? { type: 'assistant', uuid, parentUuid: parent, requestId: `req_${index}`, message: { id: `msg_${index}`, model: 'claude-x', content: [{ type: 'tool_use', id: `toolu_${index}`, name: 'Bash', input: { command: output } }], stop_reason: 'tool_use', usage: { input_tokens: index, output_tokens: 3 } } }
          : { type: 'user', uuid, parentUuid: parent, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${index - 1}`, content: output }] }, toolUseResult: { stdout: output } };
      lines.push(JSON.stringify(value));
      parent = uuid;
    }
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect(statSync(path).size).toBeGreaterThan(4 << 20);
    await expectSameRead(path);
  });

  it('reads a compaction summary with its texts whole, and leaves one whose tool output is a list of parts to JavaScript', async () => {
    const path = join(dir, 'summaries.jsonl');
    const summary = (index: number, content: unknown) => ({ type: 'user', isCompactSummary: true, uuid: uuidOf(index), parentUuid: uuidOf(index - 1), message: { role: 'user', content } });
    const lines = [
      { type: 'user', uuid: uuidOf(0), parentUuid: null, message: { role: 'user', content: 'hello there' } },
      summary(1, [{ type: 'text', text: 'This session is being continued. The summary: caf\u00e9 → done' }]),
      summary(2, [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'part one' }, { type: 'text', text: 'part two' }] },
        { type: 'text', text: 'the second summary' },
      ]),
    ];
    const bytes = Buffer.from(`${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    writeFileSync(path, bytes);
    expect(recordKinds(bytes)).toEqual([layout.KIND_CHAT, UUID_WORDS, layout.KIND_CHAT, UUID_WORDS, PARENT_WORDS, SUMMARY, layout.KIND_RAW]);
    await expectSameRead(path);
  });
});

/** recordKinds' marks beside the kinds: a line's uuid read as words or as a string; its parent as words; a compaction's summary read. */
const UUID_WORDS = 100;
const UUID_STRING = 101;
const PARENT_WORDS = 102;
const SUMMARY = 103;

/** The kind of each record the scanner writes for `bytes`, and (UUID_WORDS…) how it gave a line's ids. */
function recordKinds(bytes: Buffer): number[] {
  if (scanner!.input.length < bytes.length) scanner!.growInput(bytes.length, 0);
  scanner!.input.set(bytes);
  const kinds: number[] = [];
  for (let from = 0; from < bytes.length; ) {
    const scan = scanner!.scan(from, bytes.length, true, 0);
    for (let at = 0; at < scan.words.length; at += scan.words[at + layout.WORD_LENGTH]!) {
      const head = scan.words[at]!;
      kinds.push(head & 0xff);
      // Links and chat lines whose ids came as the scanner's words, and as strings.
      if ((head & 0xff) !== layout.KIND_RAW) {
        kinds.push((head & layout.FLAG_UUID_WORDS) !== 0 ? UUID_WORDS : UUID_STRING);
        if ((head & layout.FLAG_PARENT_WORDS) !== 0) kinds.push(PARENT_WORDS);
        if ((head & layout.FLAG_COMPACT_SUMMARY) !== 0) kinds.push(SUMMARY);
      }
    }
    if (!scan.full) break;
    from = scan.end;
  }
  return kinds;
}

// ---- random session files ----------------------------------------------------------------------

const usage = fc.record(
  {
    input_tokens: mostly(fc.nat(100_000)),
    output_tokens: mostly(fc.nat(5000)),
    cache_creation_input_tokens: fc.nat(100_000),
    cache_read_input_tokens: fc.nat(1_000_000),
    cache_creation: fc.oneof(fc.record({ ephemeral_5m_input_tokens: fc.nat(1000), ephemeral_1h_input_tokens: fc.nat(1000) }, { requiredKeys: [] }), fc.constant(null)),
    service_tier: fc.constant('standard'),
  },
  { requiredKeys: [] },
);

const toolInput = mostly(
  fc.oneof(
    fc.record({ command: text, description: text }, { requiredKeys: [] }),
    fc.record({ file_path: fc.constantFrom('/a/b.ts', 'src/é.ts'), content: text }, { requiredKeys: [] }),
    fc.record({ file_path: fc.constant('x.ts'), old_string: text, new_string: text, n: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })) }),
  ),
);

const block = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom<unknown>({ type: 'server_tool_use', name: 'web_search', input: { q: 1 } }, { type: 'web_search_tool_result', content: [{ type: 'text', text: 'r' }] }, { type: 'mystery' }, { text: 'no type' }, 'a string block', 7) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('text'), text: mostly(text) }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('thinking'), thinking: text, signature: fc.constant('sig'.repeat(20)) }, { requiredKeys: ['type'] }) },
  { weight: 4, arbitrary: fc.constant({ type: 'redacted_thinking', data: 'zz' }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('tool_use'), id: mostly(fc.constantFrom('toolu_1', 'toolu_2', 'toolu_3')), name: fc.constantFrom('Bash', 'Read', 'Write', 'Edit', 'str_replace_based_edit_tool'), input: toolInput }, { requiredKeys: ['type', 'id', 'name'] }) },
  {
    weight: 8,
    arbitrary: fc.record(
      {
        type: fc.constant('tool_result'),
        tool_use_id: mostly(fc.constantFrom('toolu_1', 'toolu_2', 'toolu_3')),
        content: mostly(
          fc.oneof(
            { weight: 6, arbitrary: text },
            { weight: 1, arbitrary: fc.constant(null) },
            {
              weight: 3,
              arbitrary: fc.array(
                fc.oneof(
                  { weight: 8, arbitrary: fc.record({ type: fc.constant('text'), text }) },
                  { weight: 2, arbitrary: fc.constant({ type: 'image', source: { data: 'AAAA' } }) },
                  { weight: 2, arbitrary: text },
                  { weight: 1, arbitrary: fc.constantFrom<unknown>({ type: 'text', text: null }, { text: 'untyped' }, 3, { type: 'input_text', text: 'x' }) },
                ),
                { maxLength: 4 },
              ),
            },
          ),
        ),
        is_error: mostly(fc.oneof(fc.boolean(), fc.constant(null))),
      },
      { requiredKeys: ['type', 'tool_use_id', 'content'] },
    ),
  },
  { weight: 2, arbitrary: fc.constant({ type: 'image', source: { type: 'base64', data: 'iVBOR' } }) },
);

const content = mostly(fc.oneof({ weight: 1, arbitrary: text }, { weight: 3, arbitrary: fc.array(block, { maxLength: 4 }) }));

/** A line's fields besides its kind's: links (some of the wrong kind), ids and times. */
interface Links {
  readonly uuid: unknown;
  readonly parentUuid: unknown;
}

function chatLine(type: 'user' | 'assistant', links: Links, fields: { content: unknown; sidechain: unknown; response: number; usage: unknown; stop: unknown; model: unknown; extra: Record<string, unknown> }): Record<string, unknown> {
  const message: Record<string, unknown> =
    type === 'assistant'
      ? { id: `msg_${fields.response}`, type: 'message', role: 'assistant', model: fields.model, content: fields.content, stop_reason: fields.stop, usage: fields.usage }
      : { role: 'user', content: fields.content };
  return { parentUuid: links.parentUuid, isSidechain: fields.sidechain, userType: 'external', cwd: '/w', sessionId: 's', version: '2.1.0', type, message, uuid: links.uuid, timestamp: '2026-01-05T10:00:00.000Z', ...(type === 'assistant' ? { requestId: `req_${fields.response}` } : {}), ...fields.extra };
}

const extraFields = fc.oneof(
  { weight: 20, arbitrary: fc.record({ toolUseResult: fc.oneof(fc.record({ stdout: text, stderr: text }), text) }, { requiredKeys: [] }) },
  // A compaction's summary, otherwise plain: the scanner reads it (its texts whole) unless a tool result's output is a list of parts.
  { weight: 2, arbitrary: fc.constant({ isCompactSummary: true }) },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        isCompactSummary: fc.oneof(fc.boolean(), odd),
        forkedFrom: fc.oneof(fc.record({ sessionId: fc.constantFrom('other', '') }), odd),
        timestamp: odd,
        requestId: odd,
        logicalParentUuid: fc.oneof(fc.constant('lp'), odd),
        message: odd,
        [PROTO_KEY]: fc.constant({ x: 1 }),
      },
      { requiredKeys: [] },
    ),
  },
);

/**
 * The uuid of the line at `index`: mostly in the usual spelling (lowercase hex, which the scanner
 * gives as words), now and then uppercase, not hex, or another id (given as strings).
 */
function uuidOf(index: number): string {
  const tail = index.toString(16).padStart(12, '0');
  switch (index % 7) {
    case 3:
      return `A0B1C2D3-0000-4000-8000-${tail}`;
    case 5:
      return `g0b1c2d3-0000-4000-8000-${tail}`;
    case 6:
      return `id-${tail}`;
    default:
      return `a0b1c2d3-e4f5-4000-8000-${tail}`;
  }
}

/** One line, as a value: what a Claude Code file holds, sometimes not quite. */
function lineValue(index: number) {
  const uuid = uuidOf(index);
  const parent = index > 0 ? uuidOf(index - 1) : null;
  const links = fc.oneof(
    { weight: 24, arbitrary: fc.constant({ uuid, parentUuid: parent }) },
    { weight: 1, arbitrary: fc.record({ uuid: fc.oneof(fc.constant(uuid), odd), parentUuid: fc.oneof(fc.constant(parent), odd, fc.constant('missing-parent')) }) },
    // A uuid repeated, a line its own parent, a parent named before it is read, one spelled otherwise.
    { weight: 1, arbitrary: fc.constantFrom({ uuid: parent, parentUuid: parent }, { uuid, parentUuid: uuid }, { uuid, parentUuid: uuidOf(index + 1) }, { uuid, parentUuid: parent?.toUpperCase() ?? null }) },
  );
  const chat = fc.record({
    type: fc.constantFrom<'user' | 'assistant'>('user', 'assistant', 'assistant'),
    links,
    content,
    sidechain: mostly(fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 2, arbitrary: fc.boolean() })),
    response: fc.nat(3),
    usage: mostly(usage),
    stop: mostly(fc.constantFrom(null, 'tool_use', 'end_turn')),
    model: mostly(fc.constantFrom('claude-sonnet-4-5', 'claude-sonnet-4-5', '<synthetic>', null)),
    extra: extraFields,
  });
  return fc.oneof(
    { weight: 8, arbitrary: chat.map(({ type, links, ...fields }) => chatLine(type, links, fields)) },
    { weight: 3, arbitrary: links.map((l) => ({ parentUuid: l.parentUuid, isSidechain: false, type: 'progress', data: { type: 'hook_progress', hookName: 'x', output: 'o'.repeat(50) }, uuid: l.uuid, timestamp: 't' })) },
    { weight: 1, arbitrary: links.map((l) => ({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', parentUuid: null, logicalParentUuid: l.parentUuid, uuid: l.uuid, compactMetadata: { trigger: 'auto', preTokens: 5000 } })) },
    { weight: 1, arbitrary: links.map((l) => ({ type: 'system', subtype: 'stop_hook_summary', uuid: l.uuid, parentUuid: l.parentUuid, isSidechain: 'odd' })) },
    { weight: 1, arbitrary: fc.constantFrom({ type: 'file-history-snapshot', messageId: 'm', snapshot: { trackedFileBackups: {} } }, { type: 'queue-operation', operation: 'enqueue' }, { type: 'summary', summary: 's', leafUuid: uuid }, { type: 'last-prompt', lastPrompt: 'p' }, { no: 'type' }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>([1, 2], 'a string', 42, null) },
  );
}

/** A session file: lines from lineValue, written and damaged by the shared writer (test/helpers/random-lines.ts). */
const sessionFile = () => randomFile(lineValue);
