/**
 * What `replay` shows a person: the baseline per turn under each policy, a token table and a
 * cost table comparing the policies, and an optional text chart. The same rows feed the HTML
 * page (html.ts); the JSON record is json.ts. Every table fits 80 columns.
 */
import type { Breach } from '../gates/check.js';
import type { CostSplit } from '../cost/billing.js';
import type { ReplayReport } from './simulate.js';
import type { PolicyCosts, RecordedCost } from './savings.js';
import type { ThrashReport } from './thrash.js';
import { renderBarChart } from '../report/chart.js';
import { formatPercent, formatTokens, formatUsd, titleLine } from '../report/format.js';
import type { TableData } from '../report/table.js';
import { renderTable } from '../report/table.js';

export interface PolicyOutcome {
  readonly result: ReplayReport;
  readonly costs: PolicyCosts | null;
  readonly thrash: ThrashReport;
  readonly breaches: readonly Breach[];
}

/** The session as recorded: its calls as the context holds them, and what it billed. */
export interface RecordedSummary {
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Context calls the file reports no usage for (their tokens, and dollars, are estimates). */
  readonly estimatedCalls: number;
  /** The spend ledger's calls: the context's with usage, and the billed calls outside it. */
  readonly billedRequests: number;
  /** The billed calls outside the context (subagents, the agent's own compactions, …). */
  readonly offContextRequests: number;
  /** Billed calls to a model without a price: in no dollar figure. */
  readonly unpricedRequests: number;
  /** The one recorded figure: what the session billed, `inspect`'s `spend`; null when a billed call has no price. */
  readonly bill: CostSplit | null;
  /** The bill's priced calls (the bill itself when every call has a price): what roll-ups add. */
  readonly pricedBill: CostSplit;
  /** The session priced for the what-if; null without its model's prices. */
  readonly cost: RecordedCost | null;
}

export interface ReplayView {
  readonly path: string;
  readonly model: string | null;
  readonly contextWindow: number;
  readonly strategy: string;
  readonly recorded: RecordedSummary;
  readonly outcomes: readonly PolicyOutcome[];
}

/** Policies per baseline table in the terminal, so it fits 80 columns. */
const BASELINE_COLUMNS = 4;

/**
 * Turn baselines before and under the given policies; `*` marks a turn with one of our
 * compactions, `a` a turn in which the agent compacted itself (the "before" column includes it).
 */
export function baselineTable(view: ReplayView, outcomes: readonly PolicyOutcome[] = view.outcomes): TableData {
  const first = view.outcomes[0]?.result;
  const rows = (first?.turns ?? []).map((turn, i) => [
    String(turn.turn),
    `${formatTokens(turn.baselineBefore)}${turn.recorded.length > 0 ? 'a' : ' '}`,
    ...outcomes.map((outcome) => {
      const after = outcome.result.turns[i]!;
      return `${formatTokens(after.baselineAfter)}${after.compactions.length > 0 ? '*' : ' '}`;
    }),
  ]);
  return {
    columns: [{ header: 'turn' }, { header: 'before ' }, ...outcomes.map((outcome) => ({ header: `${outcome.result.policy.name} ` }))],
    rows,
  };
}

function baselineTables(view: ReplayView): string[] {
  const tables: string[] = [];
  for (let i = 0; i < view.outcomes.length; i += BASELINE_COLUMNS) {
    tables.push(render(baselineTable(view, view.outcomes.slice(i, i + BASELINE_COLUMNS))));
  }
  return tables;
}

function breakEvenText(costs: PolicyCosts | null): string {
  if (!costs || costs.breakEven.length === 0) return '-';
  if (costs.breakEven.some((entry) => entry.calls === null)) return 'never';
  // Not Math.max(...): a long session has more compactions than a call takes arguments.
  return String(costs.breakEven.reduce((most, entry) => Math.max(most, entry.calls!), 0));
}

function thrashText(outcome: PolicyOutcome): string {
  if (outcome.result.totals.compactions === 0) return '-';
  return outcome.thrash.detected ? `yes (${outcome.thrash.fastest})` : 'no';
}

export function tokenTable(view: ReplayView): TableData {
  const first = view.outcomes[0]?.result.totals;
  const rows = [
    ['recorded', '-', formatTokens(first?.inputTokensBefore ?? 0), '-', formatTokens(first?.maxBaselineBefore ?? 0), '-'],
    ...view.outcomes.map((outcome) => {
      const totals = outcome.result.totals;
      const compacted = `${totals.compactions}${totals.prunes > 0 ? `+${totals.prunes}p` : ''}`;
      return [
        outcome.result.policy.name,
        compacted,
        formatTokens(totals.inputTokensAfter),
        formatPercent(totals.reduction),
        formatTokens(totals.maxBaselineAfter),
        thrashText(outcome),
      ];
    }),
  ];
  return {
    columns: [
      { header: 'policy', align: 'left' },
      { header: 'compacted' },
      { header: 'input tokens' },
      { header: 'saved' },
      { header: 'max base' },
      { header: 'thrash', align: 'left' },
    ],
    rows,
  };
}

/**
 * The one recorded figure, the bill as `inspect` prints it, and where it comes from, a line
 * each: `billed: 156 calls, 4 of them outside the conversation`; calls with no price, and the
 * estimate for calls that report no usage (in no bill), apart.
 */
