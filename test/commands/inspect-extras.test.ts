/**
 * `inspect`'s per-session extras (growth attribution, largest outputs, repeated reads, the
 * recorded compactions' effects) are worked out only for a report that shows them: with --json,
 * or a session's text report; over several sessions without --detail the archive view reads the
 * row and the spend alone, and they are the same numbers either way.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inspectSessionTask } from '../../src/commands/inspect.js';
import { DEFAULT_POLICY_VALUES } from '../../src/config/policy.js';
import { GrowthFacts } from '../../src/growth/attribution.js';
import { printedText } from '../../src/pipeline/output.js';

const SESSION = 'fixtures/real/claude-code/agent-sessions_claude_small_schema-fixture.jsonl';

const options = (report: { json: boolean; detail: boolean }) => ({
  format: 'auto',
  tokenizer: 'heuristic' as const,
  strict: false,
  model: undefined,
  overrides: {},
  limits: {},
  gateLedger: 'spend' as const,
  top: 5,
  chart: false,
  all: false,
  policy: DEFAULT_POLICY_VALUES,
  batch: true,
  ...report,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('inspect of one session of several', () => {
  it('gathers no growth facts for the archive view alone, and gives the same row and spend as the --json run', async () => {
    const observe = vi.spyOn(GrowthFacts.prototype, 'observe');
    const alone = await inspectSessionTask.run({ path: SESSION }, options({ json: false, detail: false }));
    expect(observe).not.toHaveBeenCalled();
    expect(alone.printed).toBe('');
    const json = await inspectSessionTask.run({ path: SESSION }, options({ json: true, detail: false }));
    expect(observe).toHaveBeenCalled();
    expect(alone.row).toEqual(json.row);
    expect(alone.spend).toEqual(json.spend);
    expect(alone.spendKeys).toEqual(json.spendKeys);
    expect(alone.warnings).toEqual(json.warnings);
    expect(alone.row.recordedCompactions).toBe(JSON.parse(printedText(json.printed)).recorded_compactions.length);
  });

  it('makes the growth report for --detail in text', async () => {
    const observe = vi.spyOn(GrowthFacts.prototype, 'observe');
    const detail = await inspectSessionTask.run({ path: SESSION }, options({ json: false, detail: true }));
    expect(observe).toHaveBeenCalled();
    expect(printedText(detail.printed)).toContain('files read more than once');
  });
});
