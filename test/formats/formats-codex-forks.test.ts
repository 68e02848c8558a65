/**
 * Codex rollouts as different versions write them, on files the real Codex wrote
 * (fixtures/agents/codex/, tools/agents): where a call's usage lands (0.142 writes it after the
 * call's tool results, with no per-response record; 0.169 writes a record with the response's
 * id), and forks (0.142's `codex fork` copies the parent's rollout into the fork's, restamped;
 * 0.169's `codex exec fork` refers to it). The expectations come from each fixture's manifest
 * (what the scripted provider billed) and from the files' lines counted here by hand.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { isProviderCall } from '../../src/session/model.js';
import type { AgentFixture, ManifestCall } from '../helpers/agent-fixtures.js';
import { agentFixtures, callUsage, expectedSpend } from '../helpers/agent-fixtures.js';
import { FIXTURES, jsonLines, runCli } from '../helpers/cli.js';

const fixture = (name: string): AgentFixture => agentFixtures().find((each) => each.name === name)!;
const TUI_FORK = fixture('codex/tui-fork-0.142');
const EXEC_FORK = fixture('codex/exec-fork');

/** A fixture's rollouts: the parent (no `forked_from_id`) and the fork. */
function rollouts({ dir, manifest }: AgentFixture): { parent: string; fork: string } {
  const paths = manifest.files.filter((file) => file.path.endsWith('.jsonl')).map((file) => join(dir, file.path));
  const forked = (path: string) => Boolean(JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!).payload.forked_from_id);
  return { parent: paths.find((path) => !forked(path))!, fork: paths.find(forked)! };
}

const lines = (path: string): any[] => jsonLines(readFileSync(path, 'utf8'));

/** The calls a manifest bills in a file, in order. */
const billedIn = ({ dir, manifest }: AgentFixture, path: string): ManifestCall[] => manifest.calls.filter((call) => call.usage && join(dir, call.billedIn ?? '') === path);

/** The manifest's usage of a call in the reader's terms. */
function asUsage(call: ManifestCall) {
  const usage = callUsage(call)!;
  return { input: usage.input, output: usage.output, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite };
}

/**
 * Per turn (`task_started` to the next), the input of each new running total of the
 * `token_count` events, summed: the prompts the provider billed, turn by turn.
 */
function billedPromptsPerTurn(path: string, from = 0): number[] {
  const turns: number[] = [];
  let total = '';
  for (const line of lines(path).slice(from)) {
    const payload = line.payload ?? {};
    if (line.type === 'event_msg' && payload.type === 'task_started') turns.push(0);
    const info = line.type === 'event_msg' && payload.type === 'token_count' ? payload.info : null;
    if (!info?.last_token_usage || JSON.stringify(info.total_token_usage) === total) continue;
    total = JSON.stringify(info.total_token_usage);
    turns[turns.length - 1]! += info.last_token_usage.input_tokens;
  }
  return turns;
}

async function inspectJson(path: string): Promise<{ record: Record<string, any>; stderr: string }> {
  const result = await runCli(['inspect', '--json', path]);
  expect(result.exitCode, result.stderr).toBe(0);
  return { record: jsonLines(result.stdout)[0]!, stderr: result.stderr };
}

describe("each billed call's usage goes to the call it measured", () => {
  it.each([
    ['0.142: a call\'s token_count after its tool results, no record', TUI_FORK],
    ['0.169: a token_usage_record per response', EXEC_FORK],
  ])('%s', async (_name, agentFixture) => {
    const { parent } = rollouts(agentFixture);
    const session = await readSession(parent);
    const calls = session.messages.filter(isProviderCall);
    const billed = billedIn(agentFixture, parent);
    // Every billed call is a context call with its own usage: none estimated, none unmatched.
    expect(calls.map((message) => message.usage)).toEqual(billed.map(asUsage));
    expect(session.offContext).toEqual([]);
    expect(session.warnings).toEqual([]);
    // And each usage sits on the reply it measured: that reply's text and tool calls.
    calls.forEach((message, index) => {
      const step = agentFixture.manifest.script[billed[index]!.step!]!;
      const requests = message.content.flatMap((block) => (block.type === 'tool_request' ? [block.arguments] : []));
      expect(requests, billed[index]!.label ?? '').toEqual((step.toolCalls ?? []).map((tool) => tool.input));
      expect(message.content.find((block) => block.type === 'text')).toEqual({ type: 'text', text: step.text });
    });
    // Per turn, the input is what was billed.
    const { record, stderr } = await inspectJson(parent);
    expect(stderr).toBe('');
    expect(record['turns'].map((turn: Record<string, unknown>) => [turn['input_tokens'], turn['estimated']])).toEqual(billedPromptsPerTurn(parent).map((prompts) => [prompts, false]));
  });
});

