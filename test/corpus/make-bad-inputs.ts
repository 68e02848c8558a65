/**
 * The bad-input corpus: writes one file (or sidecar pair) per kind of bad input into a
 * directory, deterministically, with what compactor must say about each. Tests call
 * `makeBadInputs(dir)` on a temp dir; nothing here is committed as data. The expectations are
 * the contract documented in README "Bad input".
 */
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** `ok`: read cleanly; `warning`: read, with a warning (fails under --strict); `error`: the session fails. */
export type Outcome = 'ok' | 'warning' | 'error';

export interface BadInput {
  /** File name, relative to the corpus's `sessions/` or `sidecars/` directory. */
  readonly name: string;
  readonly path: string;
  readonly what: string;
  readonly outcome: Outcome;
  /** The line the diagnostic names (undefined for whole-file problems). */
  readonly line?: number;
  /** The diagnostic's message. */
  readonly message?: RegExp;
  /** The file the diagnostic names when it is not the session itself (a sidecar). */
  readonly reported?: string;
}

export interface Corpus {
  /** Session-level cases, all in one directory (each read with format detection). Walks: bad-input.test.ts. */
  readonly sessionsDir: string;
  readonly sessions: readonly BadInput[];
  /** Sidecar cases: a good session beside a bad sidecar. */
  readonly sidecarsDir: string;
  readonly sidecars: readonly BadInput[];
  /** A file made unreadable with chmod 000 (root reads it anyway: see `unreadableByMode`). */
  readonly noPermission: string;
}

type Line = Record<string, unknown>;
const jsonl = (lines: readonly (Line | string)[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

/** A small well-formed session: two turns, one tool call with its result. */
export function goodLines(): Line[] {
  return [
    { id: 'm1', role: 'user', content: 'List the files in src/' },
    {
      id: 'm2',
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_request', id: 't1', name: 'bash', arguments: { command: 'ls src/' } },
      ],
      metadata: { input_tokens: 1200, output_tokens: 25 },
    },
    { id: 'm3', role: 'user', content: [{ type: 'tool_result', tool_request_id: 't1', output: 'main.rs lib.rs', is_error: false }] },
    { id: 'm4', role: 'assistant', content: [{ type: 'text', text: 'Two files.' }], metadata: { input_tokens: 1260, output_tokens: 12 } },
    { id: 'm5', role: 'user', content: 'Read main.rs' },
    { id: 'm6', role: 'assistant', content: [{ type: 'text', text: 'It prints hello.' }], metadata: { input_tokens: 1300, output_tokens: 9 } },
  ];
}

/** `goodLines()` with line `index` (0-based) replaced. */
function withLine(index: number, line: Line | string): (Line | string)[] {
  const lines: (Line | string)[] = goodLines();
  lines[index] = line;
  return lines;
}

/** Deterministic bytes with NULs and high bytes: what a binary file looks like. */
function binaryBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  let state = 0x2545f491;
  for (let i = 0; i < size; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = i % 7 === 0 ? 0 : state & 0xff;
  }
  return bytes;
}

