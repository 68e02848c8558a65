/**
 * The top of `replay --html` over many sessions: the what-if across the archive (rollup.ts). The
 * dollars each policy saves as a bar chart (cache-aware, and naive beside it, labelled), the bill
 * per day as a column chart, the roll-up's tables, and each policy's sessions that save most,
 * linking to their sections below. Pure: returns the HTML.
 */
import { formatTokens, formatUsd } from '../report/format.js';
import { escapeHtml, htmlTable, legendRows, px, tickStep } from '../report/html.js';
import { PALETTE } from './html-chart.js';
import type { ReplayRollup } from './rollup.js';
import { legendParagraph } from './text.js';
import { rollupCostLegend, ROLLUP_TOKEN_LEGEND, rollupCostTable, rollupTokenTable, topSessionsTable } from './rollup-report.js';

/** An axis over [low, high] that holds 0, in round steps. */
function axis(low: number, high: number): { readonly from: number; readonly to: number; readonly step: number } {
  const span = Math.max(high, 0) - Math.min(low, 0);
  const step = tickStep(span > 0 ? span : 1);
  return { from: Math.floor(Math.min(low, 0) / step) * step, to: Math.ceil(Math.max(high, 0) / step) * step || step, step };
}

/** The ticks of an axis, computed from integers so 0.1 steps do not drift. */
function ticks(scale: { readonly from: number; readonly to: number; readonly step: number }): number[] {
  const count = Math.round((scale.to - scale.from) / scale.step);
  return Array.from({ length: count + 1 }, (_, i) => scale.from + i * scale.step);
}

/** Saved dollars per policy: two bars each, cache-aware (solid) and naive (pale). */
function savedChart(rollup: ReplayRollup): string {
  const width = 760;
  const rowHeight = 34;
  const plot = { left: 110, right: width - 80, top: 24 };
  const bottom = plot.top + rollup.policies.length * rowHeight;
  const values = rollup.policies.flatMap((policy) => [policy.savedCacheAwareUsd, policy.savedNaiveUsd]);
  const scale = axis(Math.min(0, ...values), Math.max(0, ...values));
  const x = (value: number) => plot.left + ((value - scale.from) / (scale.to - scale.from)) * (plot.right - plot.left);
  const parts: string[] = [];
  for (const value of ticks(scale)) {
    parts.push(
      `<line x1="${px(x(value))}" x2="${px(x(value))}" y1="${plot.top - 4}" y2="${bottom}" stroke="${value === 0 ? '#888' : '#e0e0e0'}"/>`,
      `<text x="${px(x(value))}" y="${plot.top - 8}" text-anchor="middle">${formatUsd(value)}</text>`,
    );
  }
  rollup.policies.forEach((policy, i) => {
    const colour = PALETTE[i % PALETTE.length]!;
    const rowTop = plot.top + i * rowHeight + 4;
    parts.push(`<text x="${plot.left - 8}" y="${px(rowTop + 15)}" text-anchor="end">${escapeHtml(policy.name)}</text>`);
    const bar = (value: number, y: number, height: number, fill: string, opacity: string) => {
      const from = x(Math.min(0, value));
      const to = x(Math.max(0, value));
      const label = value < 0 ? `<text x="${px(from - 4)}" y="${px(y + height - 2)}" text-anchor="end">${formatUsd(value)}</text>` : `<text x="${px(to + 4)}" y="${px(y + height - 2)}">${formatUsd(value)}</text>`;
      return `<rect x="${px(from)}" y="${px(y)}" width="${px(Math.max(1, to - from))}" height="${height}" fill="${fill}" fill-opacity="${opacity}"/>${label}`;
    };
    parts.push(bar(policy.savedCacheAwareUsd, rowTop, 14, colour, '1'), bar(policy.savedNaiveUsd, rowTop + 16, 10, colour, '0.35'));
  });
  const legend = legendRows(
    [
      { swatch: '<rect x="2" y="0" width="22" height="12" fill="#555"/>', label: 'saved, cache-aware: the cost is the recorded cost less this' },
      { swatch: '<rect x="2" y="2" width="22" height="8" fill="#555" fill-opacity="0.35"/>', label: 'saved if no prompt were cached (naive)' },
    ],
    plot.left,
    bottom + 12,
    plot.right - plot.left,
  );
  const height = bottom + 12 + legend.height + 4;
  return `<svg class="saved" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="dollars saved per policy">${parts.join('')}${legend.svg}</svg>`;
}

