/**
 * `replay --html`: the page is self-contained, renders in headless Chromium into a chart that is
 * not blank, and carries the totals the terminal shows.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { ensureChromium, runChromium } from '../helpers/chromium.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const ARGS = ['replay', '--policy', 'pi,codex,coop', '--context-limit', '80000'];

let dir = '';
let cleanup: () => Promise<void> = async () => {};
let page = '';
let record: Record<string, any> = {};

beforeAll(async () => {
  await ensureChromium();
  ({ dir, cleanup } = await scratchCopy('bug.jsonl'));
  page = join(dir, 'report.html');
  const result = await runCli([...ARGS, '--html', page, BUG]);
  expect(result.exitCode).toBe(0);
  record = jsonLines((await runCli([...ARGS, '--json', BUG])).stdout)[0]!;
}, 600_000);
afterAll(() => cleanup());

describe('replay --html', () => {
  it('writes a page that loads nothing from anywhere', async () => {
    const html = await readFile(page, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script|<link|<img|src=|@import|url\(/i);
  });

  it('renders a chart that is not blank', async () => {
    const shot = join(dir, 'report.png');
    await runChromium(pathToFileURL(page).href, ['--window-size=1000,1400', '--hide-scrollbars', `--screenshot=${shot}`]);
    const png = PNG.sync.read(await readFile(shot));
    expect(png.width).toBe(1000);
    let ink = 0;
    let lineBlue = 0;
    for (let i = 0; i < png.data.length; i += 4) {
      const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
      if (r < 200 || g < 200 || b < 200) ink++;
      // pi's line and legend: #1f77b4.
      if (Math.abs(r - 0x1f) < 24 && Math.abs(g - 0x77) < 24 && Math.abs(b - 0xb4) < 24) lineBlue++;
    }
    const pixels = png.width * png.height;
    expect(ink / pixels).toBeGreaterThan(0.01); // a blank page: 0; this report: about 0.03
    expect(lineBlue).toBeGreaterThan(200);
  });

  it('shows the totals and every policy in the rendered page', async () => {
    const dom = await runChromium(pathToFileURL(page).href, ['--dump-dom']);
    const usd = (value: number) => `$${value.toFixed(2)}`;
    expect(dom).toContain('4,277,423');
    expect(dom).toContain(usd(record.cost.total_usd));
    for (const policy of record.policies) {
      expect(dom).toContain(`<td class="l">${policy.name}</td>`);
      expect(dom).toContain(usd(policy.costs.cost_usd));
      expect(dom).toContain(policy.totals.input_tokens_after.toLocaleString('en-US'));
    }
    expect(dom).toMatch(/<polyline[^>]+stroke="#1f77b4"/);
  });
});
