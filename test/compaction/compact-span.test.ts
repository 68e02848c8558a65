/**
 * `compact` reads lean, then in full only what its compaction reads (compact/session.ts, read/).
 * On every real and format fixture, with and without a sidecar already there, with each offline
 * strategy (and the summarizer, through a fake server on 127.0.0.1), the two reads give exactly
 * the plan and sidecar state the full read gives; the messages outside what the compaction reads
 * are slim, and a session with nothing to compact is never read in full.
 */
import fg from 'fast-glob';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompactRead } from '../../src/compact/session.js';
import { readForCompaction } from '../../src/compact/session.js';
import type { PolicyChoice } from '../../src/compact/job.js';
import { loadSession } from '../../src/read/index.js';
import { currentContextTokens, runCompaction, runGuardedCompaction } from '../../src/compaction/compact.js';
import type { CompactionPolicy } from '../../src/compaction/policy.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import type { CompactionState } from '../../src/compaction/state.js';
import { textReads } from '../../src/compaction/text-reads.js';
import { keptInFull } from '../../src/read/index.js';
import { createChatClient } from '../../src/llm/client.js';
import { SUMMARIZER_DEFAULTS } from '../../src/config/summarizer.js';
import { hashMessages } from '../../src/session/hash.js';
import { isSlim } from '../../src/session/model.js';
import { saveSidecar } from '../../src/sidecar/store.js';
import type { StrategyName } from '../../src/strategies/index.js';
import { createStrategy } from '../../src/strategies/index.js';
import type { CompactionStrategy } from '../../src/compaction/strategy.js';
import { createSummarizeStrategy } from '../../src/strategies/summarize.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { startFakeProvider } from '../helpers/fake-provider.js';
import { FIXTURES } from '../helpers/cli.js';
import { feed, makeFifo, waitForReader } from '../helpers/fifo.js';
import { loadHeld } from '../helpers/held-read.js';

const FILES = fg.sync(['bug.jsonl', 'real/**/*.jsonl', 'formats/*.jsonl'], { cwd: FIXTURES, absolute: true }).sort();
/**
 * Read in full after the lean read: the trimmed schema fixture repeats one uuid (as
 * inspect-lean.test.ts says), the readers of the pi branch fixture, the Claude Code rewind
 * and the compaction summariser's transcript read alone (its first lines hang off the session's
 * lines) leave out of the session messages they handed over, so the second read cannot map
 * positions. The Claude Code fixture's lean read already holds every message in full: there is
 * nothing to read again.
 */
