/**
 * Replay stays linear in the session (issue 6): each simulated compaction must cost its window,
 * not the whole session. Two guards, neither of which times anything:
 * - the indexed lookups (RangeSums, SessionIndex, providerCalls' running estimate) and a
 *   runCompaction over a bounded, uncopied session agree exactly with the direct computations
 *   (the code replay ran before) on random sessions, strategy inputs included;
 * - replaySession reads each message and estimate a bounded number of times, counted through a
 *   Proxy: four times the session costs four times the reads, not sixteen.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReplayPolicy } from '../../src/replay/presets.js';
import { customPolicy } from '../../src/replay/presets.js';
import { OPENCODE_PRUNE } from '../../src/compaction/prune.js';
import { replaySession } from '../../src/replay/simulate.js';
import type { CompactionSubject } from '../../src/compaction/compact.js';
import { runCompaction } from '../../src/compaction/compact.js';
import { findCutPoint } from '../../src/compaction/cut-point.js';
import { CutSiteIndex, insideToolPairs, scannedCutSites } from '../../src/compaction/cut-sites.js';
import { toolRequestsById } from '../../src/compaction/facts.js';
import type { CompactionPolicy } from '../../src/compaction/policy.js';
import { SessionIndex } from '../../src/compaction/session-index.js';
import type { CompactionState } from '../../src/compaction/state.js';
import { hashMessages, prefixHasher } from '../../src/session/hash.js';
import type { ContentBlock, Message, RecordedCompaction } from '../../src/session/model.js';
import { createExtractStrategy } from '../../src/strategies/extract.js';
import { pruneStrategy } from '../../src/strategies/prune.js';
import type { CompactionStrategy, PruneStrategy, Strategy } from '../../src/compaction/strategy.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll, estimateContextTokens, sum } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';
import { RangeSums, scannedSums } from '../../src/tokens/range-sums.js';

const RUNS = 300;

// ---- random sessions ------------------------------------------------------------------------

type Step =
  | { readonly kind: 'user'; readonly chars: number }
  | { readonly kind: 'answer'; readonly chars: number; readonly usage: number | null }
  | { readonly kind: 'tool'; readonly tool: number; readonly path: number; readonly output: number; readonly reuseId: boolean; readonly usage: number | null };

const TOOLS = ['read', 'bash', 'edit', 'grep'];
/** Outputs that repeat (duplicates), fail (never dropped) or are long enough to prune. */
const OUTPUTS = ['ok', 'x'.repeat(400), 'y'.repeat(900), 'error: build failed:\nexit code: 1', 'z'.repeat(400), 'w'.repeat(4_000)];
const BIG_OUTPUT = OUTPUTS.length - 1;

const usageArb = fc.option(fc.integer({ min: 1, max: 50_000 }), { nil: null });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), chars: fc.nat({ max: 600 }) }),
  fc.record({ kind: fc.constant('answer' as const), chars: fc.nat({ max: 600 }), usage: usageArb }),
  fc.record({
    kind: fc.constant('tool' as const),
    tool: fc.nat({ max: TOOLS.length - 1 }),
    path: fc.nat({ max: 3 }),
    output: fc.nat({ max: OUTPUTS.length - 1 }),
    // A reused call id: sessions do have them, and "the latest call before the end" must stay exact.
    reuseId: fc.boolean(),
    usage: usageArb,
  }),
);

function buildMessages(steps: readonly Step[]): Message[] {
  const messages: Message[] = [];
  let calls = 0;
  const push = (role: Message['role'], content: ContentBlock[], usage: number | null = null) =>
    messages.push({
      id: `m${messages.length + 1}`,
      role,
      content,
      line: messages.length + 1,
      ...(usage ? { usage: { input: usage, output: 7, cacheRead: 0, cacheWrite: 0 } } : {}),
    });
  for (const step of steps) {
    if (step.kind === 'user') push('user', [{ type: 'text', text: `do it ${'u'.repeat(step.chars)}` }]);
    else if (step.kind === 'answer') push('assistant', [{ type: 'text', text: 'a'.repeat(step.chars) }], step.usage);
    else {
      const id = `t${step.reuseId && calls > 0 ? calls : ++calls}`;
      const name = TOOLS[step.tool]!;
      const args = name === 'bash' ? { command: `npm test ${step.path}` } : { path: `src/f${step.path}.ts` };
      push('assistant', [{ type: 'tool_request', id, name, arguments: args }], step.usage);
      push('user', [{ type: 'tool_result', tool_request_id: id, output: OUTPUTS[step.output]!, is_error: false }]);
    }
  }
  return messages;
}

