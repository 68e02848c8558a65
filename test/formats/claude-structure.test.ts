/**
 * The Claude Code reader follows the structure Claude Code 2.1.x (and 1.0.x) really writes:
 * parallel tool results that hang off their own call's line, progress lines in the parent
 * chain, rewinds, inline sidechains and subagent transcripts beside the session. What is
 * context (the messages) and what is only spend (Session.offContext, with its cause) is checked
 * on hand-made files under fixtures/formats/ and on the real marot/spotter session, whose spend
 * is also counted here without the reader.
 */
import { readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSession } from '../../src/read/index.js';
import { readSession } from '../../src/formats/index.js';
import { subagentTranscriptsOf } from '../../src/formats/claude-code-subagents.js';
import type { AnyMessage, Session, Usage } from '../../src/session/model.js';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

const formats = (name: string) => join(FIXTURES, 'formats', name);
const MAROT = join(FIXTURES, 'real/claude-code/marot_spotter');
const MAROT_ID = '258c7280-ae70-4798-800f-63464d01a85d';
const MAROT_MAIN = join(MAROT, `${MAROT_ID}.jsonl`);
const MAROT_SUBAGENTS = ['agent-a881341.jsonl', 'agent-acompact-fffbd0.jsonl'].map((name) => join(MAROT, MAROT_ID, 'subagents', name));
const VIEWER_5C03 = join(FIXTURES, 'real/claude-code/claude-code-viewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl');
const PROJECT = formats('claude-code-project');
const SESSION_A = join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000a.jsonl');
const SESSION_B = join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000b.jsonl');
const SUBAGENT_A = join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000a', 'subagents', 'agent-a1b2c3d.jsonl');

interface Totals {
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h: number;
}

function addUsage(totals: Totals, usage: Usage): Totals {
  return {
    calls: totals.calls + 1,
    input: totals.input + usage.input,
    output: totals.output + usage.output,
    cacheRead: totals.cacheRead + usage.cacheRead,
    cacheWrite: totals.cacheWrite + usage.cacheWrite,
    cacheWrite1h: totals.cacheWrite1h + (usage.cacheWrite1h ?? 0),
  };
}

const NOTHING: Totals = { calls: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 };

/** The session's spend as the reader gives it: context calls with usage, then off-context calls. */
function readerSpend(session: Session): Totals {
  const context = session.messages.flatMap((message) => (message.usage ? [message.usage] : []));
  return [...context, ...session.offContext.map((call) => call.usage)].reduce(addUsage, NOTHING);
}

/**
 * The spend counted without the reader: every line of the files parsed whole, assistant lines
 * grouped by `message.id` + `requestId`; input and cache from any line of the group (they
 * repeat), output from its `stop_reason` line, else the largest partial.
 */
