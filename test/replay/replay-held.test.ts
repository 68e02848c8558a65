/**
 * What a replay holds per compaction while it runs. The presets compact at nearly every call on a
 * long session (101,648 times on the 909 MB canonical one), and each simulated state that stayed
 * reachable (through the previous state its getters' scope and its dropped-outputs chain held)
 * was about 4.1 KB: the replay's peak grew with the session. A report keeps no state, so once a
 * compaction is superseded its state must be garbage. Counted with weak references and a forced
 * collection, never by timing or RSS.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { CompactionPolicy } from '../../src/compaction/policy.js';
import type { CompactionState } from '../../src/compaction/state.js';
import type { MetadataStrategy } from '../../src/compaction/strategy.js';
import { customPolicy, presetPolicy } from '../../src/replay/presets.js';
import type { ReplayPolicy } from '../../src/replay/presets.js';
import type { ReplayReport } from '../../src/replay/simulate.js';
import { replayColumns, replayReport } from '../../src/replay/simulate.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll } from '../../src/tokens/estimate.js';

/** A full collection, with the flag that exposes it set at run time. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** `turns` turns of a prompt, three tool loops (repeated outputs, which the relevance filter drops) and an answer. */
function longSession(turns: number): Message[] {
  const messages: Message[] = [];
  const push = (role: Message['role'], content: ContentBlock[]) => messages.push({ id: `m${messages.length + 1}`, role, content, line: messages.length + 1 });
  for (let t = 0; t < turns; t++) {
    push('user', [{ type: 'text', text: `do it ${'u'.repeat(200)}` }]);
    for (let k = 0; k < 3; k++) {
      const id = `t${t}-${k}`;
      push('assistant', [{ type: 'tool_request', id, name: 'read', arguments: { path: `src/f${k}.ts` } }]);
      push('user', [{ type: 'tool_result', tool_request_id: id, output: 'w'.repeat(4_000), is_error: false }]);
    }
    push('assistant', [{ type: 'text', text: 'a'.repeat(300) }]);
  }
  return messages;
}

/**
 * The truncate strategy, noting each previous state it is handed; every tenth compaction it lets
 * the current job end (weak references keep their targets until then), collects, and records how
 * many of the states it was handed are still alive.
 */
function watching(gc: () => void): { strategy: MetadataStrategy; seen: () => number; alive: number[] } {
  const states: WeakRef<CompactionState>[] = [];
  const known = new WeakSet<CompactionState>();
  const alive: number[] = [];
  let calls = 0;
  const strategy: MetadataStrategy = {
    ...truncateStrategy,
    async summarize(input) {
      const { previous } = input;
      if (previous && !known.has(previous)) {
        known.add(previous);
        states.push(new WeakRef(previous));
      }
      if (++calls % 10 === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
        alive.push(states.filter((ref) => ref.deref() !== undefined).length);
      }
      return truncateStrategy.summarize(input);
    },
  };
  return { strategy, seen: () => states.length, alive };
}

/** Compacts about every third turn of longSession. */
const TIGHT: CompactionPolicy = { contextLimit: 16_000, trigger: { kind: 'reserve', tokens: 4_000 }, keepRecentTokens: 3_000, cutRule: 'conservative', force: false };

const CASES: readonly { readonly label: string; readonly policy: ReplayPolicy }[] = [
  { label: 'custom', policy: customPolicy(TIGHT) },
  // Checked before every call, summarizing everything: a compaction at nearly every turn.
  { label: 'claude-code', policy: presetPolicy('claude-code', 16_000) },
  { label: 'pi', policy: presetPolicy('pi', 24_000) },
];

describe('replay report, while it runs', () => {
  const gc = collector();
  for (const { label, policy } of CASES) {
    it(`holds the latest simulated states only, however many compactions came before (${label})`, async () => {
      const session = longSession(200);
      const { strategy, seen, alive } = watching(gc);
      const report = await replayReport({ sessionName: 's', messages: session, tokens: estimateAll(session), policy, strategy });
      expect(report.totals.compactions).toBeGreaterThanOrEqual(50);
      expect(seen()).toBeGreaterThanOrEqual(50);
      expect(alive.length).toBeGreaterThanOrEqual(5);
      // The state the simulation builds on, and now and then one or two a collection has not yet
      // reclaimed: 1 to 3 here. Before, every state so far (9, 19, 29 ... 189 under pi).
      for (const count of alive) expect(count).toBeLessThanOrEqual(5);
    });
  }
});

describe('replay report, once made', () => {
  const gc = collector();

  /** Weak references to every compaction event the report's turns give (in a frame of its own, gone before the collection). */
  const eventsOf = (report: ReplayReport): WeakRef<object>[] => report.turns.flatMap((turn) => turn.compactions.map((event) => new WeakRef(event)));

  it('holds no compaction event: each turn makes its own as they are read (pi)', async () => {
    const session = longSession(200);
    const columns = await replayColumns({ sessionName: 's', messages: session, tokens: estimateAll(session), policy: presetPolicy('pi', 24_000), strategy: truncateStrategy });
    const report = columns.report();
    const events = eventsOf(report);
    expect(events.length).toBeGreaterThanOrEqual(50);
    expect(report.totals.compactions).toBe(events.length);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // Before, the report's turns held every one (the events were its largest part on a long session).
    expect(events.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    // Read again, the same events, made again.
    expect(eventsOf(report)).toHaveLength(events.length);
  });
});
