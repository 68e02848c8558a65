/**
 * `replay --html`'s baseline chart as a person sees it in Chromium (issue 31 item 22): the legend
 * below the plot, on no line; every policy's line in sight, also where lines are the same or run
 * together; a mark for each pruning. Measured in the page as Chromium lays it out: what is drawn
 * where, and which element is on top at a point.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, runCli, scratchCopy } from '../helpers/cli.js';
import { ensureChromium, measurePage } from '../helpers/chromium.js';

const BUG = join(FIXTURES, 'bug.jsonl');
const POLICIES = ['pi', 'codex', 'coop', 'opencode'];

interface Chart {
  readonly legendTop: number;
  readonly plotBottom: number;
  readonly onLegend: readonly string[];
  /** By line colour: its segments in sight and out of it. */
  readonly segments: Readonly<Record<string, { readonly shown: number; readonly hidden: number }>>;
  readonly entries: readonly { readonly label: string; readonly colour: string }[];
  readonly prunings: readonly { readonly colour: string; readonly visible: boolean }[];
}

/** Runs in the page: per baseline chart, where the legend is, which line colours show, the prunings. */
const MEASURE = `
const box = (element) => { const r = element.getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; };
const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
const charts = [];
for (const svg of document.querySelectorAll('svg.baseline')) {
  svg.scrollIntoView({ block: 'center' });
  const legend = svg.querySelector('.legend');
  const legendBox = box(legend);
  const drawn = [...svg.querySelectorAll('.series *, .marks *, line.window')];
  const plotBottom = Math.max(...drawn.map((element) => box(element).bottom));
  const onLegend = drawn.filter((element) => meet(box(element), legendBox)).map((element) => element.outerHTML.slice(0, 80));
  // Per line colour, the segments (turn to turn) whose colour is on top somewhere across their
  // middle, and those whose is not: what the eye finds of each line, all the way along.
  const matrix = svg.getScreenCTM();
  const segments = {};
  for (const line of svg.querySelectorAll('.series polyline')) {
    const colour = line.getAttribute('stroke');
    segments[colour] ??= { shown: 0, hidden: 0 };
    const points = [...line.points].map((point) => new DOMPoint(point.x, point.y).matrixTransform(matrix));
    for (let i = 0; i + 1 < points.length; i++) {
      const x = (points[i].x + points[i + 1].x) / 2;
      const y = (points[i].y + points[i + 1].y) / 2;
      let shown = false;
      for (let dy = -8; dy <= 8 && !shown; dy += 0.5) {
        const hit = document.elementFromPoint(x, y + dy);
        shown = hit !== null && hit.tagName === 'polyline' && hit.getAttribute('stroke') === colour;
      }
      segments[colour][shown ? 'shown' : 'hidden']++;
    }
  }
  const entries = [...legend.querySelectorAll('.legend-entry')].map((entry) => {
    const swatch = entry.firstElementChild;
    return { label: entry.textContent, colour: swatch.getAttribute('stroke') || swatch.getAttribute('fill') };
  });
  // A pruning's square is in sight when its own edge is on top there.
  const prunings = [...svg.querySelectorAll('.marks .pruning')].map((mark) => {
    const r = box(mark);
    return { colour: mark.getAttribute('stroke'), visible: document.elementFromPoint((r.left + r.right) / 2, r.top + 1) === mark };
  });
  charts.push({ legendTop: legendBox.top, plotBottom, onLegend, segments, entries, prunings });
}
return charts;
`;

let dir = '';
let cleanup: () => Promise<void> = async () => {};

beforeAll(async () => {
  await ensureChromium();
  ({ dir, cleanup } = await scratchCopy('bug.jsonl'));
}, 600_000);
afterAll(() => cleanup());

async function chartOf(extra: readonly string[], name: string): Promise<Chart> {
  const page = join(dir, name);
  const result = await runCli(['replay', '--policy', POLICIES.join(','), ...extra, '--html', page, join(dir, 'bug.jsonl')]);
  expect(result.exitCode).toBe(0);
  const charts = await measurePage<Chart[]>(page, MEASURE);
  expect(charts).toHaveLength(1);
  return charts[0]!;
}

/** Every series in the legend, by name, with its line's colour. */
function colours(chart: Chart): Map<string, string> {
  const byName = new Map<string, string>();
  for (const entry of chart.entries) for (const name of entry.label.split(' = ')) byName.set(name, entry.colour);
  return byName;
}

describe('the baseline chart, read in Chromium', () => {
  it("puts the legend below the plot, on no line, the window's included", async () => {
    for (const chart of [await chartOf([], 'window.html'), await chartOf(['--context-limit', '80000'], 'small.html')]) {
      expect(chart.onLegend).toEqual([]);
      expect(chart.legendTop).toBeGreaterThanOrEqual(chart.plotBottom);
      expect(chart.entries.some((entry) => /^window \d/.test(entry.label))).toBe(true);
    }
  });

  it('names policies with the same line together, and shows every line that runs with another', async () => {
    // At Opus's window nothing compacts: before, pi, codex and coop are one line; opencode prunes.
    const same = await chartOf([], 'same.html');
    expect(same.entries.map((entry) => entry.label)).toContain('before = pi = codex = coop');
    // At 80,000 every policy compacts, codex's and opencode's lines run together from turn 4.
    const together = await chartOf(['--context-limit', '80000'], 'together.html');
    for (const chart of [same, together]) {
      const byName = colours(chart);
      for (const name of ['before', ...POLICIES]) {
        expect(byName.has(name), `${name} is in the legend`).toBe(true);
        const segments = chart.segments[byName.get(name)!]!;
        expect(segments.shown, `${name}'s line is drawn`).toBeGreaterThan(0);
        expect(segments.hidden, `${name}'s line is in sight all the way`).toBe(0);
      }
    }
    const series = colours(together);
    expect(new Set(['before', ...POLICIES].map((name) => series.get(name))).size).toBe(POLICIES.length + 1);
  });

  it('marks a pruning, in sight and in the legend', async () => {
    const chart = await chartOf([], 'prune.html');
    const opencode = colours(chart).get('opencode');
    expect(chart.prunings.length).toBeGreaterThan(0);
    expect(chart.prunings.every((mark) => mark.visible && mark.colour === opencode)).toBe(true);
    expect(chart.entries.map((entry) => entry.label)).toContain('a pruning');
  });
});
