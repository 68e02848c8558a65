/**
 * Every real session under fixtures/real/ (see fixtures/real/SOURCES.md) read through the built
 * CLI by estimate, inspect, replay and compact --dry-run, and the numbers each file must give.
 * Every expected number was checked by hand against the file; the one-liner that checks it is
 * in the comment beside it.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { FIXTURES, jsonLines, runCli, sessionRecords } from '../helpers/cli.js';

const REAL = join(FIXTURES, 'real');
const path = (name: string) => join(REAL, name);

const CLAUDE_1AF7 = 'claude-code/claude-code-viewer_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl';
const CLAUDE_5C03 = 'claude-code/claude-code-viewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl';
const CLAUDE_FE5E = 'claude-code/claude-code-viewer_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl';
const CLAUDE_SCHEMA = 'claude-code/agent-sessions_claude_small_schema-fixture.jsonl';
/** Beside it, its two subagent transcripts: a walk counts them in its spend, not as sessions. */
const CLAUDE_MAROT = 'claude-code/marot_spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl';
const CLAUDE_TOOL_HEAVY = 'claude-code/marot_spotter/tool_heavy.jsonl';
const CODEX_ROLLOUT = 'codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl';
const CODEX_META = 'codex/codex-session-view_example-session-metadata_session_meta_only.jsonl';
const CODEX_SCHEMA = 'codex/agent-sessions_codex_small_schema-fixture.jsonl';
const CODEX_TUI = 'codex/codemie-ai_codemie-code_rollout-019e1625-tui.jsonl';
const CODEX_DESKTOP = 'codex/codemie-ai_codemie-code_rollout-019e1695-desktop.jsonl';
const CODEX_ABORTED = 'codex/jnarowski_agentcmd_rollout-01997e76-cli0.40-turn-aborted.jsonl';
const PI_BEFORE = 'pi/pi-mono_before-compaction_v1.jsonl';
const PI_LARGE = 'pi/pi-mono_large-session_v1.jsonl';
const PI_V3 = 'pi/agent-sessions_pi_small_v3.jsonl';

const ALL = [
  CLAUDE_SCHEMA,
  CLAUDE_1AF7,
  CLAUDE_5C03,
  CLAUDE_FE5E,
  CLAUDE_MAROT,
  CLAUDE_TOOL_HEAVY,
  CODEX_SCHEMA,
  CODEX_META,
  CODEX_ROLLOUT,
  CODEX_TUI,
  CODEX_DESKTOP,
  CODEX_ABORTED,
  PI_V3,
  PI_BEFORE,
  PI_LARGE,
];

interface Expected {
  format: string;
  messages: number;
  turns: number;
  requests: number;
  input: number;
  output: number;
  recorded: number;
}