const sessionArb = fc
  .record({
    steps: fc.array(stepArb, { minLength: 2, maxLength: 40 }),
    recorded: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 2 }),
  })
  .map(({ steps, recorded }) => {
    const messages = buildMessages(steps);
    const n = messages.length;
    // The agent's own compactions, in file order: each keeps from a message at or before where it happened.
    const compactions: RecordedCompaction[] = recorded
      .map(([a, b]) => ({ atIndex: a % (n + 1), keep: b }))
      .sort((x, y) => x.atIndex - y.atIndex)
      .map(({ atIndex, keep }, k) => ({ atIndex, firstKeptIndex: keep % (atIndex + 1), summary: 's', line: 1000 + k }));
    return { messages, tokens: estimateAll(messages), recorded: compactions };
  });

// ---- lookups against their direct definitions ---------------------------------------------

describe('RangeSums', () => {
  it('sums every range exactly like sum(), through point updates, for whole and fractional counts', () => {
    const valueArb = fc.oneof(fc.integer({ min: -1_000, max: 1_000_000 }), fc.double({ min: -10, max: 10, noNaN: true }));
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 40 }),
        fc.array(fc.tuple(fc.nat(), valueArb, fc.integer({ min: -2, max: 45 }), fc.integer({ min: -2, max: 45 })), { maxLength: 20 }),
        (values, operations) => {
          const sums = new RangeSums(values);
          const mirror = [...values];
          for (const [at, delta, from, to] of operations) {
            expect(sums.sum(from, to)).toBe(sum(mirror, Math.max(0, from), to));
            if (mirror.length === 0) continue;
            const index = at % mirror.length;
            mirror[index]! += delta;
            sums.add(index, delta);
            expect(sums.values).toEqual(mirror);
          }
          expect(sums.sum(0, mirror.length)).toBe(sum(mirror));
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('the searches of a cut', () => {
  const counts = fc.array(fc.oneof(fc.constant(0), fc.nat({ max: 5 }), fc.nat({ max: 3_000 })), { maxLength: 60 });
  const amount = fc.oneof(fc.nat({ max: 10_000 }), fc.double({ min: -5, max: 10_000, noNaN: true }), fc.constant(0));

  it('reach back and forward exactly as the scans do, through point updates', () => {
    fc.assert(
      fc.property(counts, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3_000 })), { maxLength: 8 }), fc.array(fc.tuple(fc.nat(), fc.nat(), amount), { minLength: 1, maxLength: 20 }), (values, updates, asks) => {
        const sums = new RangeSums(values);
        const mirror = [...values];
        const check = () => {
          const scans = scannedSums(mirror);
          for (const [a, b, wanted] of asks) {
            const start = a % (mirror.length + 2);
            const end = b % (mirror.length + 2);
            expect(sums.reachBack(start, end, wanted)).toBe(scans.reachBack(start, end, wanted));
            expect(sums.reachForward(start, end, wanted)).toBe(scans.reachForward(start, end, wanted));
          }
        };
        check();
        for (const [at, size] of updates) {
          if (mirror.length === 0) break;
          const index = at % mirror.length;
          // A prune only takes a count down, never below zero.
          const delta = -Math.min(size, mirror[index]!);
          sums.add(index, delta);
          mirror[index]! += delta;
          check();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('find the same cut sites indexed as scanned, under both rules', () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), fc.nat(), ({ messages }, a, b) => {
        const index = new CutSiteIndex(messages);
        for (const rule of ['conservative', 'tool-safe'] as const) {
          const indexed = index.forRule(rule);
          const scanned = scannedCutSites(messages, rule);
          for (let at = -1; at <= messages.length; at++) {
            const other = (a + b * at) % (messages.length + 2);
            expect(indexed.latest(other - 1, at)).toBe(scanned.latest(other - 1, at));
            expect(indexed.earliest(at, other)).toBe(scanned.earliest(at, other));
            if (at >= 0 && at < messages.length) expect(indexed.inside(at)).toBe(scanned.inside(at));
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('give findCutPoint the cut the scans give, for every option', () => {
    const options = fc.record({
      keepRecentTokens: fc.nat({ max: 3_000 }),
      force: fc.boolean(),
      forcePastPreviousCut: fc.boolean(),
      cutRule: fc.constantFrom('conservative' as const, 'tool-safe' as const),
      minSummarizedTokens: fc.oneof(fc.constant(0), fc.nat({ max: 4_000 }), fc.double({ min: 0, max: 4_000, noNaN: true })),
    });
    fc.assert(
      fc.property(sessionArb, options, fc.nat(), fc.nat(), fc.boolean(), ({ messages, tokens }, option, a, b, afterCompaction) => {
        const index = new CutSiteIndex(messages);
        const sums = new RangeSums(tokens);
        const start = a % messages.length;
        const end = start + 1 + (b % (messages.length - start));
        const range = { start, end, afterCompaction };
        expect(findCutPoint(messages, sums, option, range, index)).toEqual(findCutPoint(messages, tokens, option, range));
      }),
      { numRuns: RUNS },
    );
  });
});

describe('SessionIndex and providerCalls', () => {
  it('answer, at every end, what the direct scans answer over the prefix', () => {
    fc.assert(
      fc.property(sessionArb, ({ messages, tokens, recorded }) => {
        const index = new SessionIndex(messages, new RangeSums(tokens));
        const inside = insideToolPairs(messages);
        const sites = index.cutSites.forRule('conservative');
        expect(messages.map((_, at) => sites.inside(at))).toEqual(Array.from(inside, (mark) => mark === 1));
        const ids = [...toolRequestsById(messages).keys(), 'missing'];
        for (let end = 0; end <= messages.length; end++) {
          const prefix = messages.slice(0, end);
          const direct = toolRequestsById(prefix);
          for (const id of ids) expect(index.requestBefore(id, end)).toBe(direct.get(id));
          expect(index.contextTokens(end, recorded)).toBe(estimateContextTokens(prefix, tokens.slice(0, end), end, recorded));
        }
        const expected = messages.flatMap((message, at) =>
          message.role !== 'assistant'
            ? []
            : [message.usage && message.usage.input > 0 ? message.usage.input : estimateContextTokens(messages, tokens, at, recorded)],
        );
        expect(providerCalls(messages, tokens, recorded).map((call) => call.input)).toEqual(expected);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('prefixHasher', () => {
  it('equals hashMessages over the prefix, asked in any order', () => {
    fc.assert(
      fc.property(sessionArb, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), ({ messages }, seeds) => {
        const hasher = prefixHasher(messages);
        for (const seed of seeds) {
          const end = seed % (messages.length + 1);
          expect(hasher(end)).toBe(hashMessages(messages.slice(0, end)));
        }
      }),
      { numRuns: RUNS },
    );
  });
});

// ---- one compaction: bounded and indexed versus copied -------------------------------------

/** Wraps a strategy so every input it is handed is kept (a prune strategy's session up to `to` only). */
function recording(strategy: CompactionStrategy): { strategy: CompactionStrategy; inputs: unknown[] } {
  const inputs: unknown[] = [];
  if (strategy.kind === 'prune') {
    const prune: PruneStrategy = {
      ...strategy,
      prune: (input) => {
        inputs.push({ from: input.from, to: input.to, past: input.messages.slice(0, input.to) });
        return strategy.prune(input);
      },
    };
    return { strategy: prune, inputs };
  }
  const summarize: Strategy = {
    ...strategy,
    summarize: (input) => {
      inputs.push(input);
      return strategy.summarize(input);
    },
  };
  return { strategy: summarize, inputs };
}

const STRATEGIES: readonly CompactionStrategy[] = [truncateStrategy, createExtractStrategy(), pruneStrategy];

describe('runCompaction over the session so far', () => {
  it('hands the strategy the same span and stores the same state as over a copied prefix', async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb, fc.nat(), fc.nat({ max: 2_000 }), fc.nat({ max: STRATEGIES.length - 1 }), async (session, endSeed, keep, which) => {
        const { messages, tokens, recorded } = session;
        const policy: CompactionPolicy = { contextLimit: 1_000, trigger: { kind: 'reserve', tokens: 1_000 }, keepRecentTokens: keep, cutRule: 'tool-safe', force: true };
        const index = new SessionIndex(messages, new RangeSums(tokens));
        const copied = recording(STRATEGIES[which]!);
        const bounded = recording(STRATEGIES[which]!);
        let previous: CompactionSubject['previous'] = null;
        // Two compactions in a row, as replay makes them: the second builds on the first.
        for (const end of [1 + (endSeed % messages.length), messages.length]) {
          const windowStart = recorded.reduce((start, c) => (c.atIndex <= end ? Math.max(start, c.firstKeptIndex) : start), 0);
          const start = Math.max(previous && previous.firstKeptIndex >= windowStart ? previous.firstKeptIndex : 0, windowStart);
          if (start >= end) continue;
          const cut = findCutPoint(messages, tokens, policy, { start, end });
          if (cut.kind === 'none') continue;
          const plan = { kind: 'compact' as const, cut, start, contextTokens: 123 };
          const base = { sessionName: 's', previous, recorded };
          const options = { now: new Date(0) };
          const fromCopy = await runCompaction({ ...base, messages: messages.slice(0, end), tokens: tokens.slice(0, end) }, plan, copied.strategy, options);
          const fromIndex = await runCompaction({ ...base, messages, tokens, end }, plan, bounded.strategy, { ...options, index });
          expect(JSON.stringify(fromIndex)).toBe(JSON.stringify(fromCopy));
          expect(bounded.inputs).toEqual(copied.inputs);
          previous = { state: fromIndex as CompactionState, firstKeptIndex: cut.index };
        }
      }),
      { numRuns: RUNS },
    );
  });
});

// ---- reads per message ----------------------------------------------------------------------

/** A long session: `turns` turns of a prompt, three tool loops with ~1,000-token outputs, and an answer. */
function longSession(turns: number): Message[] {
  const steps: Step[] = [];
  for (let t = 0; t < turns; t++) {
    steps.push({ kind: 'user', chars: 200 });
    for (let k = 0; k < 3; k++) steps.push({ kind: 'tool', tool: (t + k) % TOOLS.length, path: k, output: BIG_OUTPUT, reuseId: false, usage: null });
    steps.push({ kind: 'answer', chars: 300, usage: null });
  }
  return buildMessages(steps);
}

/** The array, and a count of its elements read through it (by index, iteration or any array method). */
function counted<T>(items: readonly T[]): { items: readonly T[]; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(items as T[], {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { items: proxy, reads: () => reads };
}

/** Compacts about every third turn of longSession. */
const TIGHT: CompactionPolicy = { contextLimit: 16_000, trigger: { kind: 'reserve', tokens: 4_000 }, keepRecentTokens: 3_000, cutRule: 'conservative', force: false };

const READ_CASES: readonly { readonly label: string; readonly policy: ReplayPolicy; readonly strategy: CompactionStrategy }[] = [
  { label: 'truncate', policy: customPolicy(TIGHT), strategy: truncateStrategy },
  { label: 'extract', policy: customPolicy(TIGHT), strategy: createExtractStrategy(1_000) },
  // Codex's carried user messages and opencode's pruning of old outputs, at this session's scale.
  { label: 'carried user tokens, every call', policy: { ...customPolicy(TIGHT), check: 'every-call', carryUserTokens: 2_000 }, strategy: truncateStrategy },
  { label: 'pruning policy', policy: { ...customPolicy(TIGHT), prune: { ...OPENCODE_PRUNE, protectTokens: 2_000, minimumTokens: 1_000 } }, strategy: truncateStrategy },
];

/** Element reads of messages and estimates per message, for one replay of a session of `turns` turns. */
async function readsPerMessage(turns: number, policy: ReplayPolicy, strategy: CompactionStrategy) {
  const session = longSession(turns);
  const messages = counted(session);
  const tokens = counted(estimateAll(session));
  const result = await replaySession({ sessionName: 's', messages: messages.items, tokens: tokens.items, policy, strategy });
  // Every state's hash is read when the result crosses from a worker thread (structured clone).
  for (const turn of result.turns) for (const event of turn.compactions) expect(event.state.summarized_hash).toMatch(/^sha256:/);
  return { perMessage: (messages.reads() + tokens.reads()) / session.length, compactions: result.totals.compactions, prunes: result.totals.prunes };
}

describe('replaySession reads', () => {
  // Before the session index every compaction rescanned the session from its first message, so
  // reads per message grew with the session: 4x the session, about 4x the reads per message.
  for (const { label, policy, strategy } of READ_CASES) {
    it(`each message a bounded number of times, however long the session (${label})`, async () => {
      const short = await readsPerMessage(50, policy, strategy);
      const long = await readsPerMessage(200, policy, strategy);
      // Enough rewrites that rescanning the session at each would show.
      const rewrites = (run: { compactions: number; prunes: number }) => run.compactions + run.prunes;
      expect(rewrites(short)).toBeGreaterThanOrEqual(15);
      expect(rewrites(long)).toBeGreaterThanOrEqual(4 * rewrites(short) - 4);
      // About 15-18 reads a message today (the passes over the session, the windows); 240 and 940
      // before, growing with the session.
      expect(long.perMessage).toBeLessThan(short.perMessage * 1.1);
      expect(long.perMessage).toBeLessThan(30);
    });
  }
});

/**
 * One prompt, then `loops` tool loops in a row, each call reporting a prompt over TIGHT's trigger
 * and under its limit: every call asks for a compaction, and under the conservative rule no cut
 * after the prompt is valid, so none is ever made.
 */
function oneLongTurn(loops: number): Message[] {
  const steps: Step[] = [{ kind: 'user', chars: 200 }];
  for (let k = 0; k < loops; k++) steps.push({ kind: 'tool', tool: k % TOOLS.length, path: k % 3, output: 1, reuseId: false, usage: 15_000 });
  return buildMessages(steps);
}

describe('replaySession reads, when no cut is found', () => {
  // Each attempt searched the span since the last cut for a valid one, which here is the whole
  // session: 4x the session was about 4x the reads per message.
  it('each message a bounded number of times, however long the turn', async () => {
    const policy: ReplayPolicy = { ...customPolicy(TIGHT), check: 'every-call' };
    const perMessage = async (loops: number) => {
      const session = oneLongTurn(loops);
      const messages = counted(session);
      const result = await replaySession({ sessionName: 's', messages: messages.items, tokens: estimateAll(session), policy, strategy: truncateStrategy });
      expect(result.totals.compactions).toBe(0);
      expect(result.totals.requests).toBe(loops);
      return messages.reads() / session.length;
    };
    const short = await perMessage(100);
    const long = await perMessage(400);
    expect(long).toBeLessThan(short * 1.1);
    expect(long).toBeLessThan(30);
  });
});

describe('dropped outputs of the simulated states', () => {
  it("are each the previous state's list plus the span's, whichever state is read first", async () => {
    const session = longSession(40);
    const run = () => replaySession({ sessionName: 's', messages: session, tokens: estimateAll(session), policy: customPolicy(TIGHT), strategy: truncateStrategy });
    const statesOf = (result: Awaited<ReturnType<typeof run>>) => result.turns.flatMap((turn) => turn.compactions.map((event) => event.state));
    const forward = statesOf(await run()).map((state) => state.dropped_outputs);
    const backward = statesOf(await run())
      .reverse()
      .map((state) => state.dropped_outputs)
      .reverse();
    expect(forward.length).toBeGreaterThan(10);
    expect(backward).toEqual(forward);
    forward.forEach((list, k) => {
      if (k > 0) expect(list.slice(0, forward[k - 1]!.length)).toEqual(forward[k - 1]);
    });
    // The repeated outputs of longSession are dropped, more with every compaction.
    expect(forward.at(-1)!.length).toBeGreaterThan(forward[0]!.length);
  });
});
