/**
 * The what-if across sessions (rollup.ts) as `replay` prints it after the last session: in text,
 * a token table and a cost table comparing the policies, then the sessions each policy saves
 * most in, in 80 columns; in `--json`, one last record `{"rollup": {…}}` (docs/audit.md names
 * every field). The HTML page's summary is html-archive.ts.
 */
import { fitPath, formatPercent, formatTokens, formatUsd } from '../report/format.js';
import type { TableData } from '../report/table.js';
import { renderTable } from '../report/table.js';

const render = (table: TableData) => renderTable(table.columns, table.rows);
import type { PolicyRollup, ReplayRollup, TopSession } from './rollup.js';
import { NO_USAGE_LEGEND } from './text.js';

/** 1 − after / before; 0 when nothing was sent (as a session's `reduction`). */
export function reductionOf(policy: Pick<PolicyRollup, 'inputTokensBefore' | 'inputTokensAfter'>): number {
  return policy.inputTokensBefore > 0 ? 1 - policy.inputTokensAfter / policy.inputTokensBefore : 0;
}

function topSessionJson(entry: TopSession) {
  return {
    session: entry.session,
    saved_cache_aware_usd: entry.savedCacheAwareUsd,
    saved_naive_usd: entry.savedNaiveUsd,
    input_tokens_saved: entry.inputTokensSaved,
    compactions: entry.compactions,
    prunes: entry.prunes,
  };
}

function policyJson(policy: PolicyRollup) {
  return {
    name: policy.name,
    sessions: policy.sessions,
    compacting_sessions: policy.compactingSessions,
    compactions: policy.compactions,
    prunes: policy.prunes,
    no_gain: policy.noGain,
    would_thrash: policy.wouldThrash,
    thrashing_sessions: policy.thrashingSessions,
    input_tokens_before: policy.inputTokensBefore,
    input_tokens_after: policy.inputTokensAfter,
    input_tokens_saved: policy.inputTokensBefore - policy.inputTokensAfter,
    reduction: reductionOf(policy),
    summarizer_input_tokens: policy.summarizerInputTokens,
    summarizer_output_tokens: policy.summarizerOutputTokens,
    priced_sessions: policy.pricedSessions,
    cost_usd: policy.costUsd,
    saved_cache_aware_usd: policy.savedCacheAwareUsd,
    saved_naive_usd: policy.savedNaiveUsd,
    summarizer_usd: policy.summarizerUsd,
    top_sessions: policy.topSessions.map(topSessionJson),
  };
}

/** The last NDJSON record of `replay --json` over several sessions. */
export function replayRollupJson(rollup: ReplayRollup) {
  return {
    rollup: {
      sessions: rollup.sessions,
      requests: rollup.requests,
      input_tokens: rollup.inputTokens,
      output_tokens: rollup.outputTokens,
      priced_sessions: rollup.pricedSessions,
      cost_usd: rollup.costUsd,
      unpriced_requests: rollup.unpricedRequests,
      cost_estimated_usd: rollup.costEstimatedUsd,
      spend_by_day: rollup.spendByDay.map((day) => ({ day: day.day, sessions: day.sessions, cost_usd: day.costUsd })),
      policies: rollup.policies.map(policyJson),
    },
  };
}

/** The text width the roll-up keeps to. */
const WIDTH = 80;

/** `5`, or `5+2p` with prunings, as a session's token table writes them. */
export function compactedCell(policy: Pick<PolicyRollup, 'compactions' | 'prunes'>): string {
  return `${formatTokens(policy.compactions)}${policy.prunes > 0 ? `+${formatTokens(policy.prunes)}p` : ''}`;
}

/** The roll-up's token table: sessions compacted in, compactions, thrashing sessions, input tokens. */
export function rollupTokenTable(rollup: ReplayRollup): TableData {
  const rows = [
    ['recorded', '-', '-', '-', formatTokens(rollup.inputTokens), '-'],
    ...rollup.policies.map((policy) => [
      policy.name,
      formatTokens(policy.compactingSessions),
      compactedCell(policy),
      formatTokens(policy.thrashingSessions),
      formatTokens(policy.inputTokensAfter),
      formatPercent(reductionOf(policy)),
    ]),
  ];
  const headers = ['sessions', 'compacted', 'thrashing', 'input tokens', 'saved'];
  return { columns: [{ header: 'policy', align: 'left' }, ...headers.map((header) => ({ header }))], rows };
}

