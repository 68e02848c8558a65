/**
 * `inspect` reads lean: growth attribution from facts taken while reading (growth/facts.ts)
 * over slim messages gives exactly what it gives over the full messages, on every real and
 * format fixture, with the heuristic and with an exact tokenizer.
 */
import fg from 'fast-glob';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GrowthReport } from '../../src/growth/attribution.js';
import { analyzeGrowth, GrowthFacts, growthFromFacts } from '../../src/growth/attribution.js';
import { groupTurns } from '../../src/growth/turns.js';
import type { LoadedSession } from '../../src/read/index.js';
import { loadSession } from '../../src/read/index.js';
import type { AnyMessage } from '../../src/session/model.js';
import { isSlim } from '../../src/session/model.js';
import type { TextCounter } from '../../src/tokens/estimate.js';
import { heuristicCounter } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { loadTextCounter } from '../../src/tokens/tokenizers.js';
import { FIXTURES, ROOT } from '../helpers/cli.js';

const FILES = fg.sync(['bug.jsonl', 'real/**/*.jsonl', 'audit/*.jsonl', 'formats/*.jsonl'], { cwd: FIXTURES, absolute: true }).sort();


function growthOf(loaded: LoadedSession<AnyMessage>, analyze: (calls: ReturnType<typeof providerCalls>, turns: ReturnType<typeof groupTurns>) => GrowthReport) {
  const { messages, recordedCompactions } = loaded.session;
  const calls = providerCalls(messages, loaded.tokens, recordedCompactions);
  return analyze(calls, groupTurns(messages, calls));
}

/** The attribution both ways: full messages, and slim messages plus the facts taken while reading. */
async function bothWays(path: string, count: TextCounter = heuristicCounter) {
  const full = await loadSession(path, { format: 'auto' });
  const lean = await loadSession(path, { format: 'auto', messages: 'lean' }, () => new GrowthFacts(count));
  return {
    lean,
    fromFull: growthOf(full, (calls, turns) => analyzeGrowth(full.session.messages, turns, calls, count)),
    fromLean: growthOf(lean, (calls, turns) => growthFromFacts(lean.session.messages, lean.observer, turns, calls)),
  };
}

describe('inspect on slim messages', () => {
  it('finds the fixtures', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(20);
  });

  for (const path of FILES) {
    it(`attributes growth as the full read does: ${relative(ROOT, path)}`, async () => {
      const { lean, fromFull, fromLean } = await bothWays(path);
      // Growth facts read no message id, so even a file with repeated uuids (the trimmed schema
      // fixture repeats one 45 times) stays lean: its messages renamed after the facts saw them.
      expect(lean.session.messages.every(isSlim)).toBe(true);
      expect(fromLean).toEqual(fromFull);
    });
  }

  it('keeps the heaviest outputs as sorting them all and taking the first does, ties in session order', async () => {
    let tied = 0;
    for (const path of FILES) {
      const lean = await loadSession(path, { format: 'auto', messages: 'lean' }, () => new GrowthFacts(heuristicCounter));
      const all = growthOf(lean, (calls, turns) => growthFromFacts(lean.session.messages, lean.observer, turns, calls));
      const { outputs } = all;
      tied += outputs.filter((output, i) => i > 0 && output.carried === outputs[i - 1]!.carried && output.tokens === outputs[i - 1]!.tokens).length;
      for (const kept of [1, 2, 5, 40]) {
        const some = growthOf(lean, (calls, turns) => growthFromFacts(lean.session.messages, lean.observer, turns, calls, kept));
        expect(some).toEqual({ ...all, outputs: outputs.slice(0, kept) });
      }
    }
    // Ties are where a bounded selection can differ from a stable sort.
    expect(tied).toBeGreaterThan(10);
  });

  it('keeps what only the text had: block sizes, and targets slim messages drop', async () => {
    const bug = await bothWays(`${FIXTURES}/bug.jsonl`);
    // README "inspect": turn 2 added 36,383 tokens, 90% of it read_file output; turn 3 18,809.
    expect(bug.fromLean.turns.slice(1, 3).map((turn) => turn.total)).toEqual([36_383, 18_809]);
    expect(bug.fromLean.turns[1]!.toolResults[0]!.tool).toBe('read_file');
    expect(Math.round((bug.fromLean.turns[1]!.toolResults[0]!.tokens / 36_383) * 100)).toBe(90);
    expect(bug.fromLean.outputs[0]).toEqual({
      turn: 2, messageId: 'msg-0023', tool: 'read_file', target: 'crates/coop-core/src/provider.rs', tokens: 8001, callsAfter: 47, carried: 376_047,
    });
    expect(bug.fromLean.repeatedReads[0]).toEqual({ path: 'crates/coop-gateway/tests/compaction.rs', reads: 3, tokens: 8644, turns: [2, 7, 9] });
    // Slim messages alone (no facts) cannot be sized, their text is gone: the type checker refuses
    // them (a slim tool result has no output; test/read/slim-types.test.ts), so no run is tried.

    // Codex's shell command is an array of arguments, which slim messages do not keep.
    const codex = await bothWays(`${FIXTURES}/real/codex/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl`);
    expect(codex.fromLean.outputs[0]).toMatchObject({ tool: 'shell', target: "bash -lc sed -n '1,220p' components/utility/global-state.tsx", tokens: 1964 });

    const pi = await bothWays(`${FIXTURES}/real/pi/pi-mono_before-compaction_v1.jsonl`);
    expect(pi.fromLean.repeatedReads[0]).toMatchObject({
      path: '/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/modes/interactive/interactive-mode.ts',
      reads: 33,
      tokens: 31_112,
    });
  });

  it('gives the same attribution with an exact tokenizer', async () => {
    const count = await loadTextCounter('o200k');
    for (const path of [`${FIXTURES}/bug.jsonl`, `${FIXTURES}/real/pi/pi-mono_large-session_v1.jsonl`]) {
      const { fromFull, fromLean } = await bothWays(path, count);
      expect(fromLean).toEqual(fromFull);
      expect(fromLean).not.toEqual((await bothWays(path)).fromLean);
    }
  });
});
