/**
 * The benchmark's synthetic corpus: deterministic (a seeded PRNG, no clock, no randomness from
 * the machine), written outside the repository. One abstract conversation generator, two
 * writers: Claude Code-shaped files (FORMATS.md section a: one API response split over several
 * lines sharing message.id / requestId with partial output_tokens, progress lines,
 * toolUseResult duplicates of every tool output, file-history-snapshot and queue-operation
 * lines) and canonical files (README "Canonical session format"). Tool outputs are 1–30 KB of
 * code, shell and test output, with the non-ASCII characters real ones carry (→, ├──, ✓).
 * Measuring is left to run.js.
 */
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** mulberry32: small, fast, and the same sequence on every machine. */
export function createRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
    hex: (length) => {
      let out = '';
      while (out.length < length) out += Math.floor(next() * 0x100000000).toString(16).padStart(8, '0');
      return out.slice(0, length);
    },
  };
}

const uuid = (r) => {
  const h = r.hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

const WORDS = (
  'the a to of and in is for that this with on it be as by file test function value error config module ' +
  'build run check update fix add remove return request response session token context message user model ' +
  'tool result output input read write edit path line change should would could now then next first'
).split(' ');
const IDENTS = ['user', 'session', 'token', 'config', 'buffer', 'result', 'items', 'handler', 'parser', 'cache', 'index', 'store', 'value', 'options', 'request'];
const KEYWORDS = ['const', 'let', 'return', 'await', 'if', 'for', 'export function', 'import', 'throw new Error'];
const FILES = ['src/index.ts', 'src/cli.ts', 'src/session/model.ts', 'src/tokens/estimate.ts', 'src/pipeline/batch.ts', 'src/formats/canonical.ts', 'README.md', 'package.json', 'test/cli.test.ts', 'src/replay/simulate.ts'];

function prose(r, words) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(r.pick(WORDS));
  return `${out.join(' ')}.`;
}

function codeLine(r) {
  const a = r.pick(IDENTS);
  const b = r.pick(IDENTS);
  switch (r.int(0, 4)) {
    case 0:
      return `  ${r.pick(KEYWORDS)} ${a}${b[0].toUpperCase()}${b.slice(1)} = await ${b}(${a}, ${r.int(0, 999)});`;
    case 1:
      return `  // ${prose(r, r.int(4, 12))}`;
    case 2:
      return `  if (!${a}) throw new Error('missing ${b}: ' + JSON.stringify(${a}));`;
    case 3:
      return '}';
    default:
      return `export function ${a}To${b[0].toUpperCase()}${b.slice(1)}(${a}: string): number {`;
  }
}