export function recordedCostText(recorded: RecordedSummary): { readonly total: string; readonly details: readonly string[] } {
  const calls = (count: number) => `${formatTokens(count)} call${count === 1 ? '' : 's'}`;
  const outside = recorded.offContextRequests > 0 ? `, ${formatTokens(recorded.offContextRequests)} of them outside the conversation` : '';
  const details = [`billed: ${calls(recorded.billedRequests)}${outside}`];
  if (recorded.unpricedRequests > 0) {
    const others = recorded.unpricedRequests < recorded.billedRequests ? ` (the others: ${formatUsd(recorded.pricedBill.total)})` : '';
    details.push(`not in it: ${calls(recorded.unpricedRequests)} to a model with no price${others}`);
  }
  if (recorded.estimatedCalls > 0) {
    const estimate = recorded.cost ? `estimated ~${formatUsd(recorded.cost.estimated.total)}` : 'no price for them';
    details.push(`apart: ${calls(recorded.estimatedCalls)} with no usage, ${estimate}`);
  }
  return { total: recorded.bill ? formatUsd(recorded.bill.total) : 'unknown', details };
}

/**
 * What each policy would have cost: the recorded figure (with the estimate for calls with no
 * usage, a row of its own) less what the simulation says it saves. The naive saving (no prompt
 * cache) is labelled as such. Null without prices.
 */
export function costTable(view: ReplayView): TableData | null {
  const recorded = view.recorded.cost;
  if (!recorded) return null;
  const priced = view.outcomes.filter((outcome) => outcome.costs);
  const rows = [
    // Without the bill (a call with no price), its priced calls, starred as inspect's roll-up does.
    ['recorded', view.recorded.bill ? formatUsd(view.recorded.bill.total) : `${formatUsd(recorded.billed.total)}*`, '-', '-', '-', '-'],
    ...(recorded.estimatedCalls > 0 ? [['no usage', `~${formatUsd(recorded.estimated.total)}`, '-', '-', '-', '-']] : []),
    ...priced.map((outcome) => {
      const costs = outcome.costs!;
      return [
        outcome.result.policy.name,
        formatUsd(costs.costUsd),
        formatUsd(costs.savedCachedUsd),
        formatUsd(costs.summarizer.total),
        breakEvenText(costs),
        formatUsd(costs.savedNaiveUsd),
      ];
    }),
  ];
  return {
    columns: [
      { header: 'policy', align: 'left' },
      { header: 'cost' },
      { header: 'saved' },
      { header: 'summaries' },
      { header: 'break-even' },
      { header: 'no-cache saved' },
    ],
    rows,
  };
}

/** The cost table's legend, a line each (80 columns); the HTML page prints it as one paragraph. */
export const COST_LEGEND = [
  "cost: the recorded cost less what the policy saves; saved: what the policy's",
  'calls cost less than the recorded ones, both priced by the cache model;',
  'summaries: the summarizer calls (in the cost); break-even: calls after a',
  'compaction until it paid for itself, the slowest; no-cache saved: the same',
  'saving if no prompt were cached (naive)',
];

/** Under the legend when some calls report no usage: their estimate is a row of its own, and in each cost. */
export const NO_USAGE_LEGEND = 'no usage: the estimate for calls with no usage, in no bill, in each cost';

/** The cost table's legend for this session. */
export function costLegend(view: ReplayView): readonly string[] {
  return view.recorded.estimatedCalls > 0 && view.recorded.cost ? [...COST_LEGEND, NO_USAGE_LEGEND] : COST_LEGEND;
}

/** A legend as one paragraph of a page: its lines run on, the no-usage line a clause of its own. */
export function legendParagraph(lines: readonly string[]): string {
  const base = lines.filter((line) => line !== NO_USAGE_LEGEND).join(' ');
  return lines.includes(NO_USAGE_LEGEND) ? `${base}; ${NO_USAGE_LEGEND}` : base;
}

function render(table: TableData): string {
  return renderTable(table.columns, table.rows);
}

export function renderReplay(view: ReplayView, chart: boolean): string {
  const model = view.model ? `${view.model}, ` : '';
  const { recorded } = view;
  const cost = recordedCostText(recorded);
  const lines = [
    titleLine(view.path, `${model}window ${formatTokens(view.contextWindow)}, strategy ${view.strategy}`),
    `recorded: ${formatTokens(recorded.requests)} calls, ${formatTokens(recorded.inputTokens)} input tokens` +
      (recorded.estimatedCalls > 0 ? ' (usage partly estimated)' : ' (as reported)'),
    `cost as recorded: ${cost.total}`,
    ...cost.details.map((line) => `  ${line}`),
    '',
    'baseline per turn (* = compacted before or during that turn;',
    ' a = the agent compacted itself in that turn, "before" includes it)',
    baselineTables(view).join('\n\n'),
    '',
    'tokens (compacted: compactions, +Np: prunings;',
    'thrash: yes (N) = back at the trigger N turns after a compaction)',
    render(tokenTable(view)),
  ];
  const costs = costTable(view);
  if (costs) {
    lines.push('', ...costLegend(view), render(costs));
  } else {
    lines.push('', 'cost: unknown model (pass --model or --price-input/--price-output)');
  }
  if (chart) {
    const groups = (view.outcomes[0]?.result.turns ?? []).map((turn, i) => ({
      label: String(turn.turn),
      bars: [
        { series: 'before', value: turn.baselineBefore },
        ...view.outcomes.map((outcome) => {
          const after = outcome.result.turns[i]!;
          return { series: outcome.result.policy.name, value: after.baselineAfter, ...(after.compactions.length > 0 ? { mark: '*' } : {}) };
        }),
      ],
    }));
    lines.push('', renderBarChart(groups, { title: 'baseline per turn', limit: { label: 'window', value: view.contextWindow } }));
  }
  return `${lines.join('\n')}\n`;
}
