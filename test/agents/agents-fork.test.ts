/**
 * `compactor fork` proven by the agents themselves: each session (every file the real agents
 * wrote under fixtures/agents, and the real Claude Code, Codex and pi files under fixtures/real)
 * is forked, then the agent continues the fork against the scripted provider on 127.0.0.1:
 * `claude -p "go on" --resume <new id>`, `codex exec resume <new id> "go on"`; pi's own
 * SessionManager and context builder (from the installed package) load the pi forks. The
 * request the agent sends must be the summary and then exactly the kept messages of our view,
 * keep the provider's rules, and be smaller than the same run on the ORIGINAL by what the
 * compaction saved; the run on the original must carry what the fork dropped.
 *
 * Tokens are counted one way on both sides: the request's messages are read back by our own
 * readers (an Anthropic request as Anthropic messages, a Responses input as rollout items, pi's
 * messages as a pi session) and estimated with the heuristic (characters / 4, per message).
 * What the agents add on their own is left out of both counts: Claude Code's
 * `<system-reminder>` blocks, Codex's injected instructions and environment, the prompt "go on".
 * The saving the compaction predicts is the estimate of the messages it dropped minus that of
 * the summary message the agent receives; the measured saving must be within 5% of the
 * original request's tokens of it. For Codex, the saving `fork` itself reports (tokens_before −
 * tokens_after) is also held to the wire, counted over the whole request (injected context and
 * prompt on both sides), within 5% of the original's; a fork `fork` calls no-gain is written from
 * planFork and resumed all the same, to show it would not have paid. A test that cannot start an
 * agent fails; none is skipped.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedWindowStart } from '../../src/compaction/compact.js';
import { loadCompactedView, planFork } from '../../src/fork/index.js';
import { readSession } from '../../src/formats/index.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import { viewViolations } from '../../src/session/view-rules.js';
import { estimateMessageTokens } from '../../src/tokens/estimate.js';
import type { AgentTools } from '../../tools/agents/install.js';
import { agentTools, installDir } from '../../tools/agents/install.js';
import { claudeCode, codex } from '../../tools/agents/agents.js';
import { startScriptedProvider } from '../../tools/agents/provider.js';
import { runAgent } from '../../tools/agents/run.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

let tools: AgentTools;
const scratch: string[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `compactor-fork-${name}-`));
  scratch.push(dir);
  return dir;
};

beforeAll(async () => {
  tools = await agentTools();
}, 15 * 60_000);

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** The flags every fork here uses: compact whatever the size, cut inside long turns too. */
const FORK_FLAGS = ['--force', '--allow-no-gain', '--cut-rule', 'tool-safe', '--keep-recent', '300', '--json'];
const REPLY = 'Going on after the fork.';
const PROMPT = 'go on';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Codex's own additions to a history (FORMATS.md "injected context"), counted on neither side. */
const INJECTED = ['<environment_context>', '<user_instructions>', '# AGENTS.md', '<skills_instructions>', '<permissions instructions>'];
const injected = (message: Message) =>
  message.role === 'system' || (message.role === 'user' && message.content.some((block) => block.type === 'text' && INJECTED.some((prefix) => block.text.trimStart().startsWith(prefix))));

/**
 * A text as comparable, spaces normalised: a command the user ran in pi (`Ran \`cmd\`…`) by its
 * command, and a pi branch or compaction summary without the wrapping pi adds when it sends one
 * (our pi reader renders these more plainly than pi does; the text in between is the same).
 */
function comparable(raw: string): string {
  const text = raw.replace(/\s+/g, ' ').trim();
  const ran = /^Ran `([^`]*)`/.exec(text);
  if (ran) return `Ran \`${ran[1]}\``;
  const wrapped = /^The (?:following is a summary of a branch that this conversation came back from|conversation history before this point was compacted into the following summary): <summary> ([\s\S]*)<\/summary>$/.exec(text);
  return wrapped ? wrapped[1]!.trim() : text;
}

/**
 * What Claude Code adds when it resumes, from the history rather than from its lines: a stand-in
 * reply for a turn that ended without one, the nudge after an interrupted turn, and notices of
 * background tasks the history started (so the original, whose history still names them, gets
 * notices the fork does not).
 */
const RESUME_ADDITIONS = [/^No response requested\.$/, /^Continue from where you left off\.$/, /^<task-notification>/];