export async function makeBadInputs(root: string): Promise<Corpus> {
  const sessionsDir = join(root, 'sessions');
  const sidecarsDir = join(root, 'sidecars');
  await mkdir(sessionsDir, { recursive: true });
  await mkdir(sidecarsDir, { recursive: true });
  const sessions: BadInput[] = [];
  const add = async (name: string, content: string | Buffer, expected: Omit<BadInput, 'name' | 'path'>) => {
    const path = join(sessionsDir, name);
    await writeFile(path, content);
    sessions.push({ name, path, ...expected });
  };

  const good = goodLines();
  const goodText = jsonl(good);
  await add('good.jsonl', goodText, { what: 'a well-formed session', outcome: 'ok' });
  await add('empty.jsonl', '', { what: 'an empty file', outcome: 'error', message: /^empty file: no JSON lines to read$/ });
  await add('whitespace.jsonl', '  \n\n\t \n', { what: 'whitespace only', outcome: 'error', message: /^empty file: no JSON lines to read$/ });
  await add('bom.jsonl', `\uFEFF${goodText}`, { what: 'a byte-order mark', outcome: 'ok' });
  await add('crlf.jsonl', goodText.replace(/\n/g, '\r\n'), { what: 'CRLF line ends', outcome: 'ok' });
  await add('truncated-last-line.jsonl', goodText + '{"id":"m7","role":"user","content":"and th', {
    what: 'a truncated last line (still being written)',
    outcome: 'warning',
    line: 7,
    message: /^last line is incomplete \(file still being written\?\); skipped$/,
  });
  const lines = goodText.split('\n');
  const utf8 = Buffer.concat([
    Buffer.from(`${lines[0]}\n`),
    Buffer.from('{"id":"m2","role":"assistant","content":"caf'),
    Buffer.from([0xc3, 0x28, 0xff]),
    Buffer.from('"}\n'),
    Buffer.from(lines.slice(2).join('\n')),
  ]);
  await add('invalid-utf8.jsonl', utf8, {
    what: 'invalid UTF-8 inside a string',
    outcome: 'warning',
    line: 2,
    message: /^invalid UTF-8; the bad bytes were replaced with U\+FFFD$/,
  });
  await add('binary.jsonl', binaryBytes(4096), { what: 'a binary file', outcome: 'error', line: 1, message: /^binary data \(a NUL byte\), not a JSONL session$/ });
  await add('not-object.jsonl', jsonl(['[1,2,3]', ...good.slice(1)]), {
    what: 'a first line that is JSON but not an object',
    outcome: 'error',
    line: 1,
    message: /^expected one JSON object a line, got an array$/,
  });
  await add('not-object-later.jsonl', jsonl(withLine(2, '"just a string"')), {
    what: 'a later line that is JSON but not an object',
    outcome: 'error',
    line: 3,
    message: /^expected a JSON object, got a string$/,
  });
  await add('invalid-json.jsonl', jsonl(withLine(2, '{"id":"m3","role":"user",')), {
    what: 'a line that is not JSON (not the last)',
    outcome: 'error',
    line: 3,
    message: /^invalid JSON: .+ at column 26$/,
  });
  await add('nan-literal.jsonl', jsonl(withLine(3, '{"id":"m4","role":"assistant","content":"x","metadata":{"input_tokens":NaN}}')), {
    what: 'a NaN literal (not JSON)',
    outcome: 'error',
    line: 4,
    message: /^invalid JSON: /,
  });
  await add('unknown-role.jsonl', jsonl([...good.slice(0, 4), { id: 'm4b', role: 'tool', content: 'from an OpenAI log' }, ...good.slice(4)]), {
    what: 'an unknown role',
    outcome: 'warning',
    line: 5,
    message: /^unknown role "tool" \(expected user, assistant or system\); line skipped$/,
  });
  await add('unknown-block-type.jsonl', jsonl(withLine(4, { id: 'm5', role: 'user', content: [{ type: 'image', source: 'x.png' }, { type: 'text', text: 'Read main.rs' }] })), {
    what: 'an unknown content block type',
    outcome: 'warning',
    line: 5,
    message: /^content\.0: unknown block type "image"; block skipped$/,
  });
  await add('bad-block.jsonl', jsonl(withLine(1, { id: 'm2', role: 'assistant', content: [{ type: 'tool_request', id: 't1', arguments: {} }] })), {
    what: 'a known block with a missing field',
    outcome: 'error',
    line: 2,
    message: /^content\.0\.name: /,
  });
  await add('missing-content.jsonl', jsonl(withLine(4, { id: 'm5', role: 'user' })), {
    what: 'a message without content',
    outcome: 'error',
    line: 5,
    message: /^content: expected a string or a list of blocks, got nothing$/,
  });
  await add('missing-id.jsonl', jsonl(withLine(4, { role: 'user', content: 'Read main.rs' })), {
    what: 'a message without an id',
    outcome: 'warning',
    line: 5,
    message: /^message has no id; using "line-5"$/,
  });
  await add('duplicate-id.jsonl', jsonl(withLine(4, { id: 'm1', role: 'user', content: 'Read main.rs' })), {
    what: 'a repeated message id',
    outcome: 'warning',
    line: 5,
    message: /^duplicate message id "m1"; using "m1@line-5"$/,
  });
  await add('orphan-tool-result.jsonl', jsonl([good[0]!, { id: 'm2', role: 'user', content: [{ type: 'tool_result', tool_request_id: 'gone', output: 'x' }] }, ...good.slice(3)]), {
    what: 'a tool result whose call is not in the file',
    outcome: 'warning',
    line: 2,
    message: /^tool result for "gone" has no earlier tool call \(orphan\); left out of views$/,
  });
  await add('call-without-result.jsonl', jsonl([...good.slice(0, 2), ...good.slice(4)]), {
    what: 'a tool call that never got a result',
    outcome: 'warning',
    line: 2,
    message: /^tool call "t1" \(bash\) has no result; views add a placeholder result for it$/,
  });
  const twice = { ...good[1]!, content: [...(good[1]!.content as object[]), { type: 'tool_request', id: 't1', name: 'read', arguments: { path: 'src/main.rs' } }] };
  await add('duplicate-call-id.jsonl', jsonl(withLine(1, twice)), {
    what: 'two tool calls with one id in a message',
    outcome: 'warning',
    line: 2,
    message: /^tool call id "t1" \(read\) is used twice in one message; views answer the first call with a placeholder result and call this one "t1@2"$/,
  });
  await add('pending-call-at-end.jsonl', jsonl(good.slice(0, 2)), { what: 'a tool call in the last message (still running)', outcome: 'ok' });
  await add('numbers-as-strings.jsonl', jsonl(withLine(3, { ...good[3]!, metadata: { input_tokens: '1260', output_tokens: 12 } })), {
    what: 'token counts written as strings',
    outcome: 'warning',
    line: 4,
    message: /^metadata\.input_tokens: a number written as a string \("1260"\); read as 1260$/,
  });
  await add('negative-usage.jsonl', jsonl(withLine(3, { ...good[3]!, metadata: { input_tokens: -5, output_tokens: 12 } })), {
    what: 'a negative token count',
    outcome: 'warning',
    line: 4,
    message: /^metadata\.input_tokens: -5 is not a token count \(a whole number >= 0\); ignored, estimated instead$/,
  });
  await add('nan-usage.jsonl', jsonl(withLine(3, { ...good[3]!, metadata: { input_tokens: 'NaN', output_tokens: 12 } })), {
    what: 'NaN as a token count',
    outcome: 'warning',
    line: 4,
    message: /^metadata\.input_tokens: "NaN" is not a token count/,
  });
  await symlink(join(sessionsDir, 'does-not-exist.jsonl'), join(sessionsDir, 'dangling.jsonl'));
  sessions.push({
    name: 'dangling.jsonl',
    path: join(sessionsDir, 'dangling.jsonl'),
    what: 'a dangling symbolic link',
    outcome: 'error',
    message: /^cannot read: no such file \(or a dangling symbolic link\)$/,
  });

  const noPermission = join(root, 'no-permission.jsonl');
  await writeFile(noPermission, goodText);
  await chmod(noPermission, 0o000);

  return { sessionsDir, sessions, sidecarsDir, sidecars: await makeSidecarCases(sidecarsDir, goodText), noPermission };
}

