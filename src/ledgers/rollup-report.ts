/**
 * The roll-up across sessions (rollup.ts) as `inspect` prints it after the last session:
 * in text, three tables (per project, per UTC day, per model) of calls, tokens by class and cost,
 * in 80 columns and cut to their first rows unless --all; in `--json`, one last record
 * `{"rollup": {…}}` with every row.
 */
import type { Ledger } from './ledgers.js';
import type { Rollup, RollupRow } from './rollup.js';
import { fitPath, formatTokens, formatTokensShort, formatUsd } from '../report/format.js';
import { ledgerJson } from './report.js';
import { renderTable } from '../report/table.js';
import { costJson } from '../cost/json.js';

/** Rows a text table shows without --all. */
export const ROLLUP_ROWS = 10;

/**
 * A roll-up row's fields in `--json`: the ledger's tokens, and `cost` of the calls that have a
 * price (never null: `unpriced_requests` counts the calls left out, `unpriced_models` names them).
 */
function rowJson(ledger: Ledger) {
  return {
    ...ledgerJson(ledger),
    cost: costJson(ledger.pricedCost),
    unpriced_requests: ledger.unpricedRequests,
    unpriced_models: ledger.unpriced,
  };
}

/** The last NDJSON record of `inspect --json` over several sessions. */
export function rollupJson(rollup: Rollup) {
  const rows = (name: 'project' | 'day' | 'model', list: readonly RollupRow[]) =>
    list.map((row) => ({ [name]: row.key, sessions: row.sessions, ...rowJson(row.ledger) }));
  return {
    rollup: {
      sessions: rollup.sessions,
      total: rowJson(rollup.total),
      by_project: rows('project', rollup.byProject),
      by_day: rows('day', rollup.byDay),
      by_model: rows('model', rollup.byModel),
    },
  };
}

/** The priced calls' cost; `*` when some calls of it have no price. */
function costCell(ledger: Ledger): string {
  return `${formatUsd(ledger.pricedCost.total)}${ledger.unpricedRequests > 0 ? '*' : ''}`;
}

/** The text width the roll-up keeps to. */
const WIDTH = 80;
/** What renderTable adds to the cells of a seven-column row: padding, separators (the last padding is trimmed). */
const TABLE_FRAME = 7 * 2 + 6 - 1;

type KeyFit = 'path' | 'name';

/** A key cut to `width`: a path keeps its end (`…/workspaces/app`), a name its start (`claude-opus-4-…`). */
function fitKey(key: string, width: number, fit: KeyFit): string {
  if (fit === 'path' || key.length <= width) return fitPath(key, width);
  return `${key.slice(0, width - 1)}…`;
}

function table(header: string, noun: string, rows: readonly RollupRow[], all: boolean, label: (key: string | null) => string, fit: KeyFit): string[] {
  const shown = all ? rows : rows.slice(0, ROLLUP_ROWS);
  const headers = ['calls', 'input', 'cache rd', 'cache wr', 'output', 'cost'];
  const figures = shown.map((row) => [
    formatTokens(row.ledger.requests),
    formatTokensShort(row.ledger.inputTokens),
    formatTokensShort(row.ledger.cacheReadTokens),
    formatTokensShort(row.ledger.cacheWriteTokens),
    formatTokensShort(row.ledger.outputTokens),
    costCell(row.ledger),
  ]);
  // The key column gets what the figures leave of the width.
  const figureWidths = headers.map((name, column) => Math.max(name.length, ...figures.map((cells) => cells[column]!.length)));
  const keyWidth = Math.max(header.length, WIDTH - TABLE_FRAME - figureWidths.reduce((sum, width) => sum + width, 0));
  const body = shown.map((row, index) => [fitKey(label(row.key), keyWidth, fit), ...figures[index]!]);
  const lines = [renderTable([{ header, align: 'left' }, ...headers.map((name) => ({ header: name }))], body)];
  const hidden = rows.length - shown.length;
  if (hidden > 0) lines.push(`  … ${hidden} more ${noun}${hidden === 1 ? '' : 's'} (--all shows every row)`);
  return lines;
}

/** `items` joined by `, ` in lines of at most `width` (an item longer than that alone on its line). */
function wrapList(items: readonly string[], width: number): string[] {
  const lines: string[] = [];
  for (const item of items) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.length + 2 + item.length + 1 <= width) lines[last] += `, ${item}`;
    else {
      if (last >= 0) lines[last] += ',';
      lines.push(item);
    }
  }
  return lines;
}

/**
 * The roll-up in text: a total line, then per project, per day and per model. `input` is every
 * input token (cached parts included), as in the spend ledger; `cache rd` and `cache wr` are
 * those parts.
 */
export function renderRollup(rollup: Rollup, options: { readonly all: boolean; readonly zone?: string }): string {
  const { total } = rollup;
  const lines = [
    `roll-up of ${formatTokens(rollup.sessions)} sessions (spend: every billed call, at its model's prices)`,
    `  ${formatTokens(total.requests)} calls, ${formatTokens(total.inputTokens)} input and ${formatTokens(total.outputTokens)} output tokens, ${costCell(total)}`,
    '',
    ...table('project', 'project', rollup.byProject, options.all, (key) => key ?? '', 'path'),
    '',
    ...table(`day (${options.zone ?? 'UTC'})`, 'day', rollup.byDay, options.all, (key) => key ?? 'undated', 'name'),
    '',
    ...table('model', 'model', rollup.byModel, options.all, (key) => key ?? 'no model named', 'name'),
  ];
  if (total.unpricedRequests > 0) {
    const calls = `${formatTokens(total.unpricedRequests)} call${total.unpricedRequests === 1 ? '' : 's'}`;
    lines.push('', `* not in the cost: ${calls} to models with no price (see --price-input):`);
    lines.push(...wrapList(total.unpriced.map((model) => model ?? 'no model named'), WIDTH - 2).map((line) => `  ${line}`));
  }
  return `${lines.join('\n')}\n`;
}
