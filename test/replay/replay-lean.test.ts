/**
 * `replay` with a metadata-only strategy (truncate) reads lean: slim messages, estimates taken
 * while reading. The replay over slim messages must be the full read's, compaction for
 * compaction, on every real and format fixture, under policies small enough to compact often.
 * (The states' relevance-filter notes, `dropped_outputs`, are not compared: replay reports none.)
 * The report `replay` prints from (replayReport, which keeps no state) is the result without its
 * states, either way.
 */
import fg from 'fast-glob';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompactionState } from '../../src/compaction/state.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { customPolicy, presetPolicy } from '../../src/replay/presets.js';
import type { ReplayPolicy } from '../../src/replay/presets.js';
import { replayResultJson } from '../../src/replay/json.js';
import type { ReplayInput } from '../../src/replay/simulate.js';
import { replayReport, replaySession, withoutStates } from '../../src/replay/simulate.js';
import { isSlim } from '../../src/session/model.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { FIXTURES, ROOT } from '../helpers/cli.js';
import { loadHeld } from '../helpers/held-read.js';

const FILES = fg.sync(['bug.jsonl', 'real/**/*.jsonl', 'audit/*.jsonl', 'formats/*.jsonl'], { cwd: FIXTURES, absolute: true }).sort();

/** Small windows, so even the short fixtures compact. */
const POLICIES: readonly ReplayPolicy[] = [
  customPolicy({ ...DEFAULT_POLICY, contextLimit: 6_000, keepRecentTokens: 1_000, trigger: { kind: 'reserve', tokens: 2_000 } }),
  presetPolicy('codex', 8_000),
  presetPolicy('opal', 5_000),
];

/** What a state says that replay depends on (its hash is never read, its dropped outputs never shown). */
function stateFacts(state: CompactionState) {
  return {
    summary: state.summary,
    turn_prefix_summary: state.turn_prefix_summary,
    first_kept_message_id: state.first_kept_message_id,
    tokens_before: state.tokens_before,
    tokens_after: state.tokens_after,
    summary_tokens: state.summary_tokens,
    read_files: state.read_files,
    modified_files: state.modified_files,
    details: state.details,
  };
}

async function replayBothWays(path: string, policy: ReplayPolicy) {
  const strategy = truncateStrategy;
  const run = async (read: 'full' | 'lean') => {
    const options = { format: 'auto' } as const;
    let input: ReplayInput;
    if (read === 'full') {
      const loaded = await loadHeld(path, { ...options, messages: 'full' }, false);
      input = { sessionName: loaded.subject.sessionName, tokens: loaded.tokens, policy, strategy, recorded: loaded.session.recordedCompactions, messages: loaded.session.messages };
    } else {
      const loaded = await loadHeld(path, { ...options, messages: 'lean' }, false);
      input = { sessionName: loaded.subject.sessionName, tokens: loaded.tokens, policy, strategy, recorded: loaded.session.recordedCompactions, read: 'lean', messages: loaded.session.messages };
    }
    const result = await replaySession(input);
    // The report that keeps no state is the full result without its states, field for field.
    expect(await replayReport(input)).toEqual(withoutStates(result));
    const states = result.turns.flatMap((turn) => turn.compactions.map((event) => stateFacts(event.state)));
    return { slim: input.messages.some(isSlim), json: replayResultJson(withoutStates(result)), states };
  };
  return { full: await run('full'), lean: await run('lean') };
}

describe('replay on slim messages (truncate)', () => {
  it('finds the fixtures', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(20);
  });

  let compacted = 0;
  for (const path of FILES) {
    it(`replays as the full read does: ${relative(ROOT, path)}`, async () => {
      for (const policy of POLICIES) {
        const { full, lean } = await replayBothWays(path, policy);
        expect(full.slim).toBe(false);
        expect(lean.json).toEqual(full.json);
        expect(lean.states).toEqual(full.states);
        compacted += full.states.length;
      }
    });
  }

  it('compacted somewhere (the comparison is not vacuous)', () => {
    expect(compacted).toBeGreaterThan(20);
  });
});
