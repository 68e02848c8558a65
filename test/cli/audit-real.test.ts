/**
 * Issue 8's audit of real compactions: the two LLM summaries pi wrote in the real
 * pi-mono_before-compaction_v1.jsonl, beside extract and truncate on the same session.
 */
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../helpers/cli.js';

const PI_BEFORE = 'fixtures/real/pi/pi-mono_before-compaction_v1.jsonl';

describe('compactor audit on pi-mono_before-compaction_v1.jsonl', () => {
  it("reports the retention of pi's two real LLM compactions, and extract keeps every fact", async () => {
    const result = await runCli(['audit', '--json', '--strategy', 'extract,truncate', PI_BEFORE]);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    const recorded = record!.compactions.filter((c: any) => c.source === 'recorded');
    // pi's compactions at lines 360 and 629 keep from entries 293 and 551 (the messages at 285 and 534).
    expect(recorded.map((c: any) => c.first_kept_index)).toEqual([285, 534]);
    expect(recorded.map((c: any) => c.facts)).toEqual([
      { file: { found: 11, kept: 9 }, command: { found: 33, kept: 1 }, error: { found: 10, kept: 5 }, directive: { found: 27, kept: 4 } },
      { file: { found: 14, kept: 12 }, command: { found: 82, kept: 3 }, error: { found: 38, kept: 5 }, directive: { found: 62, kept: 10 } },
    ]);
    expect(recorded[0].retention).toBeCloseTo(19 / 81, 10);
    expect(recorded[1].retention).toBeCloseTo(30 / 196, 10);
    const byStrategy = Object.fromEntries(record!.strategies.map((s: any) => [s.strategy, s]));
    expect(byStrategy.extract).toMatchObject({ compactions: 1, retention: 1, directives_found: 44, directives_kept: 44 });
    expect(byStrategy.truncate.retention).toBeLessThan(0.2);
  });
});
