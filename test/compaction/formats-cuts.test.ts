/**
 * Cuts on every fixture, for many keep budgets and both cut rules: a cut never separates a tool
 * call from its result, and a sidecar written by `compact --force` names a message id that is
 * in the session file itself (the format's own id, or `L<line>` for a line of the file).
 */
import { readFile } from 'node:fs/promises';
import { basename, relative } from 'node:path';
import fc from 'fast-check';
import fg from 'fast-glob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCompaction } from '../../src/compaction/compact.js';
import { findCutPoint } from '../../src/compaction/cut-point.js';
import type { CompactionPolicy, CutRule } from '../../src/compaction/policy.js';
import { CUT_RULES, DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { readSession } from '../../src/formats/index.js';
import type { Message, Session } from '../../src/session/model.js';
import { windowStartAt } from '../../src/session/model.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

const KEEPS = [0, 500, 2_000, 5_000, 20_000, 50_000];

interface Loaded {
  readonly name: string;
  readonly session: Session;
  readonly tokens: number[];
}

let fixtures: Loaded[] = [];

beforeAll(async () => {
  const files = (await fg(['**/*.jsonl', 'real/gemini-cli/*.json', 'formats/*.json'], { cwd: FIXTURES, absolute: true })).sort();
  fixtures = await Promise.all(
    files.map(async (file) => {
      const session = await readSession(file);
      return { name: relative(FIXTURES, file), session, tokens: estimateAll(session.messages) };
    }),
  );
});

/** Where each tool request and each result sits; a result answers the latest request with its id. */
function toolPairs(messages: readonly Message[]): [request: number, result: number][] {
  const open = new Map<string, number>();
  const pairs: [number, number][] = [];
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_request') open.set(block.id, index);
      if (block.type === 'tool_result' && open.has(block.tool_request_id)) {
        pairs.push([open.get(block.tool_request_id)!, index]);
        open.delete(block.tool_request_id);
      }
    }
  });
  return pairs;
}

/** No pair with its request summarized (before the cut) and its result kept, or the reverse. */
function separatedPairs(messages: readonly Message[], start: number, cut: number): [number, number][] {
  return toolPairs(messages).filter(([request, result]) => request >= start && (request < cut) !== (result < cut));
}

describe('no cut separates a tool call from its result', () => {
  it('holds the fixtures this test needs', () => {
    // 17 real JSONL files (marot/spotter's session with its 2 subagent transcripts, each read as a
    // session here) and 2 Gemini CLI chat files, 19 hand-written format files (5 of them a Claude
    // Code project folder, 1 a Gemini CLI chat file), bug.jsonl, 2 audit fixtures, 16 written by
    // the real agents
    expect(fixtures.map((fixture) => fixture.name)).toHaveLength(57);
    const pairs = fixtures.reduce((total, { session }) => total + toolPairs(session.messages).length, 0);
    expect(pairs).toBeGreaterThan(900);
  });

  it.each(CUT_RULES)('for every fixture and the listed keep budgets (%s)', (cutRule) => {
    let cuts = 0;
    for (const { name, session, tokens } of fixtures) {
      for (const keepRecentTokens of KEEPS) {
        for (const force of [false, true]) {
          const start = windowStartAt(session.recordedCompactions, session.messages.length);
          const cut = findCutPoint(session.messages, tokens, { keepRecentTokens, cutRule, force }, { start, end: session.messages.length });
          if (cut.kind === 'none') continue;
          cuts++;
          expect(cut.index, `${name} keep ${keepRecentTokens}`).toBeGreaterThan(start);
          expect(separatedPairs(session.messages, start, cut.index), `${name} keep ${keepRecentTokens} force ${force}`).toEqual([]);
        }
      }
    }
    expect(cuts).toBeGreaterThan(100);
  });

  it('for any keep budget and any prefix of any fixture (as replay cuts them)', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 17 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.nat({ max: 200_000 }),
        fc.constantFrom<CutRule>(...CUT_RULES),
        fc.boolean(),
        (which, share, keepRecentTokens, cutRule, force) => {
          const { session, tokens } = fixtures[which % fixtures.length]!;
          const end = Math.round(session.messages.length * share);
          const cut = findCutPoint(session.messages, tokens, { keepRecentTokens, cutRule, force }, { start: 0, end });
          if (cut.kind === 'none') return;
          // Within the prefix: a request kept or summarized with its result, even one still to come.
          const separated = toolPairs(session.messages).filter(([request, result]) => request < end && (request < cut.index) !== (result < cut.index));
          expect(separated).toEqual([]);
        },
      ),
      { numRuns: 400, seed: 4 },
    );
  });

  it('catches a separating cut: the check itself can fail', () => {
    const codex = fixtures.find((fixture) => fixture.name.endsWith('agent-sessions_codex_small_schema-fixture.jsonl'))!;
    // call-1 is requested in message 1 and answered in message 6: a cut at 5 would split it.
    expect(separatedPairs(codex.session.messages, 0, 5).length).toBeGreaterThan(0);
    const cut = findCutPoint(codex.session.messages, codex.tokens, { keepRecentTokens: 0, cutRule: 'tool-safe' }, { start: 0, end: 7 });
    expect(cut).toMatchObject({ kind: 'cut', index: 1 });
  });

  it('starts after the agent’s own last compaction', () => {
    const pi = fixtures.find((fixture) => fixture.name.endsWith('pi-mono_before-compaction_v1.jsonl'))!;
    const policy: CompactionPolicy = { ...DEFAULT_POLICY, force: true, keepRecentTokens: 2_000 };
    const plan = planCompaction(
      { sessionName: 'x', messages: pi.session.messages, tokens: pi.tokens, previous: null, recorded: pi.session.recordedCompactions },
      policy,
    );
    expect(plan.kind).toBe('compact');
    if (plan.kind !== 'compact') return;
    // the second compaction (line 629) keeps from entry index 551 = line 552
    expect(pi.session.messages[plan.start]!.id).toBe('L552');
    expect(plan.cut.index).toBeGreaterThan(plan.start);
  });
});