/*
 * Claude Code: one request per distinct message.id among main-chain (not sidechain) assistant
 * lines; input = input + cache_creation + cache_read of that response, output = its final count:
 *   jq -s '[.[]|select(.type=="assistant" and (.isSidechain|not) and .message.model!="<synthetic>")]
 *     | group_by(.message.id+.requestId) | map({p:(.[-1].message.usage|.input_tokens
 *     + .cache_creation_input_tokens + .cache_read_input_tokens), o:(map(.message.usage.output_tokens)|max)})
 *     | {requests:length, input:(map(.p)|add), output:(map(.o)|add)}' FILE
 * Counting lines instead would give 15 requests for 1af7 (its 15 assistant lines) and
 * 244,557 input tokens (every line's input summed): the split responses counted again.
 *
 * Codex: one request per distinct token_count (consecutive repeats dropped):
 *   jq -s '[.[]|select(.payload.type=="token_count" and .payload.info!=null)|.payload.info]
 *     | unique_by(.total_token_usage.total_tokens) | {calls:length,
 *     input:(map(.last_token_usage.input_tokens)|add), output:(map(.last_token_usage.output_tokens)|add)}' FILE
 * → 39 calls, 1,099,261 / 22,305, equal to the file's final total_token_usage (input 1,099,261).
 * Summing all 78 non-null events would double it (2,198,522). The same line gives 66 calls,
 * 6,055,836 / 9,118 for the codemie TUI rollout and 132, 7,494,343 / 99,678 for the 0.40 one.
 * Messages = the input items (tool outputs, user and developer messages) + one per call: TUI
 * 102 outputs + 4 messages + 66 calls = 172; 0.40: 123 + 15 + 132 = 270; the Desktop rollout has
 * no token_count (its 18 calls are estimated, and its prompts are only in event_msg lines): 38
 * outputs + 18 calls = 56. The schema fixture's review (lines 51-93) holds three of its
 * `compacted` items: the review's own, not the session's.
 *
 * pi: assistant messages that are not aborted / error; input = input + cacheRead + cacheWrite:
 *   jq -s '[.[]|select(.type=="message" and .message.role=="assistant" and .message.stopReason!="aborted"
 *     and .message.stopReason!="error")|.message.usage] | {requests:length,
 *     input:(map(.input+.cacheRead+.cacheWrite)|add), output:(map(.output)|add)}' FILE
 * Messages = message entries − aborted/error assistants + one summary per compaction
 * (before-compaction: 990 − 19 + 2 = 973; large-session: 914 − 22 = 892). Turns were counted by
 * a separate node one-liner applying the rule "a user message after at least one call opens a turn".
 *
 * marot/spotter (Claude Code 2.1.39) by the same one-liner: 152 requests, 15,121,271 / 38,899;
 * its messages are every user line (192) and one per response (152); tool_heavy.jsonl: 4
 * requests, 105,981 / 212, 13 user lines + 4 responses.
 *
 * Schema fixtures (trimmed values, not real sessions): the Claude one repeats the uuid
 * "[trimmed for fixture]" on 44 lines, so it is read in file order; its five assistant lines
 * with message.id "[trimmed for fixture]" are one response by the dedup rule, and only a-nested-1
 * (input 10, output 5) reports usage; the other call is estimated (24 tokens).
 */
const EXPECTED: Record<string, Expected> = {
  [CLAUDE_1AF7]: { format: 'claude-code', messages: 21, turns: 1, requests: 7, input: 116_010, output: 953, recorded: 0 },
  [CLAUDE_5C03]: { format: 'claude-code', messages: 25, turns: 1, requests: 10, input: 216_399, output: 2_003, recorded: 0 },
  [CLAUDE_FE5E]: { format: 'claude-code', messages: 23, turns: 2, requests: 9, input: 168_358, output: 2_636, recorded: 0 },
  [CLAUDE_SCHEMA]: { format: 'claude-code', messages: 8, turns: 3, requests: 2, input: 34, output: 22, recorded: 2 },
  [CLAUDE_MAROT]: { format: 'claude-code', messages: 344, turns: 5, requests: 152, input: 15_121_271, output: 38_899, recorded: 1 },
  [CLAUDE_TOOL_HEAVY]: { format: 'claude-code', messages: 17, turns: 3, requests: 4, input: 105_981, output: 212, recorded: 0 },
  [CODEX_ROLLOUT]: { format: 'codex', messages: 80, turns: 1, requests: 39, input: 1_099_261, output: 22_305, recorded: 0 },
  [CODEX_META]: { format: 'codex', messages: 0, turns: 0, requests: 0, input: 0, output: 0, recorded: 0 },
  [CODEX_SCHEMA]: { format: 'codex', messages: 21, turns: 5, requests: 8, input: 81_937, output: 164, recorded: 3 },
  [CODEX_TUI]: { format: 'codex', messages: 172, turns: 2, requests: 66, input: 6_055_836, output: 9_118, recorded: 0 },
  [CODEX_DESKTOP]: { format: 'codex', messages: 56, turns: 1, requests: 18, input: 974_766, output: 3_970, recorded: 0 },
  [CODEX_ABORTED]: { format: 'codex', messages: 270, turns: 13, requests: 132, input: 7_494_343, output: 99_678, recorded: 0 },
  [PI_V3]: { format: 'pi', messages: 6, turns: 3, requests: 2, input: 24, output: 14, recorded: 2 },
  [PI_BEFORE]: { format: 'pi', messages: 973, turns: 48, requests: 465, input: 55_998_069, output: 187_847, recorded: 2 },
  [PI_LARGE]: { format: 'pi', messages: 892, turns: 78, requests: 431, input: 46_656_408, output: 83_121, recorded: 0 },
};

