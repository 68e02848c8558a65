/**
 * Property tests (fast-check) over thousands of random canonical sessions: turns of user
 * prompts, assistant replies and tool loops (results in one message or one message each),
 * random sizes, partial usage. The core must keep its promises for every one of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactionSubject } from '../src/compaction/compact.js';
import { planCompaction, runCompaction } from '../src/compaction/compact.js';
import { findCutPoint } from '../src/compaction/cut-point.js';
import { insideToolPairs, isValidCutPoint } from '../src/compaction/cut-sites.js';
import type { CompactionPolicy, CutRule } from '../src/compaction/policy.js';
import type { CompactionState } from '../src/compaction/state.js';
import type { ContentBlock, Message } from '../src/session/model.js';
import { buildProviderContext, SUMMARY_ACKNOWLEDGEMENT } from '../src/compaction/provider-view.js';
import { holdsNothing, viewViolations } from '../src/session/view-rules.js';
import { checkFreshness } from '../src/sidecar/staleness.js';
import type { SummaryInput } from '../src/compaction/strategy.js';
import { truncateStrategy } from '../src/strategies/truncate.js';
import { estimateAll, sum } from '../src/tokens/estimate.js';

const RUNS = 2_000;

interface ToolLoopSpec {
  readonly text: number;
  readonly calls: readonly number[];
  /** All results in one user message, or one message per result. */
  readonly grouped: boolean;
}

interface TurnSpec {
  readonly prompt: number;
  readonly loops: readonly ToolLoopSpec[];
  /** Length of the closing assistant text, or null when the turn ends on a tool loop. */
  readonly reply: number | null;
  readonly usage: number | null;
}

const loopSpec = fc.record({
  text: fc.nat({ max: 200 }),
  calls: fc.array(fc.nat({ max: 2_000 }), { minLength: 1, maxLength: 3 }),
  grouped: fc.boolean(),
});

const turnSpec = fc.record({
  prompt: fc.nat({ max: 800 }),
  loops: fc.array(loopSpec, { maxLength: 4 }),
  reply: fc.option(fc.nat({ max: 1_200 }), { nil: null }),
  usage: fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: null }),
});

const sessionSpec = fc.record({
  system: fc.option(fc.nat({ max: 400 }), { nil: null }),
  turns: fc.array(turnSpec, { minLength: 1, maxLength: 8 }),
});

/** Builds the messages a spec describes; ids and tool ids are unique. */
function buildSession(spec: { system: number | null; turns: readonly TurnSpec[] }): Message[] {
  const messages: Message[] = [];
  let tool = 0;
  const push = (role: Message['role'], content: ContentBlock[], usage?: number | null) => {
    const line = messages.length + 1;
    messages.push({
      id: `m${line}`,
      role,
      content,
      line,
      ...(usage ? { usage: { input: usage, output: 10, cacheRead: 0, cacheWrite: 0 } } : {}),
    });
  };
  const text = (length: number) => 'x'.repeat(length);
  if (spec.system !== null) push('system', [{ type: 'text', text: text(spec.system) }]);
  for (const turn of spec.turns) {
    push('user', [{ type: 'text', text: text(turn.prompt) }]);
    for (const loop of turn.loops) {
      const ids = loop.calls.map(() => `t${++tool}`);
      push(
        'assistant',
        [
          ...(loop.text > 0 ? [{ type: 'text' as const, text: text(loop.text) }] : []),
          ...ids.map((id) => ({ type: 'tool_request' as const, id, name: 'read', arguments: { path: `src/${id}.ts` } })),
        ],
        turn.usage,
      );
      const results = ids.map((id, index): ContentBlock => ({ type: 'tool_result', tool_request_id: id, output: text(loop.calls[index]!), is_error: false }));
      if (loop.grouped) push('user', results);
      else for (const result of results) push('user', [result]);
    }
    if (turn.reply !== null) push('assistant', [{ type: 'text', text: text(turn.reply) }], turn.usage);
  }
  return messages;
}

const policyArb = fc.record({
  keepRecentTokens: fc.nat({ max: 3_000 }),
  cutRule: fc.constantFrom<CutRule>('conservative', 'tool-safe'),
  force: fc.boolean(),
});

function policyOf(options: { keepRecentTokens: number; cutRule: CutRule; force: boolean }): CompactionPolicy {
  // A reserve at the limit means "always compact": the properties are about the cut, not the trigger.
  return { contextLimit: 1_000, trigger: { kind: 'reserve', tokens: 1_000 }, ...options };
}

/** Every (call, result) pair as message indexes. */
function toolPairs(messages: readonly Message[]): [number, number][] {
  const callAt = new Map<string, number>();
  const pairs: [number, number][] = [];
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_request') callAt.set(block.id, index);
      if (block.type === 'tool_result') pairs.push([callAt.get(block.tool_request_id)!, index]);
    }
  });
  return pairs;
}