/** Claude Code's Read output: `     1→code`, the arrow is U+2192. */
function readOutput(r, bytes) {
  const lines = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const line = `${String(n).padStart(6)}→${codeLine(r)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

function shellOutput(r, bytes) {
  const lines = [];
  let size = 0;
  while (size < bytes) {
    let line;
    switch (r.int(0, 3)) {
      case 0:
        line = `-rw-r--r--  1 dev staff ${String(r.int(100, 99999)).padStart(6)} Nov ${r.int(1, 30)} 10:${r.int(10, 59)} ${r.pick(FILES)}`;
        break;
      case 1:
        line = `${r.chance(0.5) ? '├──' : '└──'} ${r.pick(IDENTS)}/${r.pick(FILES)}`;
        break;
      case 2:
        line = ` ${r.chance(0.9) ? '✓' : '×'} test/${r.pick(IDENTS)}.test.ts > ${prose(r, r.int(3, 8))} ${r.int(1, 900)}ms`;
        break;
      default:
        line = `${r.pick(FILES)}:${r.int(1, 400)}:${r.int(1, 80)} - ${prose(r, r.int(5, 14))}`;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** A tool output of 1–30 KB, skewed to the small end as real ones are. */
function toolOutputBytes(r) {
  const x = r.next();
  return Math.round(1024 + x * x * 29 * 1024);
}

/**
 * One abstract conversation: turns of a user prompt, tool loops (assistant text/thinking +
 * tool call, tool result) and a closing answer, with the context size a provider would report.
 */
function* conversation(r, targetBytes, outputCopies) {
  let context = 14_000 + r.int(0, 4000); // system prompt + tool schemas
  let bytes = 0;
  let turn = 0;
  while (bytes < targetBytes) {
    turn++;
    const prompt = `${prose(r, r.int(8, 60))} Please look at ${r.pick(FILES)}.`;
    yield { kind: 'user', text: prompt, turn };
    context += Math.ceil(prompt.length / 4);
    bytes += prompt.length + 400;
    const loops = r.int(1, 8);
    for (let i = 0; i < loops && bytes < targetBytes; i++) {
      const isRead = r.chance(0.5);
      const file = r.pick(FILES);
      const call = isRead
        ? { name: 'Read', input: { file_path: `/home/dev/project/${file}` } }
        : r.chance(0.2)
          ? { name: 'Edit', input: { file_path: `/home/dev/project/${file}`, old_string: codeLine(r), new_string: codeLine(r) } }
          : { name: 'Bash', input: { command: `npm test -- ${file}`, description: prose(r, 5) } };
      const thinking = r.chance(0.3) ? prose(r, r.int(20, 120)) : null;
      const text = r.chance(0.7) ? prose(r, r.int(6, 40)) : null;
      const output = toolOutputBytes(r);
      const result = call.name === 'Read' ? readOutput(r, output) : call.name === 'Edit' ? `The file ${call.input.file_path} has been updated.` : shellOutput(r, output);
      const outputTokens = r.int(40, 400);
      yield { kind: 'assistant', thinking, text, call, usage: usageAt(r, context, outputTokens), outputTokens };
      context += outputTokens;
      yield { kind: 'tool', call, output: result, isError: r.chance(0.05) };
      context += Math.ceil(result.length / 4);
      bytes += result.length * outputCopies + (thinking?.length ?? 0) + (text?.length ?? 0) + 2000;
    }
    const answer = prose(r, r.int(20, 200));
    const outputTokens = Math.ceil(answer.length / 4);
    yield { kind: 'assistant', thinking: null, text: answer, call: null, usage: usageAt(r, context, outputTokens), outputTokens };
    context += outputTokens;
    bytes += answer.length + 1000;
  }
}

/** Anthropic-style usage: most of the prompt read from cache, the new part written to it. */
function usageAt(r, context, output) {
  const written = Math.min(context, r.int(200, 4000));
  return { input: r.int(1, 12), cacheRead: context - written, cacheWrite: written, output };
}

/** Claude Code lines for one conversation (split responses, progress, duplicates, snapshots). */
function* claudeLines(r, sessionId, cwd, targetBytes) {
  const base = { isSidechain: false, userType: 'external', cwd, sessionId, version: '2.0.50', gitBranch: 'main' };
  let parent = null;
  let clock = Date.UTC(2025, 8, 1, 9, 0, 0);
  const stamp = () => new Date((clock += r.int(200, 20_000))).toISOString();
  let pendingCall = null;
  let lastAssistantUuid = null;
  // Claude writes every tool output twice (the result, and toolUseResult), plus progress lines.
  for (const event of conversation(r, targetBytes, 2.3)) {
    if (event.kind === 'user') {
      const id = uuid(r);
      yield { type: 'file-history-snapshot', messageId: id, snapshot: { messageId: id, trackedFileBackups: {}, timestamp: stamp() }, isSnapshotUpdate: false };
      yield { parentUuid: parent, ...base, type: 'user', message: { role: 'user', content: event.text }, uuid: id, timestamp: stamp() };
      parent = id;
    } else if (event.kind === 'assistant') {
      const messageId = `msg_01${r.hex(22)}`;
      const requestId = `req_011C${r.hex(20)}`;
      const blocks = [];
      if (event.thinking) blocks.push({ type: 'thinking', thinking: event.thinking, signature: r.hex(88) });
      if (event.text) blocks.push({ type: 'text', text: event.text });
      if (event.call) {
        pendingCall = { id: `toolu_01${r.hex(22)}`, ...event.call };
        blocks.push({ type: 'tool_use', id: pendingCall.id, name: pendingCall.name, input: pendingCall.input });
      }
      if (blocks.length === 0) blocks.push({ type: 'text', text: 'Done.' });
      const { usage } = event;
      for (const [i, block] of blocks.entries()) {
        const last = i === blocks.length - 1;
        const id = uuid(r);
        yield {
          parentUuid: parent,
          ...base,
          message: {
            id: messageId,
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-5-20250929',
            content: [block],
            stop_reason: last ? (event.call ? 'tool_use' : 'end_turn') : null,
            stop_sequence: null,
            usage: {
              input_tokens: usage.input,
              cache_creation_input_tokens: usage.cacheWrite,
              cache_read_input_tokens: usage.cacheRead,
              cache_creation: { ephemeral_5m_input_tokens: usage.cacheWrite, ephemeral_1h_input_tokens: 0 },
              output_tokens: last ? usage.output : r.int(1, Math.max(1, usage.output - 1)),
              service_tier: 'standard',
            },
          },
          requestId,
          type: 'assistant',
          uuid: id,
          timestamp: stamp(),
        };
        parent = id;
        lastAssistantUuid = id;
      }
    } else {
      const call = pendingCall;
      // Progress lines while the tool runs: Bash streams output, hooks report, subagents echo.
      const progressCount = call.name === 'Bash' ? r.int(1, 4) : r.int(0, 1);
      for (let i = 0; i < progressCount; i++) {
        const data =
          call.name === 'Bash'
            ? { type: 'bash_progress', output: event.output.slice(0, Math.min(event.output.length, r.int(200, 4000))), elapsedTimeSeconds: i + 1, totalLines: r.int(1, 400) }
            : { type: 'hook_progress', hookEvent: 'PostToolUse', hookName: `PostToolUse:${call.name}`, command: 'npx prettier --check' };
        yield { parentUuid: parent, ...base, type: 'progress', data, toolUseID: call.id, parentToolUseID: call.id, uuid: uuid(r), timestamp: stamp() };
      }
      const id = uuid(r);
      const toolUseResult =
        call.name === 'Read'
          ? { type: 'text', file: { filePath: call.input.file_path, content: event.output, numLines: event.output.split('\n').length, startLine: 1, totalLines: 400 } }
          : call.name === 'Edit'
            ? { filePath: call.input.file_path, oldString: call.input.old_string, newString: call.input.new_string, structuredPatch: [], userModified: false }
            : { stdout: event.output, stderr: '', interrupted: false, isImage: false };
      yield {
        parentUuid: parent,
        ...base,
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: call.id, type: 'tool_result', content: event.output, is_error: event.isError }] },
        uuid: id,
        timestamp: stamp(),
        toolUseResult,
        sourceToolAssistantUUID: lastAssistantUuid,
      };
      parent = id;
      if (r.chance(0.05)) yield { type: 'queue-operation', operation: 'enqueue', timestamp: stamp(), sessionId, content: prose(r, 6) };
    }
  }
  yield { parentUuid: parent, ...base, type: 'system', subtype: 'turn_duration', durationMs: r.int(1000, 90_000), uuid: uuid(r), timestamp: stamp(), isMeta: false };
}

/** Canonical lines for the same kind of conversation. */
function* canonicalLines(r, targetBytes) {
  let n = 0;
  let pendingCall = null;
  let clock = Date.UTC(2025, 8, 1, 9, 0, 0);
  const stamp = () => new Date((clock += r.int(200, 20_000))).toISOString();
  for (const event of conversation(r, targetBytes, 1)) {
    n++;
    if (event.kind === 'user') {
      yield { id: `m${n}`, role: 'user', content: event.text, timestamp: stamp() };
    } else if (event.kind === 'assistant') {
      const content = [];
      if (event.thinking) content.push({ type: 'thinking', text: event.thinking });
      if (event.text) content.push({ type: 'text', text: event.text });
      if (event.call) {
        pendingCall = { id: `t${n}`, ...event.call };
        content.push({ type: 'tool_request', id: pendingCall.id, name: pendingCall.name, arguments: pendingCall.input });
      }
      if (content.length === 0) content.push({ type: 'text', text: 'Done.' });
      const { usage } = event;
      yield {
        id: `m${n}`,
        role: 'assistant',
        content,
        metadata: {
          input_tokens: usage.input,
          output_tokens: usage.output,
          cache_read_input_tokens: usage.cacheRead,
          cache_creation_input_tokens: usage.cacheWrite,
          model: 'claude-sonnet-4-5',
        },
        timestamp: stamp(),
      };
    } else {
      yield { id: `m${n}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: pendingCall.id, output: event.output, is_error: event.isError }], timestamp: stamp() };
    }
  }
}