/**
 * Messages with their texts as comparable: what both sides' items and tokens are taken from.
 * Thinking blocks are left out: Claude Code sends them back only to the model that wrote them
 * (a signature binds them), so what it sends of them depends on the model, not on the fork.
 */
const comparableMessages = (messages: readonly Message[]): Message[] =>
  messages
    .filter((message) => !injected(message))
    .map((message) => ({
      ...message,
      content: message.content.flatMap((block): ContentBlock[] => {
        if (block.type === 'thinking') return [];
        if (block.type !== 'text') return [block];
        const text = comparable(block.text);
        return RESUME_ADDITIONS.some((pattern) => pattern.test(text)) ? [] : [{ ...block, text }];
      }),
    }));

/** A message's blocks as comparable items: role and kind, with the text (spaces normalised) or the call id. */
function items(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (const message of comparableMessages(messages)) {
    for (const block of message.content) {
      if (block.type === 'text') {
        const text = block.text;
        // Long texts are named by their start and length, so a failure stays readable.
        if (text !== '' && text !== PROMPT) out.push(`${message.role}|text|${text.length > 300 ? `${text.slice(0, 300)}… (${text.length})` : text}`);
      } else if (block.type === 'tool_request') out.push(`call|${block.id}`);
      else if (block.type === 'tool_result') out.push(`result|${block.tool_request_id}`);
    }
  }
  return out;
}

const tokens = (messages: readonly Message[]) => comparableMessages(messages).reduce((total, message) => total + estimateMessageTokens(message), 0);