describe('a fork is billed for its own calls only', () => {
  it("0.142: `codex fork` copies the parent's rollout, restamped: its calls are context here, billed in the parent", async () => {
    const { parent, fork } = rollouts(TUI_FORK);
    const parentId = lines(parent)[0].payload.id;
    // The shape: the fork's session_meta, then the parent's, then the parent's lines.
    expect(lines(fork).filter((line) => line.type === 'session_meta').map((line) => line.payload.id)).toEqual([lines(fork)[0].payload.id, parentId]);
    const session = await readSession(fork);
    const calls = session.messages.filter(isProviderCall);
    const copied = TUI_FORK.manifest.calls.filter((call) => call.copiedTo.some((path) => join(TUI_FORK.dir, path) === fork));
    const own = billedIn(TUI_FORK, fork);
    expect(calls.map((message) => [message.usage, message.copiedFrom])).toEqual([...copied.map((call) => [asUsage(call), parentId]), ...own.map((call) => [asUsage(call), undefined])]);
    expect(session.offContext).toEqual([]);
    expect(session.warnings).toEqual([]);

    const { record, stderr } = await inspectJson(fork);
    expect(stderr).toBe('');
    const { perFile } = expectedSpend(TUI_FORK.manifest);
    const expected = perFile[fork.slice(TUI_FORK.dir.length + 1)]!;
    expect(record['spend']).toMatchObject({ requests: expected.requests, input_tokens: expected.prompt, cache_read_input_tokens: expected.cacheRead, output_tokens: expected.output });
    expect(record['context']['excluded_from_spend']).toEqual([expect.objectContaining({ cause: 'copied', requests: copied.length, billed_in: [parentId] })]);
    // The context is the parent's turns and the fork's, every call's prompt as billed.
    expect(record['turns'].map((turn: Record<string, unknown>) => turn['input_tokens'])).toEqual(billedPromptsPerTurn(fork, 1));
  });

  it("0.169: `codex exec fork` refers to the parent's history and copies none of it", async () => {
    const { fork } = rollouts(EXEC_FORK);
    expect(lines(fork).filter((line) => line.type === 'session_meta')).toHaveLength(1);
    expect(lines(fork)[0].payload.history_base).toMatchObject({ thread_id: lines(fork)[0].payload.forked_from_id });
    const session = await readSession(fork);
    expect(session.messages.filter(isProviderCall).map((message) => [message.usage, message.copiedFrom])).toEqual(billedIn(EXEC_FORK, fork).map((call) => [asUsage(call), undefined]));
    const { record } = await inspectJson(fork);
    const expected = expectedSpend(EXEC_FORK.manifest).perFile[fork.slice(EXEC_FORK.dir.length + 1)]!;
    expect(record['spend']).toMatchObject({ requests: expected.requests, input_tokens: expected.prompt, output_tokens: expected.output });
  });

  it('a rollout whose later session_meta names forked_from_id, its first none (the 0.146 schema fixture, 7 of them), copies nothing', async () => {
    const path = join(FIXTURES, 'real/codex/agent-sessions_codex_small_schema-fixture.jsonl');
    const metas = lines(path).filter((line) => line.type === 'session_meta');
    expect(metas).toHaveLength(7);
    expect(metas[0].payload.forked_from_id).toBeUndefined();
    expect(metas.some((meta) => meta.payload.forked_from_id)).toBe(true);
    const session = await readSession(path);
    expect(session.messages.filter((message) => message.copiedFrom !== undefined)).toEqual([]);
    // Its one token_count with usage (16,341 input, 3,584 of it cached) is its own call.
    expect(session.messages.flatMap((message) => (message.usage ? [message.usage] : []))).toEqual([{ input: 12_757, output: 81, cacheRead: 3_584, cacheWrite: 0 }]);
  });
});

describe('the copy ends where the fork writes its own lines', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compactor-codex-fork-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A fork of the 0.142 fork, written as Codex writes one: its session_meta, then the fork's
   * whole rollout restamped at one instant (its own session_meta, the parent's, everything),
   * then `own`, the lines of its own first turn (the fork's last turn again), `ownAfterMs` later.
   */
  async function forkOfFork(ownAfterMs: number): Promise<{ path: string; forkId: string }> {
    const { fork } = rollouts(TUI_FORK);
    const copied = lines(fork);
    const forkId = copied[0].payload.id;
    const at = new Date('2026-12-08T10:00:00.000Z').getTime();
    const stamp = (line: any, ms: number) => ({ ...line, timestamp: new Date(at + ms).toISOString() });
    const turnStarts = copied.flatMap((line: any, index: number) => (line.payload?.type === 'task_started' ? [index] : []));
    const ownTurn = copied.slice(turnStarts.at(-1));
    const own = { ...copied[0], payload: { ...copied[0].payload, id: '01a30000-0000-7000-8000-000000000001', forked_from_id: forkId } };
    const text = [stamp(own, 0), ...copied.map((line: any, index: number) => stamp(line, 1 + Math.floor(index / 10))), ...ownTurn.map((line: any) => stamp(line, ownAfterMs))]
      .map((line) => JSON.stringify(line))
      .join('\n');
    const path = join(dir, `fork-of-fork-${ownAfterMs}.jsonl`);
    await writeFile(path, `${text}\n`);
    return { path, forkId };
  }

  it("a fork of a fork copies its parent's copy too (three session_metas): all six calls are copies, its own turn is its spend", async () => {
    const { path, forkId } = await forkOfFork(4_000);
    const session = await readSession(path);
    const calls = session.messages.filter(isProviderCall);
    expect(calls.map((message) => message.copiedFrom)).toEqual([forkId, forkId, forkId, forkId, forkId, forkId, undefined, undefined]);
    expect(session.offContext).toEqual([]);
  });

  it('lines written within a second of the copy are still the copy; a turn after a pause is the fork\'s own', async () => {
    // The own turn stamped 500 ms after the copy is taken for more of it: a copy waits on
    // nothing, a fork's own turn waits on its user and its model call.
    const quick = await readSession((await forkOfFork(500)).path);
    expect(quick.messages.filter(isProviderCall).filter((message) => message.copiedFrom === undefined)).toEqual([]);
    const later = await readSession((await forkOfFork(1_500)).path);
    expect(later.messages.filter(isProviderCall).filter((message) => message.copiedFrom === undefined)).toHaveLength(2);
  });
});
