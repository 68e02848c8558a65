/**
 * `replay --html FILE`: one self-contained page (inline CSS and SVG, no script, nothing loaded
 * from anywhere) with, per session, a chart of the baseline per turn before and under each
 * policy, and the token and cost tables the terminal shows. Pure: returns the page's text;
 * the command writes it.
 */
import { formatTokens } from '../report/format.js';
import type { ReplayRollup } from './rollup.js';
import type { ReplayView, TableData } from './text.js';
import { baselineTable, COST_LEGEND, costTable, recordedCostText, tokenTable } from './text.js';

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2'];
const BEFORE_COLOUR = '#444444';

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A round step for about five axis ticks. */
function tickStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(Math.max(1, rough)));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough) ?? power * 10;
}

interface Series {
  readonly name: string;
  readonly colour: string;
  readonly values: readonly number[];
  readonly compacted: readonly boolean[];
}

function svgChart(view: ReplayView): string {
  const turns = view.outcomes[0]?.result.turns ?? [];
  const series: Series[] = [
    { name: 'before', colour: BEFORE_COLOUR, values: turns.map((turn) => turn.baselineBefore), compacted: turns.map(() => false) },
    ...view.outcomes.map((outcome, i) => ({
      name: outcome.result.policy.name,
      colour: PALETTE[i % PALETTE.length]!,
      values: outcome.result.turns.map((turn) => turn.baselineAfter),
      compacted: outcome.result.turns.map((turn) => turn.compactions.length > 0),
    })),
  ];
  const width = 760;
  const height = 320;
  const margin = { left: 72, right: 16, top: 16, bottom: 40 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const max = Math.max(1, view.contextWindow, ...series.flatMap((line) => line.values));
  const step = tickStep(max);
  const top = Math.ceil(max / step) * step;
  const x = (i: number) => margin.left + (turns.length <= 1 ? plotWidth / 2 : (i / (turns.length - 1)) * plotWidth);
  const y = (value: number) => margin.top + plotHeight - (value / top) * plotHeight;
  const parts: string[] = [];
  for (let value = 0; value <= top; value += step) {
    parts.push(
      `<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(value)}" y2="${y(value)}" stroke="#e0e0e0"/>`,
      `<text x="${margin.left - 6}" y="${y(value) + 4}" text-anchor="end">${formatTokens(value)}</text>`,
    );
  }
  const labelEvery = Math.max(1, Math.ceil(turns.length / 20));
  turns.forEach((turn, i) => {
    if (i % labelEvery === 0) parts.push(`<text x="${x(i)}" y="${height - margin.bottom + 16}" text-anchor="middle">${turn.turn}</text>`);
  });
  parts.push(
    `<text x="${margin.left + plotWidth / 2}" y="${height - 6}" text-anchor="middle">turn</text>`,
    `<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(view.contextWindow)}" y2="${y(view.contextWindow)}" stroke="#000" stroke-dasharray="6 4"/>`,
    `<text x="${width - margin.right}" y="${y(view.contextWindow) - 4}" text-anchor="end">window ${formatTokens(view.contextWindow)}</text>`,
  );
  for (const line of series) {
    const points = line.values.map((value, i) => `${x(i).toFixed(1)},${y(value).toFixed(1)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${line.colour}" stroke-width="2.5" points="${points}"><title>${escapeHtml(line.name)}</title></polyline>`);
    line.values.forEach((value, i) => {
      if (line.compacted[i]) parts.push(`<circle cx="${x(i).toFixed(1)}" cy="${y(value).toFixed(1)}" r="4.5" fill="${line.colour}"/>`);
    });
  }
  const legend = series
    .map((line, i) => `<g transform="translate(${margin.left + 10 + i * 110},${margin.top + 4})"><rect width="14" height="4" y="4" fill="${line.colour}"/><text x="20" y="10">${escapeHtml(line.name)}</text></g>`)
    .join('');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="baseline per turn">${parts.join('')}${legend}</svg>`;
}

function htmlTable(table: TableData): string {
  const head = table.columns.map((column) => `<th class="${column.align === 'left' ? 'l' : 'r'}">${escapeHtml(column.header.trim())}</th>`).join('');
  const body = table.rows
    .map((row) => `<tr>${row.map((cell, i) => `<td class="${table.columns[i]?.align === 'left' ? 'l' : 'r'}">${escapeHtml(cell.trim())}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function sessionSection(view: ReplayView): string {
  const { recorded } = view;
  const costs = costTable(view);
  const cost = recordedCostText(recorded);
  const calls = `${formatTokens(recorded.requests)} calls, <span class="total">${formatTokens(recorded.inputTokens)}</span> input tokens${recorded.estimatedCalls > 0 ? ' (usage partly estimated)' : ' (as reported)'}`;
  const costLine = cost ? ` Cost as recorded: <span class="total">${cost.total}</span> (${escapeHtml(cost.details.join('; '))}).` : '';
  return `<section>
<h2>${escapeHtml(view.path)}</h2>
<p>${escapeHtml(view.model ?? 'unknown model')}, window ${formatTokens(view.contextWindow)}, strategy ${escapeHtml(view.strategy)}. Recorded: ${calls}.${costLine}</p>
<h3>Baseline per turn</h3>
<p class="note">The input of each turn's first call, before and under each policy; a dot marks a turn with a compaction; the dashed line is the window.</p>
${svgChart(view)}
<h3>Tokens</h3>
${htmlTable(tokenTable(view))}
<h3>Cost</h3>
${costs ? `<p class="note">${escapeHtml(COST_LEGEND.join(' '))}</p>\n${htmlTable(costs)}` : '<p>Unknown model: no prices (pass --model or --price-input/--price-output).</p>'}
<h3>Baselines</h3>
${htmlTable(baselineTable(view))}
</section>`;
}

export function renderHtmlReport(views: readonly ReplayView[], _rollup: ReplayRollup | null = null): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>compactor replay report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; } h3 { font-size: 1em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 2px 10px; border-bottom: 1px solid #eee; }
th { background: #f4f4f4; } .r { text-align: right; font-variant-numeric: tabular-nums; } .l { text-align: left; }
svg text { font: 11px system-ui, sans-serif; fill: #333; } .note { color: #555; font-size: 0.9em; } .total { font-weight: bold; }
</style>
</head>
<body>
<h1>compactor replay report</h1>
${views.length > 0 ? views.map(sessionSection).join('\n') : '<p>No session could be replayed.</p>'}
</body>
</html>
`;
}