/** A captured request's messages, read back by one of our readers from a file written in `format`. */
async function readBack(lines: readonly unknown[], format: string): Promise<Message[]> {
  const dir = tempDir('request');
  const path = join(dir, 'request.jsonl');
  writeFileSync(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return [...(await readSession(path, format)).messages];
}

/** An Anthropic request's messages without Claude Code's own reminders. */
function anthropicLines(body: Record<string, any>): unknown[] {
  return (body['messages'] as Record<string, any>[])
    .map((message) => {
      const blocks = typeof message['content'] === 'string' ? [{ type: 'text', text: message['content'] }] : (message['content'] as Record<string, any>[]);
      const kept = blocks.filter((block) => !(block['type'] === 'text' && String(block['text']).trimStart().startsWith('<system-reminder>')));
      return { role: message['role'], content: kept };
    })
    .filter((message) => message.content.length > 0);
}

/** A Responses request's input as the rollout lines Codex writes for it. */
const responsesLines = (body: Record<string, any>): unknown[] =>
  (body['input'] as unknown[]).map((item) => ({ timestamp: '2026-01-01T00:00:00.000Z', type: 'response_item', payload: item }));

interface Measured {
  readonly forkItems: string[];
  readonly originalItems: string[];
  readonly forkTokens: number;
  readonly originalTokens: number;
  readonly forkMessages: Message[];
  readonly originalMessages: Message[];
}

const measure = (forkMessages: Message[], originalMessages: Message[]): Measured => ({
  forkItems: items(forkMessages),
  originalItems: items(originalMessages),
  forkTokens: tokens(forkMessages),
  originalTokens: tokens(originalMessages),
  forkMessages,
  originalMessages,
});

/** What the fork's compaction predicts: the summary, the kept items, the dropped items and tokens. */
async function expectation(original: string) {
  const { loaded, subject, state, view } = await loadCompactedView(original);
  expect(state).not.toBeNull();
  const start = recordedWindowStart(subject);
  const firstKept = loaded.session.messages.findIndex((message) => message.id === state!.first_kept_message_id);
  // pi sends only its last compaction's summary (first), never that of an earlier compaction
  // among the entries it keeps, which our reader places where its entry is; with the fork's
  // compaction last, pi sends none of them.
  const summaries = new Set(loaded.session.format === 'pi' ? loaded.session.recordedCompactions.map((compaction) => loaded.session.messages[compaction.atIndex]?.id) : []);
  const lastSummary = loaded.session.messages[loaded.session.recordedCompactions.at(-1)?.atIndex ?? -1]?.id;
  const dropped = loaded.session.messages.slice(start, firstKept).filter((message) => !summaries.has(message.id) || message.id === lastSummary);
  const kept = view.slice(2).filter((message) => !summaries.has(message.id));
  // The last compaction's summary, sent with the original and not with the fork, is saved too.
  const unsent = view.slice(2).filter((message) => message.id === lastSummary && summaries.has(message.id));
  // The agents send their own recorded compactions in their own shape (Codex the replacement
  // history as items, pi with its wrapping): those are not looked for item by item.
  const recorded = new Set(loaded.session.recordedCompactions.map((compaction) => loaded.session.messages[compaction.atIndex]?.id));
  const droppedSent = dropped.filter((message) => loaded.session.format === 'claude-code' || !recorded.has(message.id));
  return { state: state!, kept: items(kept), dropped: items(droppedSent), droppedTokens: tokens(dropped) + tokens(unsent) };
}

/** The checks every agent's run shares. */
/**
 * `droppedAsSent`: the dropped messages are counted as the agent sent them with the original,
 * not as the file holds them. Codex cuts long tool outputs of the history down before it sends
 * them (so it saves less than the file's sizes say), and sends its own recorded compaction as
 * the items of its replacement history; the check is then that the fork's request is the
 * original's with what comes before the kept messages replaced by the summary.
 */
function checkRuns(expected: Awaited<ReturnType<typeof expectation>>, measured: Measured, options: { droppedAsSent?: boolean } = {}): void {
  const [summary, ...rest] = measured.forkItems;
  const first = measured.forkMessages.find((message) => !injected(message))!;
  const summaryText = first.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  expect(summaryText).toMatch(/^The conversation history before this point was compacted into the following summary:/);
  expect(summaryText).toContain(expected.state.summary);
  expect(rest).toEqual(expected.kept);
  expect(viewViolations(measured.forkMessages)).toEqual([]);
  // The original carries what the fork dropped; the fork carries none of it (unless it is also kept).
  for (const item of expected.dropped) expect(measured.originalItems).toContain(item);
  const alsoKept = new Set([...expected.kept, summary]);
  for (const item of expected.dropped) if (!alsoKept.has(item)) expect(measured.forkItems).not.toContain(item);
  // The summary alone: an agent may merge the next user message into the same request message.
  const summaryTokens = tokens([{ ...first, content: first.content.slice(0, 1) }]);
  // As sent: what the original's request carries before the first kept message.
  const sent = measured.originalMessages.filter((message) => !injected(message));
  const keptFrom = expected.kept.length === 0 ? sent.length : sent.findIndex((message) => items([message]).includes(expected.kept[0]!));
  const droppedAsSent = sent.slice(0, keptFrom < 0 ? sent.length : keptFrom);
  const predicted = (options.droppedAsSent ? tokens(droppedAsSent) : expected.droppedTokens) - summaryTokens;
  const saved = measured.originalTokens - measured.forkTokens;
  expect(Math.abs(saved - predicted)).toBeLessThanOrEqual(0.05 * measured.originalTokens);
  if (predicted > 0) expect(measured.forkTokens).toBeLessThan(measured.originalTokens);
}

async function fork(original: string): Promise<Record<string, any>> {
  const before = sha(original);
  const result = await runCli(['fork', ...FORK_FLAGS, original]);
  expect(result.exitCode, result.stderr).toBe(0);
  const [record] = jsonLines(result.stdout);
  expect(record).toMatchObject({ session: original, status: 'forked' });
  expect(Object.keys(record!)).toEqual(expect.arrayContaining(['session', 'fork', 'session_id', 'resume', 'tokens_before', 'tokens_after']));
  expect(sha(original)).toBe(before);
  return record!;
}

const files = (dir: string, test: (path: string) => boolean): string[] => {
  const out: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'subagents') walk(path);
      } else if (test(path)) out.push(path);
    }
  };
  walk(dir);
  return out.sort();
};

const rel = (path: string) => path.slice(FIXTURES.length + 1);

// ---- Claude Code -----------------------------------------------------------------------------

const CLAUDE_SESSIONS = [
  ...files(join(FIXTURES, 'agents', 'claude-code'), (path) => path.endsWith('.jsonl')),
  ...files(join(FIXTURES, 'real', 'claude-code'), (path) => path.endsWith('.jsonl') && !path.includes('schema-fixture')),
];

