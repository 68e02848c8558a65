/**
 * The baseline per turn of one session as an inline SVG line chart: before and under each policy,
 * the window dashed, a filled dot where a policy compacted, a hollow square where it pruned, a
 * ring where the agent compacted itself. Made to be read: the legend sits below the plot, never
 * on a line; policies whose lines are the same are one line named after all of them; where lines
 * run together, each is drawn thinner than the one below it, so every colour still shows.
 * Pure: returns the SVG.
 */
import { formatTokens } from '../report/format.js';
import type { LegendEntry } from '../report/html.js';
import { escapeHtml, legendRows, px, tickStep } from '../report/html.js';
import type { ReplayView } from './text.js';

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2'];
export const BEFORE_COLOUR = '#444444';

/** What a turn's point carries: our compaction, a pruning, the agent's own compaction. */
interface Marks {
  readonly compacted: boolean;
  readonly pruned: boolean;
  readonly recorded: boolean;
}

/** One line as drawn: every series with these values and marks. */
interface Line {
  readonly names: readonly string[];
  readonly colour: string;
  readonly values: readonly number[];
  readonly marks: readonly Marks[];
}

const NO_MARKS: Marks = { compacted: false, pruned: false, recorded: false };
const BASE_WIDTH = 2.5;
/** What each later line that meets a line adds to its width: the border of it that stays in sight. */
const WIDTH_STEP = 2;
const MAX_WIDTH = 12;

function sameLine(a: Pick<Line, 'values' | 'marks'>, b: Pick<Line, 'values' | 'marks'>): boolean {
  return a.values.every((value, i) => value === b.values[i] && a.marks[i]!.compacted === b.marks[i]!.compacted && a.marks[i]!.pruned === b.marks[i]!.pruned && a.marks[i]!.recorded === b.marks[i]!.recorded);
}

/** Points closer than this on the page are drawn over each other. */
const TOUCHING_PX = 2;

/**
 * The stroke width of each segment (turn i to i + 1) of line `at`, given every line's points'
 * heights on the page: wider by WIDTH_STEP for each later line drawn over the same segment (both
 * ends within TOUCHING_PX), so that its edges stay in sight.
 */
function segmentWidths(heights: readonly (readonly number[])[], at: number): number[] {
  const mine = heights[at]!;
  const near = (other: readonly number[], i: number) => Math.abs(other[i]! - mine[i]!) <= TOUCHING_PX;
  const widths: number[] = [];
  for (let i = 0; i + 1 < mine.length; i++) {
    const over = heights.slice(at + 1).filter((later) => near(later, i) && near(later, i + 1)).length;
    widths.push(Math.min(MAX_WIDTH, BASE_WIDTH + WIDTH_STEP * over));
  }
  return widths;
}

/** The series of the view, the identical ones merged. */
function linesOf(view: ReplayView): Line[] {
  const turns = view.outcomes[0]?.result.turns ?? [];
  const series = [
    { name: 'before', colour: BEFORE_COLOUR, values: turns.map((turn) => turn.baselineBefore), marks: turns.map((turn) => (turn.recorded.length > 0 ? { ...NO_MARKS, recorded: true } : NO_MARKS)) },
    ...view.outcomes.map((outcome, i) => ({
      name: outcome.result.policy.name,
      colour: PALETTE[i % PALETTE.length]!,
      values: outcome.result.turns.map((turn) => turn.baselineAfter),
      marks: outcome.result.turns.map((turn) => ({ compacted: turn.compactions.length > 0, pruned: turn.prunes.length > 0, recorded: false })),
    })),
  ];
  const lines: Line[] = [];
  for (const entry of series) {
    const same = lines.find((line) => sameLine(line, entry));
    if (same) (same.names as string[]).push(entry.name);
    else lines.push({ names: [entry.name], colour: entry.colour, values: entry.values, marks: entry.marks });
  }
  return lines;
}

function circle(cx: number, cy: number, r: number, colour: string, filled: boolean, kind: string): string {
  return `<circle class="${kind}" cx="${px(cx)}" cy="${px(cy)}" r="${px(r)}" ${filled ? `fill="${colour}"` : `fill="#fff" stroke="${colour}" stroke-width="2"`}/>`;
}

function square(cx: number, cy: number, half: number, colour: string): string {
  return `<rect class="pruning" x="${px(cx - half)}" y="${px(cy - half)}" width="${px(2 * half)}" height="${px(2 * half)}" fill="#fff" stroke="${colour}" stroke-width="2"/>`;
}

/**
 * The marks at one point: a pruning's square behind a compaction's dot, and the agent's ring;
 * `size` grows with the lines drawn over this one, so a later line's mark does not hide it.
 */
function marksAt(marks: Marks, x: number, y: number, colour: string, size: number): string {
  let svg = '';
  if (marks.pruned) svg += square(x, y, size + 1.5, colour);
  if (marks.compacted) svg += circle(x, y, size, colour, true, 'compaction');
  if (marks.recorded) svg += circle(x, y, size + 1, colour, false, 'agent-compaction');
  return svg;
}