function subjectOf(messages: readonly Message[], previous: CompactionState | null): CompactionSubject {
  const tokens = estimateAll(messages);
  let prior: CompactionSubject['previous'] = null;
  if (previous) {
    const freshness = checkFreshness(previous, messages);
    if (freshness.kind !== 'fresh') throw new Error(`expected a fresh sidecar, got ${freshness.reason}`);
    prior = { state: previous, firstKeptIndex: freshness.firstKeptIndex };
  }
  return { sessionName: 's.jsonl', messages, tokens, previous: prior };
}

/** One `compact`: the new state, or null when it would skip. */
async function compactOnce(messages: readonly Message[], previous: CompactionState | null, policy: CompactionPolicy): Promise<CompactionState | null> {
  const subject = subjectOf(messages, previous);
  const plan = planCompaction(subject, policy);
  if (plan.kind === 'skip') return null;
  return runCompaction(subject, plan, truncateStrategy, { now: new Date(0) });
}

describe('properties over random sessions', () => {
  it('the cut never separates a tool call from its result (both rules, with and without force, after a previous compaction)', () => {
    fc.assert(
      fc.property(sessionSpec, policyArb, fc.nat(), (spec, options, startSeed) => {
        const messages = buildSession(spec);
        const tokens = estimateAll(messages);
        // A previous compaction's first kept message is itself a valid cut: take one found the same way.
        const first = findCutPoint(messages, tokens, { keepRecentTokens: startSeed % 4_000, cutRule: options.cutRule, force: options.force });
        const start = first.kind === 'cut' ? first.index : 0;
        const cut = findCutPoint(messages, tokens, options, { start, end: messages.length });
        for (const candidate of [first, cut]) {
          if (candidate.kind !== 'cut') continue;
          for (const [call, result] of toolPairs(messages)) {
            expect(call < candidate.index && candidate.index <= result).toBe(false);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('the kept part is at least keep_recent unless everything is kept (or force had no valid cut)', () => {
    fc.assert(
      fc.property(sessionSpec, policyArb, (spec, options) => {
        const messages = buildSession(spec);
        const tokens = estimateAll(messages);
        const cut = findCutPoint(messages, tokens, options);
        const total = sum(tokens);
        if (cut.kind === 'none') {
          // Nothing is cut, so everything is kept. Force gives up only when its fallback has no
          // message to start from: everything between the first and the last two is a tool result.
          if (options.force && cut.reason === 'no-valid-cut') {
            const candidates = messages.slice(1, Math.max(1, messages.length - 1));
            expect(candidates.every((message) => message.content.some((block) => block.type === 'tool_result'))).toBe(true);
          }
          return;
        }
        expect(cut.index).toBeGreaterThan(0);
        expect(cut.tokensKept + cut.tokensToSummarize).toBe(total);
        expect(cut.tokensKept).toBe(sum(tokens, cut.index));
        if (cut.forced) {
          // Force with no cut in the budget: the earliest valid cut, or the force fallback's last 2 messages
          // (moved back past tool results) when that keeps more. Never a tool result.
          expect(options.force).toBe(true);
          expect(findCutPoint(messages, tokens, { ...options, force: false }).kind).toBe('none');
          expect(messages[cut.index]!.content.some((block) => block.type === 'tool_result')).toBe(false);
        } else {
          expect(cut.tokensKept).toBeGreaterThanOrEqual(options.keepRecentTokens);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('a larger keep budget never keeps fewer messages (with and without force, after a previous compaction)', () => {
    fc.assert(
      fc.property(sessionSpec, policyArb, fc.nat({ max: 3_000 }), fc.nat(), (spec, options, more, startSeed) => {
        const messages = buildSession(spec);
        const tokens = estimateAll(messages);
        const first = findCutPoint(messages, tokens, { keepRecentTokens: startSeed % 4_000, cutRule: options.cutRule });
        const range = { start: first.kind === 'cut' ? first.index : 0, end: messages.length };
        // No cut keeps everything since the range start.
        const kept = (keepRecentTokens: number) => {
          const cut = findCutPoint(messages, tokens, { ...options, keepRecentTokens }, range);
          return cut.kind === 'cut' ? messages.length - cut.index : messages.length - range.start;
        };
        expect(kept(options.keepRecentTokens + more)).toBeGreaterThanOrEqual(kept(options.keepRecentTokens));
      }),
      { numRuns: RUNS },
    );
  });

  it('a cut asked to summarize N tokens summarizes at least N, at the earliest valid cut past the budget', () => {
    fc.assert(
      fc.property(sessionSpec, policyArb, fc.nat({ max: 20_000 }), (spec, options, needed) => {
        const messages = buildSession(spec);
        const tokens = estimateAll(messages);
        const inside = insideToolPairs(messages);
        const validAt = (j: number) => isValidCutPoint(messages[j]!, options.cutRule) && !inside[j];
        const plain = findCutPoint(messages, tokens, { ...options, force: false });
        const cut = findCutPoint(messages, tokens, { ...options, force: false, minSummarizedTokens: needed });
        if (needed === 0) {
          expect(cut).toEqual(plain);
          return;
        }
        const enough = (j: number) => validAt(j) && sum(tokens, 0, j) >= needed;
        const earliest = messages.findIndex((_, j) => j > 0 && enough(j));
        if (cut.kind === 'none') {
          expect(earliest).toBe(-1);
          return;
        }
        expect(cut.tokensToSummarize).toBeGreaterThanOrEqual(needed);
        if (plain.kind === 'cut' && plain.tokensToSummarize >= needed) expect(cut).toEqual(plain);
        else expect(cut).toMatchObject({ pastKeepBudget: true, index: earliest });
      }),
      { numRuns: RUNS },
    );
  });

  it('"fits" exactly when the whole session is under keep_recent (unforced)', () => {
    fc.assert(
      fc.property(sessionSpec, policyArb, (spec, options) => {
        const messages = buildSession(spec);
        const tokens = estimateAll(messages);
        const cut = findCutPoint(messages, tokens, { ...options, force: false });
        // The budget reached only at the first message (or never): keeping everything is the cut,
        // and only then (both ways, in every case).
        const fits = cut.kind === 'none' && cut.reason === 'fits';
        expect(fits).toBe(sum(tokens, 1) < Math.max(options.keepRecentTokens, 1));
      }),
      { numRuns: RUNS },
    );
  });

  it('the provider view starts with the summary and holds every kept message unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(sessionSpec, policyArb, async (spec, options) => {
        const messages = buildSession(spec);
        const state = await compactOnce(messages, null, policyOf(options));
        if (!state) return;
        const view = buildProviderContext(messages, state);
        expect(view[0]!.role).toBe('user');
        expect(view[0]!.content).toEqual([{ type: 'text', text: expect.stringContaining(`<summary>\n${state.summary}\n</summary>`) }]);
        expect(view[1]!.content).toEqual([{ type: 'text', text: SUMMARY_ACKNOWLEDGEMENT }]);
        // Every kept message but those with nothing in them (a view leaves them out): the very same objects, not copies that could differ.
        const expected = messages.slice(state.first_kept_index).filter((message) => !holdsNothing(message));
        const kept = view.slice(2);
        expect(kept).toHaveLength(expected.length);
        kept.forEach((message, index) => expect(message).toBe(expected[index]));
      }),
      { numRuns: RUNS },
    );
  });

  it('every view, and every summarizer input, keeps the provider rules, also when calls were never answered', async () => {
    await fc.assert(
      fc.asyncProperty(sessionSpec, policyArb, fc.array(fc.boolean(), { maxLength: 40 }), async (spec, options, keepResult) => {
        // Some calls lose their result (an interrupted session, a result the file lost).
        let call = 0;
        const messages = buildSession(spec)
          .map((message) => ({ ...message, content: message.content.filter((block) => block.type !== 'tool_result' || (keepResult[call++] ?? true)) }))
          .filter((message) => message.content.length > 0 || message.role !== 'user');
        const seen: (readonly Message[])[] = [];
        const recording = { ...truncateStrategy, summarize: (input: SummaryInput) => (seen.push(input.history, input.turnPrefix), truncateStrategy.summarize(input)) };
        const subject = subjectOf(messages, null);
        const plan = planCompaction(subject, policyOf(options));
        const state = plan.kind === 'compact' ? await runCompaction(subject, plan, recording, { now: new Date(0) }) : null;
        for (const part of [...seen, buildProviderContext(messages, state)]) expect(viewViolations(part)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('compacting twice with no new messages changes nothing (without --force)', async () => {
    await fc.assert(
      fc.asyncProperty(sessionSpec, policyArb, async (spec, options) => {
        const messages = buildSession(spec);
        const policy = policyOf({ ...options, force: false });
        const state = await compactOnce(messages, null, policy);
        if (!state) return;
        const plan = planCompaction(subjectOf(messages, state), policy);
        expect(plan.kind).toBe('skip');
        expect(plan.kind === 'skip' && plan.status).toBe('up-to-date');
      }),
      { numRuns: RUNS },
    );
  });

  // A forced run after a compaction forces nothing when the budget holds all since it, nor when the
  // rules land on the previous cut: a second run finds nothing to do.
  it('with --force, compaction reaches a fixed point in one run', async () => {
    await fc.assert(
      fc.asyncProperty(sessionSpec, policyArb, async (spec, options) => {
        const messages = buildSession(spec);
        const policy = policyOf({ ...options, force: true });
        let state: CompactionState | null = null;
        let runs = 0;
        for (;;) {
          const next: CompactionState | null = await compactOnce(messages, state, policy);
          if (!next) break;
          state = next;
          runs++;
          expect(runs).toBeLessThanOrEqual(1);
        }
        // …and it stays there.
        expect(await compactOnce(messages, state, policy)).toBeNull();
      }),
      { numRuns: RUNS },
    );
  });
});
