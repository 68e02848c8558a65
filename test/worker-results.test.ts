/**
 * What `inspect` and `replay` send back from a worker thread: the report as it will be printed,
 * and nothing the main thread never reads. A long session's replay (every simulated call and
 * compaction) or its calls' keys would otherwise be copied into the main thread and held there
 * beside the report (docs/performance.md "Memory"). The printed bytes themselves are pinned by
 * test/golden.test.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectSessionTask } from '../src/commands/inspect.js';
import { replaySessionTask } from '../src/commands/replay.js';
import { DEFAULT_POLICY_VALUES } from '../src/config/policy.js';
import type { Printed } from '../src/pipeline/output.js';
import { printedText } from '../src/pipeline/output.js';
import { FIXTURES } from './helpers/cli.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const CLAUDE = join(FIXTURES, 'real/claude-code/claude-code-viewer_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl');

/** A report as text (a long record's JSON comes as bytes in pieces: pipeline/output.ts printedJson). */
const text = (printed: Printed): string => printedText(printed);

const READ = { format: 'auto', tokenizer: 'heuristic', strict: false } as const;

function replayOptions(json: boolean, html: boolean) {
  return {
    ...READ,
    names: ['custom'],
    policy: { ...DEFAULT_POLICY_VALUES, context_limit: 6_000 },
    model: undefined,
    overrides: {},
    limits: { maxBaseline: 1 },
    simulatedSummaryTokens: null,
    json,
    chart: false,
    html,
    batch: false,
    strategy: 'truncate',
    strategyOptions: {},
  } as const;
}

function inspectOptions(json: boolean, batch: boolean) {
  return { ...READ, model: undefined, overrides: {}, limits: {}, gateLedger: 'spend', top: 5, chart: false, all: false, detail: true, policy: DEFAULT_POLICY_VALUES, json, batch } as const;
}

describe('replay result', () => {
  it('with --json is the record as JSON text, with no page section unless --html asks for one, and the roll-up\'s few figures', async () => {
    const result = await replaySessionTask.run({ path: BUG }, replayOptions(true, false));
    expect(result.section).toBeNull();
    const record = JSON.parse(text(result.printed)) as { session: string; policies: unknown[] };
    expect(record.session).toBe(BUG);
    expect(record.policies).toHaveLength(1);
    // The gates still come back, by policy.
    expect(result.breaches.map((entry) => entry.policy)).toEqual(['custom']);
    // The roll-up reads a few fields of the record, not its turns.
    expect(result.rollup).toHaveLength(1);
    expect(Object.keys(result.rollup[0]!)).toEqual(['session', 'requests', 'input_tokens', 'output_tokens', 'cost', 'cost_priced_usd', 'unpriced_requests', 'cost_estimated_usd', 'spend_by_day', 'policies']);
    expect(Object.keys(result.rollup[0]!.policies[0]!)).toEqual(['name', 'totals', 'costs', 'savings', 'thrash']);
    // With --html the session's part of the page comes back as text, not the view it is made of.
    const withSection = await replaySessionTask.run({ path: BUG }, replayOptions(true, true));
    expect(withSection.section?.path).toBe(BUG);
    expect(withSection.section?.html).toContain('<svg class="baseline"');
    expect(withSection.printed).toBe(result.printed);
  });

  it('without --json is the text report', async () => {
    const result = await replaySessionTask.run({ path: BUG }, replayOptions(false, false));
    expect(result.section).toBeNull();
    expect(() => JSON.parse(text(result.printed))).toThrow();
    expect(text(result.printed)).toContain(BUG);
  });
});

describe('inspect result', () => {
  it('names the calls its spend counted only when other sessions of the run may hold them', async () => {
    const alone = await inspectSessionTask.run({ path: CLAUDE }, inspectOptions(true, false));
    const batch = await inspectSessionTask.run({ path: CLAUDE }, inspectOptions(true, true));
    expect(alone.spendKeys).toEqual([]);
    expect(batch.spendKeys.length).toBeGreaterThan(0);
    expect(alone.printed).toBe(batch.printed);
    expect((JSON.parse(text(alone.printed)) as { session: string }).session).toBe(CLAUDE);
  });

  it('without --json is the text report', async () => {
    const result = await inspectSessionTask.run({ path: BUG }, inspectOptions(false, false));
    expect(() => JSON.parse(text(result.printed))).toThrow();
    expect(text(result.printed)).toContain(BUG);
  });
});