/** A line's points as polylines, one per run of segments of one width. */
function strokes(points: readonly string[], widths: readonly number[], colour: string, title: string): string {
  if (points.length === 1) return `<circle cx="${points[0]!.split(',')[0]}" cy="${points[0]!.split(',')[1]}" r="${px(BASE_WIDTH)}" fill="${colour}"><title>${title}</title></circle>`;
  let svg = '';
  let from = 0;
  for (let i = 1; i <= widths.length; i++) {
    if (i < widths.length && widths[i] === widths[from]) continue;
    svg += `<polyline fill="none" stroke="${colour}" stroke-width="${px(widths[from]!)}" stroke-linejoin="round" stroke-linecap="round" points="${points.slice(from, i + 1).join(' ')}"><title>${title}</title></polyline>`;
    from = i;
  }
  return svg;
}

const lineSwatch = (colour: string) => `<line x1="2" x2="24" y1="6" y2="6" stroke="${colour}" stroke-width="${BASE_WIDTH}"/>`;

/** The legend: a line each, then the marks that appear, then the window. */
function legendEntries(lines: readonly Line[], window: number): LegendEntry[] {
  const entries: LegendEntry[] = lines.map((line) => ({ swatch: lineSwatch(line.colour), label: line.names.join(' = ') }));
  const any = (mark: keyof Marks) => lines.some((line) => line.marks.some((marks) => marks[mark]));
  if (any('compacted')) entries.push({ swatch: circle(13, 6, 4.5, '#555', true, 'compaction'), label: 'a compaction' });
  if (any('pruned')) entries.push({ swatch: square(13, 6, 5, '#555'), label: 'a pruning' });
  if (any('recorded')) entries.push({ swatch: circle(13, 6, 5, '#555', false, 'agent-compaction'), label: "the agent's own compaction" });
  entries.push({ swatch: '<line x1="2" x2="24" y1="6" y2="6" stroke="#000" stroke-dasharray="6 4"/>', label: `window ${formatTokens(window)}` });
  return entries;
}

export function baselineChart(view: ReplayView): string {
  const turns = view.outcomes[0]?.result.turns ?? [];
  const lines = linesOf(view);
  const width = 760;
  const plot = { left: 72, right: width - 16, top: 16, bottom: 16 + 260 };
  const max = Math.max(1, view.contextWindow, ...lines.flatMap((line) => line.values));
  const step = tickStep(max);
  const top = Math.ceil(max / step) * step;
  // The first and last turns a little inside the axes, so a wide line's end stays off the labels.
  const inset = 10;
  const x = (i: number) => plot.left + inset + (turns.length <= 1 ? (plot.right - plot.left) / 2 - inset : (i / (turns.length - 1)) * (plot.right - plot.left - 2 * inset));
  const y = (value: number) => plot.bottom - (value / top) * (plot.bottom - plot.top);
  const parts: string[] = [];
  for (let value = 0; value <= top; value += step) {
    parts.push(
      `<line x1="${plot.left}" x2="${plot.right}" y1="${px(y(value))}" y2="${px(y(value))}" stroke="#e0e0e0"/>`,
      `<text x="${plot.left - 6}" y="${px(y(value) + 4)}" text-anchor="end">${formatTokens(value)}</text>`,
    );
  }
  const labelEvery = Math.max(1, Math.ceil(turns.length / 20));
  turns.forEach((turn, i) => {
    if (i % labelEvery === 0) parts.push(`<text x="${px(x(i))}" y="${plot.bottom + 16}" text-anchor="middle">${turn.turn}</text>`);
  });
  parts.push(`<text x="${px((plot.left + plot.right) / 2)}" y="${plot.bottom + 32}" text-anchor="middle">turn</text>`);
  const windowY = y(view.contextWindow);
  parts.push(`<line class="window" x1="${plot.left}" x2="${plot.right}" y1="${px(windowY)}" y2="${px(windowY)}" stroke="#000" stroke-dasharray="6 4"/>`);
  const heights = lines.map((line) => line.values.map(y));
  const widths = lines.map((_, at) => segmentWidths(heights, at));
  lines.forEach((line, at) => {
    const points = line.values.map((value, i) => `${px(x(i))},${px(y(value))}`);
    parts.push(`<g class="series">${strokes(points, widths[at]!, line.colour, escapeHtml(line.names.join(' = ')))}</g>`);
  });
  // Marks over every line, so no line covers a dot; a point's size follows its widest segment.
  const marks: string[] = [];
  lines.forEach((line, at) => {
    const around = (i: number) => Math.max(widths[at]![i - 1] ?? BASE_WIDTH, widths[at]![i] ?? BASE_WIDTH);
    line.values.forEach((value, i) => marks.push(marksAt(line.marks[i]!, x(i), y(value), line.colour, 3 + around(i) / 2)));
  });
  parts.push(`<g class="marks">${marks.join('')}</g>`);
  const legend = legendRows(legendEntries(lines, view.contextWindow), plot.left, plot.bottom + 44, plot.right - plot.left);
  const height = plot.bottom + 44 + legend.height + 6;
  return `<svg class="baseline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="baseline per turn">${parts.join('')}${legend.svg}</svg>`;
}