type Records = Map<string, Record<string, any>>;
const results: Record<'estimate' | 'inspect' | 'replay' | 'compact', { exitCode: number; records: Records; stderr: string }> = {} as never;

async function runOver(args: string[]) {
  const result = await runCli([...args, '--json', REAL]);
  const records: Records = new Map(sessionRecords(result.stdout).map((record) => [record['session'] as string, record]));
  return { exitCode: result.exitCode, records, stderr: result.stderr };
}

beforeAll(async () => {
  const [estimate, inspect, replay, compact] = await Promise.all([
    runOver(['estimate']),
    runOver(['inspect']),
    runOver(['replay']),
    runOver(['compact', '--strategy', 'truncate', '--dry-run']),
  ]);
  Object.assign(results, { estimate, inspect, replay, compact });
});

describe('every real session file', () => {
  it.each(['estimate', 'inspect', 'replay', 'compact'] as const)('is read without error by %s', (command) => {
    const { exitCode, records, stderr } = results[command];
    expect(exitCode).toBe(0);
    expect(stderr).not.toMatch(/error/);
    expect([...records.keys()].sort()).toEqual(ALL.map(path).sort());
    for (const record of records.values()) expect(record['status']).not.toBe('failed');
  });

  it.each(ALL)('%s: format, messages, turns, requests and totals', (name) => {
    const expected = EXPECTED[name]!;
    const inspect = results.inspect.records.get(path(name))!;
    expect(inspect['format']).toBe(expected.format);
    expect(inspect['messages']).toBe(expected.messages);
    expect(inspect['turns']).toHaveLength(expected.turns);
    expect(inspect['totals']).toMatchObject({ requests: expected.requests, input_tokens: expected.input, output_tokens: expected.output });
    expect(inspect['recorded_compactions']).toHaveLength(expected.recorded);
    // replay's "before" is the same session: the same calls and inputs, not counted twice.
    const replay = results.replay.records.get(path(name))!;
    expect(replay['totals']['requests']).toBe(expected.requests);
    expect(replay['totals']['input_tokens_before']).toBe(expected.input);
    expect(results.estimate.records.get(path(name))!['messages']).toBe(expected.messages);
  });
});

async function callInputs(name: string): Promise<number[]> {
  const session = await readSession(path(name));
  return providerCalls(session.messages, estimateAll(session.messages), session.recordedCompactions).map((call) => call.input);
}

