/**
 * `replay --html` over many sessions (issue 29 item 4): the page opens with the what-if across
 * them, read in Chromium as a person would: the saved dollars per policy and the spend per day as
 * charts whose labels do not run into each other, the roll-up's figures, and the sessions each
 * policy saves most in, each a link to its own section further down.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { ensureChromium, measurePage, runChromium } from '../helpers/chromium.js';

const ARGS = ['replay', '--policy', 'pi,codex,claude-code,opencode', '--context-limit', '100000'];

interface Page {
  readonly headings: readonly string[];
  readonly summaryFirst: boolean;
  readonly summary: string;
  readonly saved: readonly string[];
  readonly spendBars: readonly string[];
  readonly spendLabels: readonly string[];
  /** Text labels of the summary's charts drawn over one another. */
  readonly clashes: readonly string[];
  readonly links: readonly { readonly text: string; readonly target: string | null; readonly inView: boolean }[];
}

/** Runs in the page: what the summary shows, and where its links lead. */
const MEASURE = `
const box = (element) => element.getBoundingClientRect();
const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
const summary = document.querySelector('#summary');
const clashes = [];
for (const svg of summary.querySelectorAll('svg')) {
  const texts = [...svg.querySelectorAll('text')];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => { if (meet(box(a), box(b))) clashes.push(a.textContent + ' / ' + b.textContent); }));
}
const links = [...summary.querySelectorAll('a[href^="#"]')].map((link) => {
  const section = document.getElementById(link.getAttribute('href').slice(1));
  // Followed as a person clicks it: the section's heading comes to the top of the window.
  if (section) section.scrollIntoView();
  const inView = section !== null && Math.abs(box(section).top) < 2;
  return { text: link.textContent, target: section && section.querySelector('h2').textContent, inView };
});
window.scrollTo(0, 0);
return {
  headings: [...document.querySelectorAll('h2')].map((h) => h.textContent),
  summaryFirst: document.querySelector('section') === summary,
  summary: summary.querySelector('p').textContent,
  saved: [...summary.querySelectorAll('svg.saved text')].map((t) => t.textContent),
  spendBars: [...summary.querySelectorAll('svg.spend rect title')].map((t) => t.textContent),
  spendLabels: [...summary.querySelectorAll('svg.spend text')].map((t) => t.textContent),
  clashes,
  links,
};
`;

const usd = (value: number) => (value < 0 && value.toFixed(2) !== '-0.00' ? `-$${(-value).toFixed(2)}` : `$${Math.abs(value).toFixed(2)}`);

let dir = '';
let cleanup: () => Promise<void> = async () => {};
let page = '';
let rollup: Record<string, any> = {};
let measured: Page;

beforeAll(async () => {
  await ensureChromium();
  ({ dir, cleanup } = await scratchCopy('real'));
  page = join(dir, 'archive.html');
  const sessions = join(dir, 'real');
  expect((await runCli([...ARGS, '--html', page, sessions], { cwd: dir })).exitCode).toBe(0);
  rollup = jsonLines((await runCli([...ARGS, '--json', sessions], { cwd: dir })).stdout).pop()!['rollup'];
  measured = await measurePage<Page>(page, MEASURE);
}, 600_000);
afterAll(() => cleanup());

describe('replay --html over many sessions', () => {
  it('opens with the what-if across the sessions, before any session', () => {
    expect(measured.summaryFirst).toBe(true);
    expect(measured.headings[0]).toBe(`What-if across ${rollup.sessions} sessions`);
    expect(measured.headings).toHaveLength(1 + rollup.sessions);
    expect(measured.summary).toContain(`Cost as recorded: ${usd(rollup.cost_usd)}`);
  });

  it('charts the dollars each policy saves, cache-aware and naive, with their figures', () => {
    for (const policy of rollup.policies) {
      expect(measured.saved).toContain(policy.name);
      expect(measured.saved).toContain(usd(policy.saved_cache_aware_usd));
      expect(measured.saved).toContain(usd(policy.saved_naive_usd));
    }
  });

  it('charts the spend per day, a column a day', () => {
    expect(measured.spendBars).toHaveLength(rollup.spend_by_day.length);
    rollup.spend_by_day.forEach((day: { day: string | null; cost_usd: number }, i: number) => {
      expect(measured.spendBars[i]!.startsWith(`${day.day ?? 'undated'}: ${usd(day.cost_usd)}`)).toBe(true);
    });
    expect(measured.spendLabels).toContain(rollup.spend_by_day[0].day);
  });

  it('draws no label of its charts over another', () => {
    expect(measured.clashes).toEqual([]);
  });

  it("links each policy's top sessions to their sections", () => {
    const expected = rollup.policies.flatMap((policy: { top_sessions: { session: string }[] }) => policy.top_sessions.map((entry) => entry.session));
    expect(measured.links.map((link) => link.text)).toEqual(expected);
    for (const link of measured.links) {
      expect(link.target).toBe(link.text);
      expect(link.inView).toBe(true);
    }
  });

  it('renders in a real browser into a page that is not blank', async () => {
    const shot = join(dir, 'archive.png');
    await runChromium(pathToFileURL(page).href, ['--window-size=1000,1400', '--hide-scrollbars', `--screenshot=${shot}`]);
    const png = PNG.sync.read(await readFile(shot));
    let ink = 0;
    let bars = 0;
    for (let i = 0; i < png.data.length; i += 4) {
      const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
      if (r < 200 || g < 200 || b < 200) ink++;
      // The spend-per-day columns: #4a7ab0.
      if (Math.abs(r - 0x4a) < 16 && Math.abs(g - 0x7a) < 16 && Math.abs(b - 0xb0) < 16) bars++;
    }
    expect(ink / (png.width * png.height)).toBeGreaterThan(0.02);
    expect(bars).toBeGreaterThan(500);
  });
});

describe('replay --html over one session', () => {
  it('has no what-if across sessions', async () => {
    const one = join(dir, 'one.html');
    expect((await runCli([...ARGS, '--html', one, join(FIXTURES, 'bug.jsonl')])).exitCode).toBe(0);
    const html = await readFile(one, 'utf8');
    expect(html).not.toContain('id="summary"');
    expect(html).toContain('id="session-1"');
  });
});