function spendByHand(files: readonly string[]): Totals {
  const groups = new Map<string, any[]>();
  for (const file of files) {
    for (const text of readFileSync(file, 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      const line = JSON.parse(text);
      if (line.type !== 'assistant' || line.message.model === '<synthetic>') continue;
      const key = `${line.message.id} ${line.requestId}`;
      groups.set(key, [...(groups.get(key) ?? []), line.message]);
    }
  }
  let totals = NOTHING;
  for (const messages of groups.values()) {
    const usage = messages[0].usage;
    const final = messages.find((message) => message.stop_reason !== null && message.stop_reason !== undefined);
    const output = final ? final.usage.output_tokens : Math.max(...messages.map((message) => message.usage.output_tokens));
    totals = addUsage(totals, {
      input: usage.input_tokens,
      output,
      cacheRead: usage.cache_read_input_tokens,
      cacheWrite: usage.cache_creation_input_tokens,
      cacheWrite1h: usage.cache_creation?.ephemeral_1h_input_tokens ?? 0,
    });
  }
  return totals;
}

const ids = (session: Session<AnyMessage>) => session.messages.map((message) => message.id);
const offContext = (session: Session) => session.offContext.map(({ cause, file, line, usage, model }) => ({ cause, file, line, usage, model }));

describe('parallel tool calls and progress lines in the chain', () => {
  it('joins every result of a response after it, in the order they were written, and follows a progress line as parent', async () => {
    const session = await readSession(formats('claude-code-parallel.jsonl'));
    // a1 + a1b + a1c + a1d are one response with three calls; rA, rB, rC hang off a1b, a1c, a1d;
    // a2's parent is the progress line p3 after rC. The chain from a2 passes through rC only.
    expect(ids(session)).toEqual(['u1', 'a1', 'rA', 'rB', 'rC', 'a2']);
    expect(session.messages[1]!.content.map((block) => block.type)).toEqual(['thinking', 'tool_request', 'tool_request', 'tool_request']);
    // No call without a result; the partial outputs 5, 5, 5, 90 (no stop_reason): the largest.
    expect(session.warnings).toEqual([]);
    expect(session.messages[1]!.usage).toEqual({ input: 3, output: 90, cacheRead: 0, cacheWrite: 1_000, cacheWrite1h: 1_000 });
    expect(session.offContext).toEqual([]);
  });

  it('builds the joined results while reading: the lean read hands each message over once, in session order', async () => {
    const handed: string[] = [];
    const session = await readSession(MAROT_MAIN, 'claude-code', {
      keep: (message) => {
        handed.push(message.id);
        return message;
      },
    });
    expect(handed).toEqual(ids(session));
    const lean = await loadSession(MAROT_MAIN, { format: 'claude-code', messages: 'lean' });
    expect(lean.leanInOrder).toBe(true);
  });

  it('inspect on the real 2.1.39 session: 152 calls, no call without a result', async () => {
    const result = await runCli(['inspect', '--json', MAROT_MAIN]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    const [record] = jsonLines(result.stdout);
    // 22 responses are split over one line per parallel call: 3 of those lines and 18 results off
    // the chain join it (15 results answered calls the chain holds, 3 the lines it passed by).
    expect(record!['messages']).toBe(344);
    expect(record!['totals']).toMatchObject({ requests: 152, output_tokens: 38_899 });
  });

  it('a compacted view of the real session answers every call it holds (the API rejects one that does not)', async () => {
    const { dir, cleanup } = await scratchCopy('real/claude-code/marot_spotter');
    try {
      const session = join(dir, 'marot_spotter', `${MAROT_ID}.jsonl`);
      const compacted = await runCli(['compact', '--strategy', 'truncate', '--force', '--keep-recent', '20000', session]);
      expect(compacted.exitCode).toBe(0);
      const context = await runCli(['context', session]);
      expect(context.exitCode).toBe(0);
      expect(context.stderr).toBe('');
      const calls = (stdout: string) => {
        const blocks = jsonLines(stdout).flatMap((message) => (Array.isArray(message['content']) ? message['content'] : []));
        const requests = blocks.filter((block) => block.type === 'tool_request').map((block) => block.id as string);
        const results = new Set(blocks.filter((block) => block.type === 'tool_result').map((block) => block.tool_request_id as string));
        return { requests, unanswered: requests.filter((id) => !results.has(id)) };
      };
      expect(calls(context.stdout).unanswered).toEqual([]);
      // The compaction summarizes the parallel calls of toolu_01VVBMXqdntWLpKnpHVbaJNJ's response
      // (the only valid cut keeps the last 8 messages); the view without the sidecar still holds
      // them, each answered.
      await rm(`${session.slice(0, -'.jsonl'.length)}_compaction.json`);
      const whole = await runCli(['context', session]);
      expect(whole.exitCode).toBe(0);
      expect(calls(whole.stdout).requests).toContain('toolu_01VVBMXqdntWLpKnpHVbaJNJ');
      expect(calls(whole.stdout).unanswered).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});

describe('calls that are spend but not context', () => {
  it("a session's own folder of transcripts is found once it appears, after a read that found none", async () => {
    // The project folder's names are read once and kept while the folder is unchanged: the
    // session's own folder is looked in only when the folder names it.
    const { dir, cleanup } = await scratchCopy('real/claude-code/marot_spotter');
    try {
      const folder = join(dir, 'marot_spotter');
      const session = join(folder, `${MAROT_ID}.jsonl`);
      await rename(join(folder, MAROT_ID), join(dir, 'away'));
      expect(subagentTranscriptsOf(session)).toEqual([]);
      await rename(join(dir, 'away'), join(folder, MAROT_ID));
      expect(subagentTranscriptsOf(session)).toEqual(['agent-a881341.jsonl', 'agent-acompact-fffbd0.jsonl'].map((name) => join(folder, MAROT_ID, 'subagents', name)));
    } finally {
      await cleanup();
    }
  });

  it('a rewind: the abandoned branch stays out of the context, its billed calls are off-context', async () => {
    const file = formats('claude-code-rewind.jsonl');
    const session = await readSession(file);
    // u2 was sent again from a1; u2x, a2x, r2x, a3x were left behind (a4x is <synthetic>: no call).
    expect(ids(session)).toEqual(['u1', 'a1', 'u2', 'a2']);
    expect(offContext(session)).toEqual([
      { cause: 'abandoned-branch', file, line: 4, usage: { input: 4, output: 25, cacheRead: 2_000, cacheWrite: 30 }, model: 'claude-opus-4-6' },
      { cause: 'abandoned-branch', file, line: 6, usage: { input: 3, output: 40, cacheRead: 2_030, cacheWrite: 400 }, model: 'claude-opus-4-6' },
    ]);
    // context 10+2000 and 5+60+2000 in, 8 + 30 out; with the branch: 4 calls.
    expect(readerSpend(session)).toEqual({ calls: 4, input: 22, output: 103, cacheRead: 6_030, cacheWrite: 2_490, cacheWrite1h: 0 });
    expect(readerSpend(session)).toEqual(spendByHand([file]));
  });

  it('a 1.0.x inline sidechain: its calls are the subagent’s, once per response', async () => {
    const file = formats('claude-code-sidechain.jsonl');
    const session = await readSession(file);
    expect(ids(session)).toEqual(['u1', 'a1', 'r1', 'a2']);
    // msg_SA is two lines (output 2 partial, then 35 with its stop_reason).
    expect(offContext(session)).toEqual([
      { cause: 'subagent', file, line: 4, usage: { input: 1_500, output: 35, cacheRead: 0, cacheWrite: 0 }, model: 'claude-haiku-4-5' },
      { cause: 'subagent', file, line: 7, usage: { input: 1_600, output: 15, cacheRead: 0, cacheWrite: 0 }, model: 'claude-haiku-4-5' },
    ]);
    expect(readerSpend(session)).toEqual(spendByHand([file]));
  });

  it('the real 1.0.108 session with a Task sidechain: 10 of its 20 calls are the subagent’s', async () => {
    const session = await readSession(VIEWER_5C03);
    expect(session.offContext).toHaveLength(10);
    expect(new Set(session.offContext.map((call) => call.cause))).toEqual(new Set(['subagent']));
    const spend = readerSpend(session);
    expect(spend).toEqual(spendByHand([VIEWER_5C03]));
    // Of 372,135 prompt tokens billed, the context's calls read 216,399 (formats-real.test.ts).
    expect(spend.input + spend.cacheRead + spend.cacheWrite).toBe(372_135);
  });

  it('2.1.x transcripts in <sessionId>/subagents/ and the compaction summariser’s call', async () => {
    const session = await readSession(SESSION_A);
    const transcripts = join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000a', 'subagents');
    expect(ids(session)).toEqual(['u1', 'a1', 'r1', 'a2']);
    // The summariser's transcript repeats the session's own msg_M2 (line 1): counted once, as context.
    expect(offContext(session)).toEqual([
      { cause: 'subagent', file: join(transcripts, 'agent-a1b2c3d.jsonl'), line: 2, usage: { input: 3, output: 40, cacheRead: 0, cacheWrite: 9_000, cacheWrite1h: 9_000 }, model: 'claude-haiku-4-5' },
      { cause: 'subagent', file: join(transcripts, 'agent-a1b2c3d.jsonl'), line: 4, usage: { input: 4, output: 12, cacheRead: 9_000, cacheWrite: 200, cacheWrite1h: 200 }, model: 'claude-haiku-4-5' },
      { cause: 'compaction', file: join(transcripts, 'agent-acompact-0a1b2c.jsonl'), line: 3, usage: { input: 3, output: 300, cacheRead: 4_100, cacheWrite: 500, cacheWrite1h: 500 }, model: 'claude-opus-4-6' },
    ]);
    expect(readerSpend(session)).toEqual(spendByHand([SESSION_A, join(transcripts, 'agent-a1b2c3d.jsonl'), join(transcripts, 'agent-acompact-0a1b2c.jsonl')]));
  });

  it('a transcript that cannot be read is a warning on it, and none of its calls count', async () => {
    const { dir, cleanup } = await scratchCopy('formats/claude-code-project');
    try {
      const project = join(dir, 'claude-code-project');
      const transcript = join(project, 'c0ffee00-0000-4000-8000-00000000000a', 'subagents', 'agent-a1b2c3d.jsonl');
      await writeFile(transcript, `${readFileSync(transcript, 'utf8')}{"type":"assistant", broken\n`);
      const session = await readSession(join(project, 'c0ffee00-0000-4000-8000-00000000000a.jsonl'));
      expect(session.warnings).toEqual([
        { file: transcript, line: 5, message: 'subagent transcript left out of the spend: invalid JSON: Expected double-quoted property name at column 22' },
      ]);
      expect(session.offContext.map((call) => call.cause)).toEqual(['compaction']);
    } finally {
      await cleanup();
    }
  });

  it('2.0.x transcripts beside the session, found by the sessionId their lines name', async () => {
    const session = await readSession(SESSION_B);
    const transcript = join(PROJECT, 'agent-5e5e5e5.jsonl');
    expect(offContext(session)).toEqual([
      { cause: 'subagent', file: transcript, line: 2, usage: { input: 2, output: 30, cacheRead: 0, cacheWrite: 7_000 }, model: 'claude-haiku-4-5' },
      { cause: 'subagent', file: transcript, line: 4, usage: { input: 3, output: 9, cacheRead: 7_000, cacheWrite: 60 }, model: 'claude-haiku-4-5' },
    ]);
  });

  it('the real session’s spend with its two subagent transcripts equals a count made without the reader, token for token', async () => {
    const session = await readSession(MAROT_MAIN);
    const byHand = spendByHand([MAROT_MAIN, ...MAROT_SUBAGENTS]);
    expect(readerSpend(session)).toEqual(byHand);
    // ccusage 20.0.24 (`session --json --offline`) reports the same for this session: input 198,
    // cache creation 394,137, cache read 14,972,534, output 38,908. Every cache write is one-hour.
    expect(byHand).toEqual({ calls: 156, input: 198, output: 38_908, cacheRead: 14_972_534, cacheWrite: 394_137, cacheWrite1h: 394_137 });
    expect(session.offContext.map((call) => [call.cause, call.file.split('/').pop(), call.line])).toEqual([
      ['subagent', 'agent-a881341.jsonl', 2],
      ['subagent', 'agent-a881341.jsonl', 6],
      ['subagent', 'agent-a881341.jsonl', 10],
      ['compaction', 'agent-acompact-fffbd0.jsonl', 4],
    ]);
  });
});

describe('subagent transcripts among the inputs', () => {
  it('a walk reads each transcript with its session, once, and says so in one note', async () => {
    const result = await runCli(['estimate', '--json', PROJECT]);
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout).map((record) => record['session'])).toEqual([SESSION_A, SESSION_B]);
    expect(result.stderr).toBe("compactor: warning: 3 Claude Code subagent transcripts counted in their session's spend, not read as a session of their own");
  });

  it('a transcript named beside its session is not read again; named alone it is a session of its own', async () => {
    const both = await runCli(['estimate', '--json', SESSION_A, SUBAGENT_A]);
    expect(jsonLines(both.stdout).map((record) => record['session'])).toEqual([SESSION_A]);
    expect(both.stderr).toBe("compactor: warning: 1 Claude Code subagent transcript counted in its session's spend, not read as a session of its own");
    const alone = await runCli(['estimate', '--json', SUBAGENT_A]);
    expect(jsonLines(alone.stdout).map((record) => [record['session'], record['messages']])).toEqual([[SUBAGENT_A, 4]]);
    expect(alone.stderr).toBe('');
  });
});

describe('message ids', () => {
  it('stay unique when a uuid is spelled like the id of a line without one (L<line>)', async () => {
    // The reader skips its check of the ids when the chain saw every uuid once and each spelled as
    // usual; a uuid spelled otherwise can be a line's own id, so such a file is checked.
    const { dir, cleanup } = await scratchCopy();
    try {
      const file = join(dir, 'session.jsonl');
      const lines = [
        { type: 'user', uuid: 'L2', parentUuid: null, sessionId: 's', message: { role: 'user', content: 'hi' } },
        { type: 'assistant', parentUuid: 'L2', sessionId: 's', message: { id: 'msg_1', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'hello' }], usage: { input_tokens: 3, output_tokens: 1 } } },
      ];
      await writeFile(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
      const session = await readSession(file);
      expect(session.messages.map((message) => message.id)).toEqual(['L2', 'L2-1']);
    } finally {
      await cleanup();
    }
  });
});

describe('one-hour cache writes', () => {
  it('are read from usage.cache_creation by the Anthropic messages reader too', async () => {
    const { dir, cleanup } = await scratchCopy();
    try {
      const file = join(dir, 'messages.jsonl');
      const usage = (split: Record<string, number>, total?: number) => ({ input_tokens: 1, output_tokens: 2, ...(total === undefined ? {} : { cache_creation_input_tokens: total }), cache_creation: split });
      const lines = [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'a' }], usage: usage({ ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, 300) },
        { role: 'user', content: 'again' },
        // Only the split: the total is its sum.
        { role: 'assistant', content: [{ type: 'text', text: 'b' }], usage: usage({ ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 2 }) },
      ];
      await writeFile(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
      const session = await readSession(file, 'anthropic-messages');
      expect(session.messages.filter((message) => message.usage).map((message) => message.usage)).toEqual([
        { input: 1, output: 2, cacheRead: 0, cacheWrite: 300, cacheWrite1h: 200 },
        { input: 1, output: 2, cacheRead: 0, cacheWrite: 42, cacheWrite1h: 2 },
      ]);
    } finally {
      await cleanup();
    }
  });
});