describe('per-call input tokens', () => {
  it('Claude Code: one call per response, in chain order, cache parts included', async () => {
    // jq -s '[.[]|select(.type=="assistant" and (.isSidechain|not))] | reduce .[] as $l ({s:{},o:[]};
    //   if .s[$l.message.id] then . else .s[$l.message.id]=true | .o+=[$l.message.usage|.input_tokens
    //   + .cache_creation_input_tokens + .cache_read_input_tokens] end) | .o' FILE
    expect(await callInputs(CLAUDE_1AF7)).toEqual([15_553, 15_860, 16_296, 16_593, 16_962, 17_309, 17_437]);
    expect(await callInputs(CLAUDE_5C03)).toEqual([18_768, 19_026, 19_449, 20_350, 21_085, 21_313, 21_579, 22_895, 25_854, 26_080]);
    expect(await callInputs(CLAUDE_FE5E)).toEqual([16_208, 16_447, 16_750, 18_300, 18_575, 19_854, 20_127, 20_545, 21_552]);
  });

  it('Claude Code: the final output count of a split response, not a partial one', async () => {
    const session = await readSession(path(CLAUDE_1AF7));
    const calls = session.messages.filter((message) => message.role === 'assistant');
    // msg_01TqDZoU6FcpxB4u2AmpgWfZ: lines 3-4 report output 8 then 322 (no stop_reason line);
    // msg_018mu4atNCkxSiLt7VVQquTL: lines 6-10 report 30, 30, 30, 30, 285 and hold five tool_use blocks.
    expect(calls[0]!.usage).toEqual({ input: 3, cacheWrite: 10_816, cacheRead: 4_734, output: 322 });
    // The merged message keeps the uuid of the response's first line (line 3), so a sidecar points into the file.
    expect(calls[0]!.id).toBe('b96a37ed-bbf2-4ac3-b4ab-e286f7facb3a');
    expect(calls[1]!.id).toBe('a1bdced2-6cf5-4c3a-b700-d5e13eb64d9d');
    expect(calls[1]!.usage?.output).toBe(285);
    expect(calls[1]!.content.filter((block) => block.type === 'tool_request')).toHaveLength(5);
  });

  it('Codex: last_token_usage of each distinct token_count, the cached part billed as cache reads', async () => {
    // jq -s '[.[]|select(.payload.type=="token_count" and .payload.info!=null)|.payload.info]
    //   | unique_by(.total_token_usage.total_tokens) | map(.last_token_usage.input_tokens)' FILE
    const inputs = await callInputs(CODEX_ROLLOUT);
    expect(inputs.slice(0, 6)).toEqual([10_128, 10_334, 11_862, 12_496, 13_982, 15_645]);
    expect(inputs.at(-1)).toBe(52_645);
    const session = await readSession(path(CODEX_ROLLOUT));
    expect(session.model).toBe('gpt-5.1-codex');
    // line 23: last_token_usage {input 11862, cached 10240, output 109}: the prompt stays 11862.
    expect(session.messages.filter((message) => message.usage)[2]!.usage).toEqual({ input: 1_622, output: 109, cacheRead: 10_240, cacheWrite: 0 });
  });

  it('pi: aborted and errored calls are left out, zero totalTokens do not matter', async () => {
    // jq -c 'select(.type=="message" and .message.role=="assistant" and .message.stopReason!="aborted"
    //   and .message.stopReason!="error") | .message.usage | .input+.cacheRead+.cacheWrite' FILE | head -4
    // (large-session line 3 is an aborted call with all-zero usage: not a call here.)
    expect((await callInputs(PI_LARGE)).slice(0, 4)).toEqual([1_687, 11_209, 16_735, 19_620]);
    expect((await callInputs(PI_BEFORE)).slice(0, 4)).toEqual([2_775, 33_638, 41_232, 43_845]);
  });
});

describe('turn baselines', () => {
  it('pi before-compaction: the baseline drops where pi compacted (turns 12 and 26)', () => {
    const turns = results.inspect.records.get(path(PI_BEFORE))!['turns'] as Record<string, number>[];
    // line 364 (first call after the compaction at line 360): input 10 + cacheWrite 25729;
    // line 631 (after line 629): input 10 + cacheWrite 28607.
    expect(turns[11]!['baseline_input_tokens']).toBe(25_739);
    expect(turns[25]!['baseline_input_tokens']).toBe(28_617);
    expect(turns[10]!['baseline_input_tokens']).toBe(153_516);
  });

  it('Codex: the injected environment context and the prompt are one turn', () => {
    const turns = results.inspect.records.get(path(CODEX_ROLLOUT))!['turns'] as Record<string, number>[];
    expect(turns).toMatchObject([{ turn: 1, baseline_input_tokens: 10_128, requests: 39, input_tokens: 1_099_261, output_tokens: 22_305, estimated: false }]);
  });

  it('Claude Code fe5e1c67: the second turn starts at the second prompt', () => {
    const turns = results.inspect.records.get(path(CLAUDE_FE5E))!['turns'] as Record<string, number>[];
    expect(turns.map((turn) => [turn['requests'], turn['baseline_input_tokens'], turn['input_tokens']])).toEqual([
      [7, 16_208, 126_261],
      [2, 20_545, 42_097],
    ]);
  });
});