/** A valid sidecar for `goodLines()` keeping from m5, as `compact --force --keep-recent 1` writes it. */
export function validSidecar(session: string): Record<string, unknown> {
  return {
    format_version: 1,
    session,
    strategy: 'truncate',
    fallback: false,
    summary: '[Compacted 4 messages: 1 user, 2 assistant, 1 tool results]',
    turn_prefix_summary: null,
    first_kept_message_id: 'm5',
    first_kept_index: 4,
    tokens_before: 1317,
    tokens_after: 1317,
    summary_tokens: 60,
    messages_summarized: 4,
    messages_summarized_total: 4,
    summarized_hash: `sha256:${'0'.repeat(64)}`,
    read_files: [],
    modified_files: [],
    compactions: 1,
    usage: null,
    details: {},
    created_at: '2026-01-01T00:00:00.000Z',
    tool_version: 'session-compactor@0.1.0',
  };
}

async function makeSidecarCases(dir: string, goodText: string): Promise<BadInput[]> {
  const cases: BadInput[] = [];
  const add = async (name: string, sidecar: string, expected: Omit<BadInput, 'name' | 'path' | 'reported'>) => {
    const path = join(dir, `${name}.jsonl`);
    const reported = join(dir, `${name}_compaction.json`);
    await writeFile(path, goodText);
    await writeFile(reported, sidecar);
    cases.push({ name: `${name}.jsonl`, path, reported, ...expected });
  };
  const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  // Torn in the middle of line 6 (the summary), as a plain (non-atomic) writer killed mid-write would leave it.
  const whole = pretty(validSidecar('corrupt.jsonl'));
  const corrupt = whole.slice(0, whole.indexOf('"summary"') + 20);
  await add('corrupt', corrupt, { what: 'a corrupt sidecar (torn JSON)', outcome: 'error', line: 6, message: /^corrupt sidecar \(not valid JSON\); delete it to compact from scratch$/ });
  await add('newer', pretty({ ...validSidecar('newer.jsonl'), format_version: 2, new_field: true }), {
    what: 'a sidecar from a newer version',
    outcome: 'error',
    message: /^sidecar format version 2 is newer than this compactor understands \(1\)$/,
  });
  await add('foreign', pretty(validSidecar('someone-else.jsonl')), {
    what: 'a sidecar for a different session',
    outcome: 'error',
    message: /^sidecar belongs to "someone-else.jsonl", not this session$/,
  });
  await add('invalid', pretty({ ...validSidecar('invalid.jsonl'), tokens_after: -1 }), {
    what: 'a sidecar with an invalid field',
    outcome: 'error',
    message: /^invalid sidecar: tokens_after: /,
  });
  await add('stale', pretty(validSidecar('stale.jsonl')), {
    what: 'a sidecar whose summarized messages changed (hash differs)',
    outcome: 'warning',
    message: /^stale sidecar \(the summarized messages changed since it was written\); compacting from scratch$/,
  });
  return cases;
}