/** The bill per UTC day, a column a day, earliest first (an undated one last). */
function spendChart(rollup: ReplayRollup): string {
  const days = rollup.spendByDay;
  const width = 760;
  const plot = { left: 72, right: width - 16, top: 12, bottom: 12 + 180 };
  const scale = axis(0, Math.max(0, ...days.map((day) => day.costUsd)));
  const y = (value: number) => plot.bottom - (value / scale.to) * (plot.bottom - plot.top);
  const slot = (plot.right - plot.left) / Math.max(1, days.length);
  const parts: string[] = [];
  for (const value of ticks(scale)) {
    parts.push(
      `<line x1="${plot.left}" x2="${plot.right}" y1="${px(y(value))}" y2="${px(y(value))}" stroke="#e0e0e0"/>`,
      `<text x="${plot.left - 6}" y="${px(y(value) + 4)}" text-anchor="end">${formatUsd(value)}</text>`,
    );
  }
  // Day labels: about eight, so they never run into each other.
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  days.forEach((day, i) => {
    const left = plot.left + i * slot + slot * 0.15;
    const barWidth = Math.max(1, slot * 0.7);
    const name = day.day ?? 'undated';
    parts.push(`<rect x="${px(left)}" y="${px(y(day.costUsd))}" width="${px(barWidth)}" height="${px(plot.bottom - y(day.costUsd))}" fill="#4a7ab0"><title>${escapeHtml(`${name}: ${formatUsd(day.costUsd)}, ${day.sessions} session${day.sessions === 1 ? '' : 's'}`)}</title></rect>`);
    if (i % labelEvery === 0) parts.push(`<text x="${px(left + barWidth / 2)}" y="${plot.bottom + 16}" text-anchor="middle">${escapeHtml(name)}</text>`);
  });
  const height = plot.bottom + 26;
  return `<svg class="spend" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="spend per day">${parts.join('')}</svg>`;
}

function policyTables(rollup: ReplayRollup): string {
  return `<p class="note">${escapeHtml(ROLLUP_TOKEN_LEGEND.join(' '))}</p>
${htmlTable(rollupTokenTable(rollup))}
<p class="note">${escapeHtml(legendParagraph(rollupCostLegend(rollup)))}</p>
${htmlTable(rollupCostTable(rollup))}`;
}

/** Each policy's sessions that save most, each path a link to its section. */
function topSessions(rollup: ReplayRollup, anchor: (session: string) => string | null): string {
  return rollup.policies
    .map((policy) => {
      if (policy.topSessions.length === 0) return `<h4>${escapeHtml(policy.name)}</h4>\n<p>Compacts in no session.</p>`;
      const table = topSessionsTable(policy, (path) => path);
      const last = table.columns.length - 1;
      const link = (row: number, column: number) => {
        const id = column === last ? anchor(policy.topSessions[row]!.session) : null;
        return id === null ? null : `#${id}`;
      };
      return `<h4>${escapeHtml(policy.name)}</h4>\n${htmlTable(table, link)}`;
    })
    .join('\n');
}

/** The summary section; `anchor` names the id of a session's section (null: it has none). */
export function archiveSummary(rollup: ReplayRollup, anchor: (session: string) => string | null): string {
  const unpriced = rollup.unpricedRequests;
  const priced = unpriced > 0 ? ` (not in it: ${formatTokens(unpriced)} call${unpriced === 1 ? '' : 's'} to a model with no price)` : '';
  const estimated = rollup.costEstimatedUsd > 0 ? `; apart, ~${formatUsd(rollup.costEstimatedUsd)} estimated for calls with no usage` : '';
  return `<section id="summary">
<h2>What-if across ${formatTokens(rollup.sessions)} sessions</h2>
<p>Recorded: ${formatTokens(rollup.requests)} calls, <span class="total">${formatTokens(rollup.inputTokens)}</span> input tokens. Cost as recorded: <span class="total">${formatUsd(rollup.costUsd)}</span>${priced}${estimated}.</p>
<h3>Saved per policy</h3>
${savedChart(rollup)}
<h3>Spend per day (UTC)</h3>
${spendChart(rollup)}
<h3>Policies across the sessions</h3>
${policyTables(rollup)}
<h3>The sessions each policy saves most in</h3>
${topSessions(rollup, anchor)}
</section>`;
}
