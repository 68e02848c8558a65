/**
 * `replay --html FILE`: one self-contained page (inline CSS and SVG, no script, nothing loaded
 * from anywhere). Over several sessions it opens with the what-if across them (html-archive.ts);
 * then, per session, a chart of the baseline per turn before and under each policy
 * (html-chart.ts) and the token and cost tables the terminal shows. Pure: returns the page's
 * text; the command writes it.
 */
import { formatTokens } from '../report/format.js';
import { escapeHtml, htmlTable } from '../report/html.js';
import { archiveSummary } from './html-archive.js';
import { baselineChart } from './html-chart.js';
import type { ReplayRollup } from './rollup.js';
import type { ReplayView } from './text.js';
import { baselineTable, costLegend, costTable, legendParagraph, recordedCostText, tokenTable } from './text.js';

/** A session's part of the page, made where it was replayed (the page puts it in its section). */
export interface HtmlSection {
  readonly path: string;
  readonly html: string;
}

/** The session's heading, chart and tables. */
export function sessionSection(view: ReplayView): HtmlSection {
  const { recorded } = view;
  const costs = costTable(view);
  const cost = recordedCostText(recorded);
  const calls = `${formatTokens(recorded.requests)} calls, <span class="total">${formatTokens(recorded.inputTokens)}</span> input tokens${recorded.estimatedCalls > 0 ? ' (usage partly estimated)' : ' (as reported)'}`;
  const costLine = ` Cost as recorded: <span class="total">${cost.total}</span> (${escapeHtml(cost.details.join('; '))}).`;
  const html = `<h2>${escapeHtml(view.path)}</h2>
<p>${escapeHtml(view.model ?? 'unknown model')}, window ${formatTokens(view.contextWindow)}, strategy ${escapeHtml(view.strategy)}. Recorded: ${calls}.${costLine}</p>
<h3>Baseline per turn</h3>
<p class="note">The input of each turn's first call, before and under each policy.</p>
${baselineChart(view)}
<h3>Tokens</h3>
${htmlTable(tokenTable(view))}
<h3>Cost</h3>
${costs ? `<p class="note">${escapeHtml(legendParagraph(costLegend(view)))}</p>\n${htmlTable(costs)}` : '<p>Unknown model: no prices (pass --model or --price-input/--price-output).</p>'}
<h3>Baselines</h3>
${htmlTable(baselineTable(view))}`;
  return { path: view.path, html };
}

/** The page; `rollup` (over several sessions) opens it. */
export function renderHtmlReport(parts: readonly HtmlSection[], rollup: ReplayRollup | null = null): string {
  // A section's id is its place in the page; the summary links the top sessions to theirs.
  const ids = new Map(parts.map((part, i) => [part.path, `session-${i + 1}`]));
  const sections = parts.map((part) => `<section id="${ids.get(part.path)!}">\n${part.html}\n</section>`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>compactor replay report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; } h3 { font-size: 1em; margin-top: 1.4em; } h4 { font-size: 0.95em; margin: 1em 0 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 2px 10px; border-bottom: 1px solid #eee; }
th { background: #f4f4f4; } .r { text-align: right; font-variant-numeric: tabular-nums; } .l { text-align: left; }
svg { display: block; } svg text { font: 11px system-ui, sans-serif; fill: #333; } .note { color: #555; font-size: 0.9em; } .total { font-weight: bold; }
a { color: #1a5fa8; }
</style>
</head>
<body>
<h1>compactor replay report</h1>
${rollup ? `${archiveSummary(rollup, (session) => ids.get(session) ?? null)}\n` : ''}${sections.length > 0 ? sections.join('\n') : '<p>No session could be replayed.</p>'}
</body>
</html>
`;
}