describe('Claude Code continues a fork', () => {
  const home = tempDir('claude-home');
  const cwd = tempDir('claude-project');
  const project = join(claudeCode.sessionsDir(home), claudeCode.projectSlug(cwd));

  async function resume(sessionId: string): Promise<Record<string, any>> {
    const provider = await startScriptedProvider({ script: [{ text: REPLY, usage: { input: 100, output: 5 } }], kindOf: (request) => claudeCode.kindOf(request) });
    try {
      // No auto-compaction: the original's whole history must reach the provider as it is.
      const result = await runAgent({ bin: tools.claude, args: ['-p', PROMPT, '--model', claudeCode.model, '--resume', sessionId], env: claudeCode.env(home, provider, { DISABLE_AUTO_COMPACT: '1' }), cwd });
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await provider.close();
    }
    const turns = provider.requests.filter((request) => request.role === 'scripted');
    expect(turns).toHaveLength(1);
    expect(provider.requests.filter((request) => request.role === 'unexpected')).toEqual([]);
    return turns[0]!.body as Record<string, any>;
  }

  it.each(CLAUDE_SESSIONS.map(rel))('%s', async (name) => {
    claudeCode.setup(home);
    mkdirSync(project, { recursive: true });
    const source = join(FIXTURES, name);
    const sessionId = JSON.parse(readFileSync(source, 'utf8').split('\n').find((line) => line.includes('"sessionId"'))!)['sessionId'] as string;
    const original = join(project, `${sessionId}.jsonl`);
    cpSync(source, original);
    const record = await fork(original);
    expect(dirname(record['fork'])).toBe(project);
    expect(basename(record['fork'])).toBe(`${record['session_id']}.jsonl`);
    expect(record['resume']).toMatch(new RegExp(`claude --resume ${record['session_id']}$`));
    const expected = await expectation(original);

    const forkBody = await resume(record['session_id']);
    expect(readFileSync(record['fork'], 'utf8')).toContain(REPLY); // the reply lands in the new file
    const originalBody = await resume(sessionId);
    const forkMessages = await readBack(anthropicLines(forkBody), 'anthropic-messages');
    const originalMessages = await readBack(anthropicLines(originalBody), 'anthropic-messages');
    checkRuns(expected, measure(forkMessages, originalMessages));
  }, 240_000);
});

// ---- Codex -----------------------------------------------------------------------------------

const CODEX_SESSIONS = [
  ...files(join(FIXTURES, 'agents', 'codex'), (path) => path.endsWith('.jsonl')),
  ...files(join(FIXTURES, 'real', 'codex'), (path) => path.endsWith('.jsonl') && !path.includes('session_meta_only') && !path.includes('schema-fixture')),
];

/**
 * Sessions made here from the fixtures, each the first lines of a rollout a real Codex wrote
 * (what it leaves on disk when it stops there: it appends line by line):
 * - `short`: a 0.58 session's first 30 lines (its prompt and first commands);
 * - `instructions-only`: 0.169's first turn up to its prompt, where the fork would drop nothing
 *   but the context Codex injects (no-gain);
 * - `open-call`: the same session stopped while a command ran: its last call has no output.
 */
const TOOLS_RESUME_ABORT = join(FIXTURES, 'agents', 'codex', 'tools-resume-abort', 'sessions', '2026', '11', '25', 'rollout-2026-11-25T03-32-57-01a210c3-81b5-76a2-9146-7e76c78237a7.jsonl');
const SESSION_VIEW = join(FIXTURES, 'real', 'codex', 'codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl');
const firstLines = (path: string, count: number) => `${readFileSync(path, 'utf8').split('\n').slice(0, count).join('\n')}\n`;
const DERIVED: Readonly<Record<string, () => string>> = {
  short: () => firstLines(SESSION_VIEW, 30),
  'instructions-only': () => firstLines(TOOLS_RESUME_ABORT, 12),
  'open-call': () => firstLines(SESSION_VIEW, 276),
};

/** Codex's model at the session's end (its last `turn_context`): what the user resumes with. */
function lastModel(text: string): string | null {
  let model: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes('"turn_context"')) continue;
    const payload = JSON.parse(line)['payload'] as Record<string, unknown>;
    if (typeof payload['model'] === 'string') model = payload['model'];
  }
  return model;
}