/** The roll-up's cost table: each policy's cost, saving, summarizer calls and naive saving. */
export function rollupCostTable(rollup: ReplayRollup): TableData {
  const rows = [
    ['recorded', `${formatUsd(rollup.costUsd)}${rollup.unpricedRequests > 0 ? '*' : ''}`, '-', '-', '-'],
    ...(rollup.costEstimatedUsd > 0 ? [['no usage', `~${formatUsd(rollup.costEstimatedUsd)}`, '-', '-', '-']] : []),
    ...rollup.policies.map((policy) => [policy.name, formatUsd(policy.costUsd), formatUsd(policy.savedCacheAwareUsd), formatUsd(policy.summarizerUsd), formatUsd(policy.savedNaiveUsd)]),
  ];
  const headers = ['cost', 'saved', 'summaries', 'no-cache saved'];
  return { columns: [{ header: 'policy', align: 'left' }, ...headers.map((header) => ({ header }))], rows };
}

/** The legends of the two tables, a line each (80 columns); a page prints each as one paragraph. */
export const ROLLUP_TOKEN_LEGEND = ['tokens (sessions: those it compacts in; thrashing: sessions back at the', 'trigger within 2 turns of a compaction)'];
export const ROLLUP_COST_LEGEND = ["cost (each session's recorded cost less what the policy saves there, added", 'up; no-cache saved: the same saving if no prompt were cached, naive)'];
/** Under it when some calls report no usage (text.ts NO_USAGE_LEGEND). */
export function rollupCostLegend(rollup: Pick<ReplayRollup, 'costEstimatedUsd'>): readonly string[] {
  return rollup.costEstimatedUsd > 0 ? [...ROLLUP_COST_LEGEND, NO_USAGE_LEGEND] : ROLLUP_COST_LEGEND;
}

/** A policy's top sessions, each path as `fit` gives it. */
export function topSessionsTable(policy: PolicyRollup, fit: (path: string) => string): TableData {
  const rows = policy.topSessions.map((entry) => [
    entry.savedCacheAwareUsd === null ? '-' : formatUsd(entry.savedCacheAwareUsd),
    formatTokens(entry.inputTokensSaved),
    compactedCell(entry),
    fit(entry.session),
  ]);
  return { columns: [{ header: 'saved' }, { header: 'tokens saved' }, { header: 'compacted' }, { header: 'session', align: 'left' }], rows };
}

/** A policy's top sessions in text, the path column taking what the figures leave of the width. */
function topTable(policy: PolicyRollup): string[] {
  if (policy.topSessions.length === 0) return [`${policy.name}: compacts in no session`];
  const figures = topSessionsTable(policy, () => '');
  const widths = figures.columns.slice(0, -1).map((column, i) => Math.max(column.header.length, ...figures.rows.map((cells) => cells[i]!.length)));
  // renderTable's frame: a space each side of every cell and one between cells, the last trimmed.
  const pathWidth = Math.max('session'.length, WIDTH - widths.reduce((sum, width) => sum + width + 3, 0) - 2);
  const table = topSessionsTable(policy, (path) => fitPath(path, pathWidth));
  return [`${policy.name}: the sessions it saves most in`, renderTable(table.columns, table.rows)];
}

/**
 * The roll-up in text: what every policy does across the sessions (sessions it compacts in,
 * compactions and prunings, sessions that thrash, input tokens), what each would have cost, and
 * the sessions each saves most in.
 */
export function renderReplayRollup(rollup: ReplayRollup): string {
  const lines = [
    `what-if across ${formatTokens(rollup.sessions)} sessions: ${formatTokens(rollup.requests)} calls, ${formatTokens(rollup.inputTokens)} input tokens`,
    `cost as recorded: ${formatUsd(rollup.costUsd)}`,
  ];
  const calls = (count: number) => `${formatTokens(count)} call${count === 1 ? '' : 's'}`;
  if (rollup.unpricedRequests > 0) lines.push(`  not in it: ${calls(rollup.unpricedRequests)} to a model with no price`);
  if (rollup.costEstimatedUsd > 0) lines.push(`  apart: ~${formatUsd(rollup.costEstimatedUsd)} estimated for calls with no usage`);
  lines.push(
    '',
    ...ROLLUP_TOKEN_LEGEND,
    render(rollupTokenTable(rollup)),
    '',
    ...rollupCostLegend(rollup),
    render(rollupCostTable(rollup)),
  );
  for (const policy of rollup.policies) lines.push('', ...topTable(policy));
  return `${lines.join('\n')}\n`;
}