/** True when the id names something in the file: its own id, or `L<line>` (`-…` for a part of it). */
function idIsInFile(id: string, text: string): boolean {
  const line = /^L(\d+)(?:-.+)?$/.exec(id);
  if (line) return Number(line[1]) >= 1 && Number(line[1]) <= text.split('\n').length;
  return text.includes(JSON.stringify(id));
}

describe('a sidecar names a message of its session', () => {
  const names = [
    'real/claude-code/claude-code-viewer_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl',
    'real/claude-code/claude-code-viewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
    'real/claude-code/claude-code-viewer_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl',
    'real/claude-code/agent-sessions_claude_small_schema-fixture.jsonl',
    'real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl',
    'real/codex/agent-sessions_codex_small_schema-fixture.jsonl',
    'real/pi/pi-mono_before-compaction_v1.jsonl',
    'real/pi/pi-mono_large-session_v1.jsonl',
    'real/pi/agent-sessions_pi_small_v3.jsonl',
    'formats/openai-chat.jsonl',
    'formats/anthropic-messages.jsonl',
    'formats/claude-code.jsonl',
    'formats/codex.jsonl',
    'formats/pi-branch.jsonl',
    'formats/tracing.jsonl',
    'formats/tracing-flat.jsonl',
  ];

  const scratches: { cleanup: () => Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(scratches.map((scratch) => scratch.cleanup()));
  });

  /** One session per format: their provider view is rebuilt from file + sidecar (one process each). */
  const REBUILT = new Set(['claude-code.jsonl', 'codex.jsonl', 'pi-branch.jsonl', 'openai-chat.jsonl', 'anthropic-messages.jsonl', 'tracing.jsonl', 'pi-mono_before-compaction_v1.jsonl']);

  // keep 0 cuts every session; keep 500 cuts the Claude Code fixture at its earliest valid cut
  // (forced: after its compact boundary only the summary and one reply, 42 tokens, remain). Small
  // sessions gain little or nothing: --allow-no-gain writes them all, as this is about their ids.
  it.each([
    ['conservative', '0', [], true],
    ['tool-safe', '500', [], false],
  ] as const)('compact --force --cut-rule %s --keep-recent %s: every sidecar points into its own file', async (cutRule, keep, fitting, rebuild) => {
    const scratch = await scratchCopy(...names);
    scratches.push(scratch);
    const result = await runCli(['compact', '--json', '--force', '--allow-no-gain', '--keep-recent', keep, '--cut-rule', cutRule, scratch.dir]);
    expect(result.stderr).not.toMatch(/error|stale/);
    expect(result.exitCode).toBe(0);
    const records = jsonLines(result.stdout);
    expect(records).toHaveLength(names.length);
    for (const record of records) {
      if ((fitting as readonly string[]).includes(basename(record['session']))) {
        expect(record['status']).toBe('skipped');
        continue;
      }
      expect(record['status'], record['session']).toBe('compacted');
      const text = await readFile(record['session'], 'utf8');
      const sidecar = JSON.parse(await readFile(record['sidecar'], 'utf8'));
      expect(sidecar['session']).toBe(basename(record['session']));
      expect(idIsInFile(sidecar['first_kept_message_id'], text), `${record['session']}: ${sidecar['first_kept_message_id']}`).toBe(true);
      if (!rebuild || !REBUILT.has(basename(record['session']))) continue;
      // and the provider view can be rebuilt from the file plus the sidecar
      const context = await runCli(['context', record['session']]);
      expect(context.stderr).not.toMatch(/error/);
      expect(context.exitCode, `context ${record['session']}`).toBe(0);
      const view = jsonLines(context.stdout);
      expect(view[0]!['id']).toBe('compaction-summary');
      expect(view[2]!['id']).toBe(sidecar['first_kept_message_id']);
    }
  });

  it('recognizes ids that are not in the file', () => {
    expect(idIsInFile('L999', 'a\nb\n')).toBe(false);
    expect(idIsInFile('e8', '{"id":"e9"}')).toBe(false);
    expect(idIsInFile('L2-turn', 'a\nb\n')).toBe(true);
  });
});