describe('Codex continues a fork', () => {
  const home = tempDir('codex-home');
  const cwd = tempDir('codex-project');
  const day = join(codex.sessionsDir(home), '2026', '01', '01');

  async function resume(sessionId: string, providerId: string, model: string | null): Promise<Record<string, any>> {
    const provider = await startScriptedProvider({ script: [{ text: REPLY, usage: { input: 100, output: 5 } }], kindOf: (request) => codex.kindOf(request) });
    try {
      // Codex will not move a thread to another provider on resume: a session recorded with the
      // built-in `openai` provider is resumed with it, pointed at the scripted one, and with the
      // session's own model, whose truncation policy Codex applies to the history it sends.
      codex.setup(home, provider);
      if (providerId === 'openai') writeFileSync(join(home, '.codex', 'config.toml'), `model = "${model ?? codex.model}"\nopenai_base_url = "${provider.url}/v1"\n`);
      const result = await runAgent({ bin: tools.codex, args: ['exec', '--skip-git-repo-check', 'resume', sessionId, PROMPT], env: codex.env(home), cwd });
      expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    } finally {
      await provider.close();
    }
    const turns = provider.requests.filter((request) => request.role === 'scripted');
    expect(turns).toHaveLength(1);
    return turns[0]!.body as Record<string, any>;
  }

  /** Every message of a request (injected context and the prompt included), estimated. */
  const requestTokens = (messages: readonly Message[]) => messages.reduce((total, message) => total + estimateMessageTokens(message), 0);

  /** Forks, resumes fork and original, and holds `fork`'s predicted saving to the one on the wire; what it measured. */
  async function forkAndResume(text: string, label: string, flags: readonly string[] = FORK_FLAGS): Promise<{ status: string; fork: string; predicted: number; saved: number; original: number }> {
    const meta = JSON.parse(text.split('\n')[0]!)['payload'] as Record<string, any>;
    mkdirSync(day, { recursive: true });
    const original = join(day, `rollout-2026-01-01T00-00-00-${meta['id']}.jsonl`);
    writeFileSync(original, text);
    const before = sha(original);
    const listed = () => readdirSync(day).filter((name) => name.endsWith('.jsonl')).sort();
    const filesBefore = listed();
    const result = await runCli(['fork', ...flags, original]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(sha(original)).toBe(before);
    const predicted = record!['tokens_before'] - record!['tokens_after'];
    const providerId = typeof meta['model_provider'] === 'string' ? meta['model_provider'] : 'openai';
    const model = lastModel(text);
    let forkId: string;
    let forkPath: string;
    if (record!['status'] === 'no-gain') {
      // No file: the fork planned (the sidecar is there now) is written here, to show on the wire that it would not have paid.
      expect(listed()).toEqual(filesBefore);
      const { file } = await planFork(original);
      writeFileSync(file.path, file.text);
      forkId = file.sessionId;
      forkPath = file.path;
    } else {
      expect(record).toMatchObject({ session: original, status: 'forked' });
      expect(dirname(record!['fork'])).toBe(day);
      expect(basename(record!['fork'])).toMatch(new RegExp(`^rollout-.*-${record!['session_id']}\\.jsonl$`));
      expect(record!['resume']).toMatch(new RegExp(`codex resume ${record!['session_id']}$`));
      forkId = record!['session_id'];
      forkPath = record!['fork'];
    }
    const expected = await expectation(original);
    const forkBody = await resume(forkId, providerId, model);
    const originalBody = await resume(meta['id'], providerId, model);
    const forkMessages = await readBack(responsesLines(forkBody), 'codex');
    const originalMessages = await readBack(responsesLines(originalBody), 'codex');
    checkRuns(expected, measure(forkMessages, originalMessages), { droppedAsSent: true });
    // What `fork` predicts is what the wire shows, within 5% of the original's request.
    const originalTokens = requestTokens(originalMessages);
    const saved = originalTokens - requestTokens(forkMessages);
    if (process.env['COMPACTOR_FORK_TABLE']) writeFileSync(join(process.env['COMPACTOR_FORK_TABLE'], `${basename(label)}.json`), JSON.stringify({ label, status: record!['status'], predicted, sidecar: expected.state.tokens_before - expected.state.tokens_after, saved, original: originalTokens }));
    expect(Math.abs(saved - predicted), `${label}: predicted ${predicted}, saved ${saved} of ${originalTokens}`).toBeLessThanOrEqual(0.05 * originalTokens);
    return { status: String(record!['status']), fork: forkPath, predicted, saved, original: originalTokens };
  }

  it.each(CODEX_SESSIONS.map(rel))('%s', async (name) => {
    await forkAndResume(readFileSync(join(FIXTURES, name), 'utf8'), name);
  }, 240_000);

  it('a short session: its fork saves what the wire shows', async () => {
    const run = await forkAndResume(DERIVED['short']!(), 'short');
    expect(run.status).toBe('forked');
    expect(run.saved).toBeGreaterThan(0);
  }, 240_000);

  it('a session where only the injected context would go is no-gain: no file, one line, exit 0', async () => {
    const text = DERIVED['instructions-only']!();
    // Without --allow-no-gain: the compaction itself pays (it drops the injected context), the fork would not.
    const flags = FORK_FLAGS.filter((flag) => flag !== '--allow-no-gain');
    const run = await forkAndResume(text, 'instructions-only', flags);
    expect(run.status).toBe('no-gain');
    expect(run.predicted).toBeLessThanOrEqual(0);
    expect(run.saved).toBeLessThanOrEqual(0);
    // The text form: one line saying so.
    const dir = tempDir('codex-no-gain');
    const path = join(dir, 'rollout-2026-01-01T00-00-00-01a210c3-81b5-76a2-9146-7e76c78237a7.jsonl');
    writeFileSync(path, text);
    const result = await runCli(['fork', ...flags.filter((flag) => flag !== '--json'), path]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^not forked .*: no-gain, the fork would not make the request smaller \(/)]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.jsonl'))).toEqual([basename(path)]);
  }, 240_000);

  it('a session ending inside a tool call is forked with the call answered "aborted", as Codex resumes it', async () => {
    const text = DERIVED['open-call']!();
    const lastCall = JSON.parse(text.trim().split('\n').at(-1)!)['payload'] as Record<string, any>;
    expect(lastCall['type']).toBe('function_call');
    const run = await forkAndResume(text, 'open-call');
    expect(run.status).toBe('forked');
    const answered = readFileSync(run.fork, 'utf8')
      .split('\n')
      .filter((line) => line.includes(`"call_id":"${lastCall['call_id']}"`))
      .map((line) => JSON.parse(line)['payload']['type']);
    const answer = readFileSync(run.fork, 'utf8').split('\n').find((line) => line.includes('"function_call_output"') && line.includes(lastCall['call_id']));
    expect(answered).toEqual(['function_call', 'function_call_output']);
    expect(JSON.parse(answer!)['payload']).toEqual({ type: 'function_call_output', call_id: lastCall['call_id'], output: 'aborted' });
  }, 240_000);
});

// ---- pi --------------------------------------------------------------------------------------

const PI_SESSIONS = [...files(join(FIXTURES, 'agents', 'pi'), (path) => path.endsWith('.jsonl')), ...files(join(FIXTURES, 'real', 'pi'), (path) => path.endsWith('.jsonl'))];

describe("pi's own context builder loads a fork", () => {
  /** pi's session manager and message conversion, from the installed package. */
  async function piContext(path: string): Promise<unknown[]> {
    const pi = await import(join(installDir(), 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'index.js'));
    const manager = pi.SessionManager.open(path);
    return pi.convertToLlm(manager.buildSessionContext().messages) as unknown[];
  }

  /** pi's messages as the entries of a pi session, read back by our pi reader (which, as pi-ai does, drops aborted replies). */
  const piLines = (messages: readonly unknown[]): unknown[] => [
    { type: 'session', version: 3, id: 'read-back', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/' },
    ...messages.map((message, index) => ({ type: 'message', id: `m${index}`, parentId: index === 0 ? null : `m${index - 1}`, timestamp: '2026-01-01T00:00:00.000Z', message })),
  ];

  it.each(PI_SESSIONS.map(rel))('%s', async (name) => {
    const dir = tempDir('pi-sessions');
    const original = join(dir, basename(name));
    cpSync(join(FIXTURES, name), original);
    const record = await fork(original);
    expect(dirname(record['fork'])).toBe(dir);
    expect(record['resume']).toContain(`pi --session ${record['fork']}`);
    const expected = await expectation(original);
    const header = JSON.parse(readFileSync(record['fork'], 'utf8').split('\n')[0]!);
    expect(header).toMatchObject({ type: 'session', version: 3, id: record['session_id'], parentSession: original });

    // Loading a file makes pi rewrite an old version in place: it gets a copy.
    const originalCopy = join(tempDir('pi-original'), basename(name));
    cpSync(original, originalCopy);
    const forkMessages = await readBack(piLines(await piContext(record['fork'])), 'pi');
    const originalMessages = await readBack(piLines(await piContext(originalCopy)), 'pi');
    checkRuns(expected, measure(forkMessages, originalMessages));
  }, 120_000);
});