/** Writes lines to a file through a stream, honouring back-pressure; resolves with the byte count. */
async function writeLines(path, lines) {
  const out = createWriteStream(path);
  let bytes = 0;
  let batch = '';
  for (const line of lines) {
    batch += `${JSON.stringify(line)}\n`;
    if (batch.length > 1 << 20) {
      bytes += Buffer.byteLength(batch);
      if (!out.write(batch)) await new Promise((resolve) => out.once('drain', resolve));
      batch = '';
    }
  }
  bytes += Buffer.byteLength(batch);
  out.write(batch);
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
  return bytes;
}

/** Session sizes of a real archive: many small, a few large (log-uniform, 30 KB to 24 MB). */
function sessionBytes(r) {
  return Math.round(Math.exp(Math.log(30_000) + r.next() * (Math.log(24_000_000) - Math.log(30_000))));
}

const PROJECTS = 12;

/**
 * A corpus of `kind` ('claude' | 'canonical') of about `totalBytes`, under `dir`. Claude files
 * go to `dir/projects/<project>/<session>.jsonl` so `CLAUDE_CONFIG_DIR=dir` points ccusage at
 * them. Returns {files, bytes}. `single` writes one session of the whole size.
 */
export async function generateCorpus(dir, kind, totalBytes, { seed = 1, single = false } = {}) {
  const r = createRandom(seed);
  let bytes = 0;
  let files = 0;
  while (bytes < totalBytes) {
    const target = single ? totalBytes : Math.min(sessionBytes(r), totalBytes - bytes + 20_000);
    const project = `-home-dev-project${files % PROJECTS}`;
    if (kind === 'claude') {
      const sessionId = uuid(r);
      const folder = join(dir, 'projects', project);
      mkdirSync(folder, { recursive: true });
      bytes += await writeLines(join(folder, `${sessionId}.jsonl`), claudeLines(r, sessionId, `/home/dev/project${files % PROJECTS}`, target));
    } else {
      const folder = join(dir, project);
      mkdirSync(folder, { recursive: true });
      bytes += await writeLines(join(folder, `session-${String(files).padStart(5, '0')}.jsonl`), canonicalLines(r, target));
    }
    files++;
    if (single) break;
  }
  return { files, bytes };
}

/** `count` small canonical sessions (3–8 KB), for the compact throughput row. */
export function generateSmallSessions(dir, count, seed = 7) {
  const r = createRandom(seed);
  for (let i = 0; i < count; i++) {
    const folder = join(dir, `batch-${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) mkdirSync(folder, { recursive: true });
    let text = '';
    for (const line of canonicalLines(r, r.int(2500, 6000))) text += `${JSON.stringify(line)}\n`;
    writeFileSync(join(folder, `s${String(i).padStart(5, '0')}.jsonl`), text);
  }
}

/**
 * Builds `dir` with `make(dir)` unless a finished copy is already there (a `.done` marker with
 * the same description). Corpora are cached between runs because generating 1 GB takes a while.
 */
export async function cachedCorpus(dir, description, make) {
  const marker = join(dir, '.done');
  if (existsSync(marker)) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await make(dir);
  writeFileSync(marker, `${description}\n`);
}

/** All .jsonl files under `dir` (sorted), and their total size. */
export function listSessions(dir) {
  const files = [];
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.jsonl') && !entry.name.endsWith('_compaction.json')) files.push(path);
    }
  };
  walk(dir);
  files.sort();
  return { files, bytes: files.reduce((total, file) => total + statSync(file).size, 0) };
}
