/**
 * `replay`'s recorded figure is `inspect`'s bill (issue 30 item 4, issue 29 item 4): over every
 * fixture session in one run, each session's recorded cost is its `spend` to the last digit (a
 * fork's copies billed once in both, subagent and review rollouts where inspect puts them, the
 * estimate for calls with no usage apart), the roll-ups' totals agree, and the text report and
 * the HTML page print the same figure.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/report/format.js';
import { FIXTURES, fixtureSessionFiles, jsonLines, runCli } from '../helpers/cli.js';

/** The Claude Code `--fork-session` copy whose parent's calls it holds unmarked (billed-once.ts). */
const FORK_COPY = join(FIXTURES, 'agents', 'claude-code', 'branches-compact-abort', 'projects', '-tmp-compactor-agents-project', 'c0de0002-0000-4000-8000-0000000000f0.jsonl');

const files = fixtureSessionFiles();
let inspected: Record<string, any>[] = [];
let replayed: Record<string, any>[] = [];
let text = '';
let page = '';
let scratch = '';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'compactor-bill-'));
  const html = join(scratch, 'page.html');
  const [inspect, replay, report] = await Promise.all([
    runCli(['inspect', '--json', ...files]),
    runCli(['replay', '--json', ...files]),
    runCli(['replay', '--html', html, ...files]),
  ]);
  for (const result of [inspect, replay, report]) expect(result.exitCode, result.stderr).toBe(0);
  inspected = jsonLines(inspect.stdout);
  replayed = jsonLines(replay.stdout);
  text = report.stdout;
  page = await readFile(html, 'utf8');
}, 300_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

const sessions = (records: Record<string, any>[]) => records.filter((record) => !('rollup' in record));
const rollupOf = (records: Record<string, any>[]) => records.find((record) => 'rollup' in record)!['rollup'];
/** The recorded figure as the text and the page print it: the bill, or `unknown` when a billed call has no price. */
const printed = (cost: { total_usd: number } | null) => (cost === null ? 'unknown' : formatUsd(cost.total_usd));

describe('replay over every fixture session, against inspect over the same list', () => {
  it('records the same sessions, in the same order', () => {
    expect(sessions(replayed).length).toBeGreaterThanOrEqual(50);
    expect(sessions(replayed).map((record) => record['session'])).toEqual(sessions(inspected).map((record) => record['session']));
  });

  it("has each session's recorded cost equal to its spend, to the last digit, the no-usage estimate apart", () => {
    const spend = new Map(sessions(inspected).map((record) => [record['session'], record['spend']]));
    let estimated = 0;
    for (const record of sessions(replayed)) {
      const name = relative(FIXTURES, String(record['session']));
      const bill = spend.get(record['session']);
      expect(record['cost'], name).toEqual(bill.cost);
      expect(record['billed_requests'], name).toBe(bill.requests);
      if (bill.cost !== null) expect(record['cost_priced_usd'], name).toBe(bill.cost.total_usd);
      if (record['estimated_requests'] > 0 && record['cost_estimated_usd'] > 0) estimated++;
    }
    // Some sessions have calls with no usage, and their estimate is in none of the figures above.
    expect(estimated).toBeGreaterThan(0);
  });

  it("counts a fork's copies of its parent's calls once, in the parent, as inspect does", async () => {
    const [copy] = sessions(replayed).filter((record) => record['session'] === FORK_COPY);
    const alone = jsonLines((await runCli(['replay', '--json', FORK_COPY])).stdout)[0]!;
    const inspectedAlone = jsonLines((await runCli(['inspect', '--json', FORK_COPY])).stdout)[0]!;
    // Alone, nothing else bills the copies; beside its parent they are the parent's.
    expect(alone['cost']).toEqual(inspectedAlone['spend'].cost);
    expect(copy!['cost'].total_usd).toBeLessThan(alone['cost'].total_usd);
    expect(copy!['billed_requests']).toBeLessThan(alone['billed_requests']);
  });

  it("has the roll-up's recorded total equal to inspect's roll-up total", () => {
    const ours = rollupOf(replayed);
    const theirs = rollupOf(inspected)['total'];
    expect(ours['sessions']).toBe(rollupOf(inspected)['sessions']);
    expect(ours['cost_usd']).toBeCloseTo(theirs['cost']['total_usd'], 9);
    expect(ours['unpriced_requests']).toBe(theirs['unpriced_requests']);
    expect(ours['cost_estimated_usd']).toBeGreaterThan(0);
    // The bill by day too: the same days, the same sessions in each, the same dollars.
    const days = new Map(rollupOf(inspected)['by_day'].map((row: Record<string, any>) => [row['day'], row]));
    expect(ours['spend_by_day'].length).toBe(days.size);
    for (const day of ours['spend_by_day']) {
      const theirs = days.get(day.day) as Record<string, any>;
      expect(day.sessions, String(day.day)).toBe(theirs['sessions']);
      expect(day.cost_usd, String(day.day)).toBeCloseTo(theirs['cost']['total_usd'], 9);
    }
  });

  it('prints the same recorded figure in the text report and on the HTML page', () => {
    const bills = sessions(inspected).map((record) => printed(record['spend'].cost));
    const total = formatUsd(rollupOf(inspected)['total']['cost']['total_usd']);
    // A line per session in input order, then the roll-up's.
    expect([...text.matchAll(/^cost as recorded: (.*)$/gm)].map((match) => match[1])).toEqual([...bills, total]);
    // The page opens with the roll-up, then a section per session.
    expect([...page.matchAll(/Cost as recorded: <span class="total">([^<]*)<\/span>/g)].map((match) => match[1])).toEqual([total, ...bills]);
  });
});
