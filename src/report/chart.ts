/**
 * Terminal bar charts in plain characters (no colour, no box drawing): one bar per value, bars
 * of a turn grouped together, all on one scale so they compare at a glance.
 */
import { formatTokens } from './format.js';

export interface ChartGroup {
  /** e.g. the turn number. */
  readonly label: string;
  readonly bars: readonly { readonly series: string; readonly value: number; readonly mark?: string }[];
}

export interface ChartOptions {
  readonly title: string;
  readonly width?: number;
  /** A value to draw as a `|` column across every bar (e.g. the context window). */
  readonly limit?: { readonly label: string; readonly value: number };
}

const FILL = '#';
/** A limit more than this many times the largest bar is named, not drawn. */
const OFF_SCALE = 3;

/** The largest of `values` and `floor`; not Math.max(...values), which a long session overflows. */
function largestOf(values: Iterable<number>, floor: number): number {
  let most = floor;
  for (const value of values) if (value > most) most = value;
  return most;
}

/** Renders groups of bars; every line fits `width` columns. */
export function renderBarChart(groups: readonly ChartGroup[], options: ChartOptions): string {
  const width = options.width ?? 80;
  const labelWidth = largestOf(groups.map((group) => group.label.length), 0);
  const seriesWidth = largestOf(groups.flatMap((group) => group.bars.map((bar) => bar.series.length)), 0);
  const values = groups.flatMap((group) => group.bars.map((bar) => bar.value));
  const valueWidth = largestOf(values.map((value) => formatTokens(value).length), 1) + 2;
  const prefix = labelWidth + (seriesWidth > 0 ? seriesWidth + 1 : 0) + 2;
  const barWidth = Math.max(10, width - prefix - valueWidth - 2);
  const largest = largestOf(values, 1);
  // A limit far above every bar (a 1M window over 90k baselines) would squash them: leave it off the scale.
  const limit = options.limit && options.limit.value <= largest * OFF_SCALE ? options.limit : null;
  const scaleMax = Math.max(largest, limit?.value ?? 0);
  const columns = (value: number) => Math.round((value / scaleMax) * barWidth);
  const limitColumn = limit ? Math.min(barWidth, columns(limit.value)) : null;

  const perChar = Math.max(1, Math.round(scaleMax / barWidth));
  const legend = [`${FILL} = ${formatTokens(perChar)} tokens`];
  if (limit) legend.push(`| = ${limit.label} ${formatTokens(limit.value)}`);
  else if (options.limit) legend.push(`${options.limit.label} ${formatTokens(options.limit.value)} off the scale`);
  const lines = [`${options.title} (${legend.join(', ')})`];
  for (const group of groups) {
    group.bars.forEach((bar, position) => {
      const label = (position === 0 ? group.label : '').padStart(labelWidth);
      const series = seriesWidth > 0 ? `${bar.series.padEnd(seriesWidth)} ` : '';
      const cells: string[] = Array.from({ length: barWidth }, (_, column) => (column < columns(bar.value) ? FILL : ' '));
      if (limitColumn !== null && limitColumn > 0) cells[limitColumn - 1] = '|';
      const value = `${formatTokens(bar.value)}${bar.mark ?? ''}`;
      lines.push(`${label}  ${series}${cells.join('')}  ${value}`.trimEnd());
    });
  }
  return lines.join('\n');
}