const READ_IN_FULL = new Set([
  'real/claude-code/agent-sessions_claude_small_schema-fixture.jsonl',
  'formats/pi-branch.jsonl',
  'formats/claude-code.jsonl',
  'formats/claude-code-rewind.jsonl',
  'real/claude-code/marot_spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl',
]);
const NOW = new Date('2026-01-01T00:00:00Z');
/** The two reads (lean, then in part) whatever the file's size: every fixture is small enough to be read once otherwise. */
const TWO_READS = { format: 'auto', strict: false, dryRun: false, smallFileBytes: 0 };
const OFFLINE: readonly StrategyName[] = ['truncate', 'extract', 'prune'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compactor-span-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A forced compaction keeping about `share` of the session's tokens. */
async function forcedPolicy(path: string, share: number): Promise<CompactionPolicy> {
  const { tokens } = await loadSession(path, { format: 'auto', messages: 'lean' });
  const total = tokens.reduce((sum, count) => sum + count, 0);
  return { ...DEFAULT_POLICY, force: true, keepRecentTokens: Math.max(1, Math.floor(total * share)) };
}

/** One fixed policy for the read's plan (its window named as --context-limit's). */
const fixed = async (given: CompactionPolicy | Promise<CompactionPolicy>): Promise<PolicyChoice> => {
  const policy = await given;
  return { kind: 'fixed', policy, window: { tokens: policy.contextLimit, source: 'flag' } };
};

/** A state as its sidecar stores it. */
const stored = (state: CompactionState) => JSON.parse(JSON.stringify(state)) as Record<string, unknown>;

interface Both {
  readonly full: Exclude<CompactRead, { read: 'lean' }>;
  readonly twoPass: CompactRead;
  /** As compact reads a small file (here whatever its size): once, in full. */
  readonly small: CompactRead;
  /** The states written each way, as stored (null: the plan was to skip). */
  readonly fromFull: Record<string, unknown> | null;
  readonly fromTwoPass: Record<string, unknown> | null;
  readonly fromSmall: Record<string, unknown> | null;
}

async function bothWays(path: string, strategy: CompactionStrategy, policy: CompactionPolicy, redact = false): Promise<Both> {
  const options = TWO_READS;
  const full = await readForCompaction(path, { ...options, inFull: true }, strategy, await fixed(policy));
  if (full.read === 'lean') throw new Error('inFull reads in full');
  const twoPass = await readForCompaction(path, options, strategy, await fixed(policy));
  const small = await readForCompaction(path, { ...options, smallFileBytes: Number.MAX_SAFE_INTEGER }, strategy, await fixed(policy));
  const compact = async (read: CompactRead) =>
    read.read !== 'lean' && read.plan.kind === 'compact' ? stored(await runCompaction(read.subject, read.plan, strategy, { now: NOW, redact })) : null;
  return { full, twoPass, small, fromFull: await compact(full), fromTwoPass: await compact(twoPass), fromSmall: await compact(small) };
}

function expectSame(both: Both): void {
  expect(both.twoPass.plan).toEqual(both.full.plan);
  expect(both.twoPass.subject.messages.map((message) => message.id)).toEqual(both.full.subject.messages.map((message) => message.id));
  expect(both.fromTwoPass).toEqual(both.fromFull);
  // A small file is read once, in full, and writes the sidecar the two reads write.
  expect(both.small.read).toBe('full');
  expect(both.small.plan).toEqual(both.full.plan);
  expect(both.fromSmall).toEqual(both.fromTwoPass);
}

/**
 * A copy of bug.jsonl named `name` with a truncate sidecar from a forced compaction at `share` of
 * its context (both reads checked alike first): returns the copy and the cut that sidecar made.
 */
async function bugWithSidecar(name: string, share: number): Promise<{ path: string; cut: number }> {
  const path = join(dir, name);
  await copyFile(join(FIXTURES, 'bug.jsonl'), path);
  const truncate = createStrategy('truncate');
  const first = await bothWays(path, truncate, await forcedPolicy(path, share));
  if (first.full.plan.kind !== 'compact') throw new Error('expected a compaction');
  await saveSidecar(path, await runCompaction(first.full.subject, first.full.plan, truncate, { now: NOW }));
  return { path, cut: first.full.plan.cut.index };
}

/** How each fixture and strategy was read by the two-pass path, to check the partial read ran. */
const reads: CompactRead['read'][] = [];

describe('compact reads only what it compacts', () => {
  it('finds the fixtures', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(18);
  });

  for (const fixture of FILES) {
    const name = relative(FIXTURES, fixture);
    /** The read the two-pass path should have made. */
    const expectedRead = (both: Both): CompactRead['read'] => {
      if (both.full.plan.kind === 'skip') return 'lean';
      // A previous prune is sized from its pruned messages' text: the first read is already full.
      if ((both.full.subject.previous?.state.pruned_outputs?.length ?? 0) > 0) return 'full';
      return READ_IN_FULL.has(name) ? 'full' : 'partial';
    };
    for (const strategyName of OFFLINE) {
      it(`writes the full read's sidecar: ${name}, ${strategyName}`, async () => {
        const strategy = createStrategy(strategyName);
        const path = join(dir, `${strategyName}-${basename(fixture)}`);
        await copyFile(fixture, path);

        const first = await bothWays(path, strategy, await forcedPolicy(path, 0.5), strategyName === 'truncate');
        expectSame(first);
        expect(first.full.read).toBe('full');
        expect(first.twoPass.read).toBe(expectedRead(first));
        reads.push(first.twoPass.read);
        if (first.full.plan.kind === 'skip') return; // no valid cut in this session: nothing to build on
        await saveSidecar(path, await runCompaction(first.full.subject, first.full.plan, strategy, { now: NOW }));

        // With the sidecar: a further compaction builds on it, and a re-run under the threshold is up to date.
        const again = await bothWays(path, strategy, await forcedPolicy(path, 0.2));
        expectSame(again);
        expect(again.full.subject.previous).not.toBeNull();
        expect(again.twoPass.read).toBe(expectedRead(again));

        const quiet = await bothWays(path, strategy, { ...DEFAULT_POLICY, contextLimit: 100_000_000 });
        expectSame(quiet);
        expect(quiet.full.plan).toMatchObject({ kind: 'skip', status: 'up-to-date' });
        expect(quiet.twoPass.read).toBe(expectedRead(quiet));
      });
    }
  }

  it('read most sessions in part', () => {
    // 3 strategies over every fixture: two fixtures have no valid cut (skipped after the lean
    // read), four of READ_IN_FULL are read in full (the fifth is one of those with no valid cut),
    // every other in part. (Force cuts the Claude Code and pi branch fixtures at their earliest
    // valid cut once it fits the budget, where it used to give up: they compact now.)
    expect(reads.filter((read) => read === 'lean').length).toBe(3 * 2);
    expect(reads.filter((read) => read === 'partial').length).toBe(3 * (FILES.length - 6));
    expect(reads.filter((read) => read === 'full').length).toBe(3 * 4);
  });

  it('hands runCompaction slim messages outside what it reads, full ones inside', async () => {
    const { path, cut } = await bugWithSidecar('span-bug.jsonl', 0.3);
    const strategy = createStrategy('truncate');

    const { subject, plan, read } = await readForCompaction(path, TWO_READS, strategy, await fixed(forcedPolicy(path, 0.1)));
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    expect(read).toBe('partial');
    expect(plan.start).toBe(cut);
    const span = textReads(subject, plan, strategy);
    expect(span).toMatchObject({ from: plan.start, to: subject.messages.length });
    subject.messages.forEach((message, index) => expect(isSlim(message)).toBe(!keptInFull(span, index)));
    // Everything an earlier compaction summarized stays slim (no call before it is answered after it).
    expect(subject.messages.slice(0, plan.start).every(isSlim)).toBe(true);
    expect(plan.start).toBeGreaterThan(10);
    // The second read hashed every prefix from the planned cut on, so a cut the guard moves on
    // (a summary larger than planned) finds the hash its sidecar stores too.
    const full = (await loadSession(path, { format: 'auto' })).session.messages;
    for (const end of [plan.cut.index, plan.cut.index + 1, subject.messages.length]) {
      expect(subject.prefixHashes?.at(end)).toBe(hashMessages(full, 0, end));
    }
    expect(subject.prefixHashes?.at(plan.cut.index - 1)).toBeUndefined();

    // Prune reads no further than its span: the kept messages are slim too.
    const prune = createStrategy('prune');
    const pruned = await readForCompaction(path, TWO_READS, prune, await fixed(forcedPolicy(path, 0.1)));
    if (pruned.plan.kind !== 'compact') throw new Error('expected a compaction');
    expect(pruned.read).toBe('partial');
    expect(pruned.subject.messages.slice(pruned.plan.cut.index).every(isSlim)).toBe(true);
    expect(pruned.subject.messages.slice(pruned.plan.start, pruned.plan.cut.index).some(isSlim)).toBe(false);

    // Nothing to compact: the lean read is the only read.
    const skipped = await readForCompaction(path, TWO_READS, strategy, await fixed(DEFAULT_POLICY));
    expect(skipped).toMatchObject({ read: 'lean', plan: { kind: 'skip' } });
    expect(skipped.subject.messages.every(isSlim)).toBe(true);
  });

  it('stores the right prefix hash when a larger summary moves the cut on after a partial read', async () => {
    const { path } = await bugWithSidecar('moved-cut-bug.jsonl', 0.5);
    // Over a trigger at half the context, with a summary far larger than the one it builds on:
    // the guard moves the cut on past the one the second read was planned for.
    const lean = await loadHeld(path, { format: 'auto', messages: 'lean' });
    const context = currentContextTokens(lean.subject);
    const policy: CompactionPolicy = { ...DEFAULT_POLICY, contextLimit: context, trigger: { kind: 'percent', percent: 90 }, keepRecentTokens: Math.floor(context * 0.3) };
    const large: CompactionStrategy = {
      name: 'large',
      summarize: async () => ({ summary: 'word '.repeat(Math.floor(context / 3)), turnPrefixSummary: null, usage: null, details: {} }),
    };
    const read = await readForCompaction(path, TWO_READS, large, await fixed(policy));
    if (read.read === 'lean' || read.plan.kind !== 'compact') throw new Error('expected a compaction');
    expect(read.read).toBe('partial');
    const outcome = await runGuardedCompaction(read.subject, read.plan, large, policy);
    expect(outcome.state.first_kept_index).toBeGreaterThan(read.plan.cut.index);
    const full = (await loadSession(path, { format: 'auto' })).session.messages;
    expect(stored(outcome.state)['summarized_hash']).toBe(hashMessages(full, 0, outcome.state.first_kept_index));
  });

  it('reads in full a session whose reader moved messages (a Claude Code branch)', async () => {
    const path = join(dir, 'branch-claude-code.jsonl');
    await copyFile(join(FIXTURES, 'formats/claude-code.jsonl'), path);
    const both = await bothWays(path, createStrategy('truncate'), { ...DEFAULT_POLICY, force: true, keepRecentTokens: 1 });
    expectSame(both);
    // The agent's own compaction (its compact_boundary) starts the span.
    expect(both.twoPass.plan).toMatchObject({ kind: 'compact', start: 7, cut: { index: 8 } });
    expect(both.twoPass.read).toBe('full');
    expect(both.twoPass.subject.messages.some(isSlim)).toBe(false);
  });

  it('reads a small file once, in full, by default', async () => {
    const path = join(dir, 'small-codex.jsonl');
    await copyFile(join(FIXTURES, 'formats/codex.jsonl'), path);
    const strategy = createStrategy('truncate');
    const { smallFileBytes: _, ...byDefault } = TWO_READS;
    const read = await readForCompaction(path, byDefault, strategy, await fixed(forcedPolicy(path, 0.3)));
    expect(read).toMatchObject({ read: 'full', plan: { kind: 'compact' } });
    expect(read.subject.messages.some(isSlim)).toBe(false);
    // A dry run only plans: the lean read, whatever the size.
    const dry = await readForCompaction(path, { ...byDefault, dryRun: true }, strategy, await fixed(forcedPolicy(path, 0.3)));
    expect(dry.read).toBe('lean');
  });

  it('reads a named pipe once, in full', async () => {
    const path = join(dir, 'pipe-bug.jsonl');
    await makeFifo(path);
    const strategy = createStrategy('truncate');
    const policy = await forcedPolicy(join(FIXTURES, 'bug.jsonl'), 0.3);
    // A named format: auto-detection would open the pipe a second time.
    const reading = readForCompaction(path, { ...TWO_READS, format: 'canonical' }, strategy, await fixed(policy));
    feed(await waitForReader(path), await readFile(join(FIXTURES, 'bug.jsonl'), 'utf8'));
    const read = await reading;
    expect(read).toMatchObject({ read: 'full', plan: { kind: 'compact' } });
    expect(read.subject.messages.some(isSlim)).toBe(false);
  });

  describe('with the summarizer', () => {
    let fake: FakeProvider;
    beforeAll(async () => {
      fake = await startFakeProvider();
    });
    afterAll(async () => {
      await fake.close();
    });

    /** The fake numbers its replies (summary-1, summary-2, …): the two reads' states differ in that number alone. */
    const unnumbered = (state: Record<string, unknown> | null) => JSON.parse(JSON.stringify(state).replace(/summary-\d+/g, 'summary-N')) as unknown;
    const expectSameSummary = (both: Both) => {
      expect(both.twoPass.plan).toEqual(both.full.plan);
      expect(both.fromTwoPass?.['summary']).toContain('fake summary-');
      expect(unnumbered(both.fromTwoPass)).toEqual(unnumbered(both.fromFull));
      expect(unnumbered(both.fromSmall)).toEqual(unnumbered(both.fromFull));
    };

    it('sends it the same transcript and writes the same sidecar', async () => {
      const settings = {
        ...SUMMARIZER_DEFAULTS,
        baseUrl: fake.url,
        model: 'fake-model',
        instructions: null,
        timeoutMs: 10_000,
        summarizerContext: 100_000,
        maxSummaryTokens: 2_000,
      };
      const client = createChatClient(settings, { apiKey: null, log: () => {}, verbose: false });
      const strategy = createSummarizeStrategy({ client, maxSummaryTokens: 2_000, summarizerContext: 100_000, instructions: null });
      const path = join(dir, 'summarize-bug.jsonl');
      await copyFile(join(FIXTURES, 'bug.jsonl'), path);
      const first = await bothWays(path, strategy, await forcedPolicy(path, 0.6));
      expectSameSummary(first);
      if (first.full.plan.kind !== 'compact') throw new Error('expected a compaction');
      await saveSidecar(path, await runCompaction(first.full.subject, first.full.plan, strategy, { now: NOW }));
      fake.requests.length = 0;
      const again = await bothWays(path, strategy, await forcedPolicy(path, 0.2));
      expect(again.twoPass.read).toBe('partial');
      expectSameSummary(again);
      // Three compactions in turn: the full read's, the two reads', the single read's.
      const third = fake.requests.length / 3;
      const [fromFull, fromTwoPass, fromSmall] = [0, 1, 2].map((at) => fake.requests.slice(at * third, (at + 1) * third));
      expect(fromFull!.length).toBeGreaterThan(0);
      expect(fromTwoPass!.map((request) => request.user)).toEqual(fromFull!.map((request) => request.user));
      expect(fromSmall!.map((request) => request.user)).toEqual(fromFull!.map((request) => request.user));
    });
  });
});
