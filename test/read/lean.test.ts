/**
 * The lean read (slim messages, estimates and prefix hashes taken while reading) gives exactly
 * the numbers, cuts and prefix hashes of the full read, on the bug report's fixture.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadSession } from '../../src/read/index.js';
import { planCompaction, runCompaction } from '../../src/compaction/compact.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { hashMessages } from '../../src/session/hash.js';
import { isSlim } from '../../src/session/model.js';
import { saveSidecar } from '../../src/sidecar/store.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { loadTextCounter } from '../../src/tokens/tokenizers.js';
import { scratchCopy } from '../helpers/cli.js';
import { loadHeld } from '../helpers/held-read.js';
import { GrowthFacts, growthFromFacts } from '../../src/growth/attribution.js';
import { groupTurns } from '../../src/growth/turns.js';
import { SkeletonObserver } from '../../src/read/skeleton.js';
import type { Message } from '../../src/session/model.js';
import { heuristicCounter } from '../../src/tokens/estimate.js';
import { providerCalls } from '../../src/tokens/provider-calls.js';

const BUG = 'fixtures/bug.jsonl';
const policy = { ...DEFAULT_POLICY, contextLimit: 80_000 };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const load = (messages: 'full' | 'lean', path = BUG, withSidecar = false) => loadHeld(path, { format: 'auto', messages }, withSidecar);

describe('lean read', () => {
  it('keeps no text but the same ids, roles, usage, estimates and tool structure', async () => {
    const full = await load('full');
    const lean = await load('lean');
    expect(lean.tokens).toEqual(full.tokens);
    expect(lean.tokens.reduce((a, b) => a + b, 0)).toBe(76_012);
    expect(lean.session.messages.map((m) => [m.id, m.role, m.usage, m.line])).toEqual(full.session.messages.map((m) => [m.id, m.role, m.usage, m.line]));
    expect(lean.session.messages.every(isSlim)).toBe(true);
    expect(full.session.messages.some(isSlim)).toBe(false);
    // No text, thinking or tool output is left in a slim message's blocks.
    const textKeys = lean.session.messages.flatMap((m) => m.content.flatMap((block) => Object.keys(block).filter((key) => key === 'output' || key === 'text')));
    expect(textKeys).toEqual([]);
    expect(lean.session.messages.map((m) => m.content.map((block) => block.type).filter((type) => type.startsWith('tool')))).toEqual(
      full.session.messages.map((m) => m.content.map((block) => block.type).filter((type) => type.startsWith('tool'))),
    );
  });

  it('stays lean on a session with repeated message ids: the renamed copies keep their estimates', async () => {
    // The real schema fixture repeats 44 lines' uuids: the reader renames the repeats
    // (withUniqueIds), and the lean read finds each copy's estimate by the message it was made from.
    const path = 'fixtures/real/claude-code/agent-sessions_claude_small_schema-fixture.jsonl';
    const full = await load('full', path);
    const lean = await load('lean', path);
    expect(lean.session.messages.every(isSlim)).toBe(true);
    expect(lean.tokens).toEqual(full.tokens);
    const ids = lean.session.messages.map((m) => m.id);
    expect(ids).toEqual(full.session.messages.map((m) => m.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.some((id) => /^L\d/.test(id))).toBe(true);
    expect(planCompaction(lean.subject, { ...policy, force: true })).toEqual(planCompaction(full.subject, { ...policy, force: true }));
  });

  it('stays lean on repeated message ids with growth facts observed (they read no message id), and an id-reading observer starts over', async () => {
    const path = 'fixtures/real/claude-code/agent-sessions_claude_small_schema-fixture.jsonl';
    const options = { format: 'auto', messages: 'lean' } as const;
    const full = await load('full', path);
    const observed = await loadSession(path, options, () => new GrowthFacts(heuristicCounter));
    expect(observed.session.messages.every(isSlim)).toBe(true);
    expect(observed.tokens).toEqual(full.tokens);
    const growthOf = (loaded: Pick<typeof full, 'session' | 'tokens'>, facts: GrowthFacts) => {
      const calls = providerCalls(loaded.session.messages, loaded.tokens, loaded.session.recordedCompactions);
      const turns = groupTurns(loaded.session.messages, calls, loaded.session.abortedTurns);
      return growthFromFacts(loaded.session.messages, facts, turns, calls);
    };
    const fullFacts = new GrowthFacts(heuristicCounter);
    for (const message of full.session.messages) fullFacts.observe(message as Message);
    expect(growthOf(observed, observed.observer)).toEqual(growthOf(full, fullFacts));
    // A skeleton holds the message's id: the read starts over in full for it.
    const skeletons = await loadSession(path, options, () => new SkeletonObserver());
    expect(skeletons.session.messages.some(isSlim)).toBe(false);
    expect(skeletons.observer.skeletons.map((skeleton) => skeleton.id)).toEqual(full.session.messages.map((m) => m.id));
  });

  it('gives the same exact-tokenizer estimates', async () => {
    const count = await loadTextCounter('o200k');
    const full = await loadSession(BUG, { format: 'auto', count });
    const lean = await loadSession(BUG, { format: 'auto', count, messages: 'lean' });
    expect(lean.tokens).toEqual(full.tokens);
  });

  it('plans to the same numbers', async () => {
    // compact plans from the lean read, then reads again in full only what its compaction reads
    // (compact/session.ts; test/compaction/compact-span.test.ts compares its sidecars with the full read's).
    const full = await load('full');
    const lean = await load('lean');
    expect(planCompaction(lean.subject, policy)).toEqual(planCompaction(full.subject, policy));
    const forced = { ...policy, force: true };
    expect(planCompaction(lean.subject, forced)).toEqual(planCompaction(full.subject, forced));
    expect(planCompaction(full.subject, forced).kind).toBe('compact');
  });

  it('checks a sidecar written from the full read as fresh with the prefix hash it took while reading', async () => {
    const copy = await scratchCopy('bug.jsonl');
    cleanups.push(copy.cleanup);
    const path = join(copy.dir, 'bug.jsonl');
    const full = await loadHeld(path, { format: 'auto' });
    const plan = planCompaction(full.subject, { ...policy, force: true });
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    await saveSidecar(path, await runCompaction(full.subject, plan, truncateStrategy));
    const lean = await load('lean', path, true);
    expect(lean.subject.previous?.firstKeptIndex).toBe(plan.cut.index);
    expect(lean.warnings.filter((warning) => /stale/.test(warning.message))).toEqual([]);
    expect(planCompaction(lean.subject, policy)).toEqual(planCompaction((await load('full', path, true)).subject, policy));
    // The digest the sidecar stores came with the lean read, taken while reading; a prefix of
    // slim messages cannot be hashed: the type checker refuses them (no run-time guard).
    expect(lean.prefixHashes.at(plan.cut.index)).toBe(hashMessages(full.session.messages, 0, plan.cut.index));
    expect(lean.prefixHashes.at(3)).toBeUndefined();
    // @ts-expect-error hashMessages reads text: slim messages are not Messages
    void (() => hashMessages(lean.session.messages, 0, 3));
  });
});
