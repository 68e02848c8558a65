/**
 * The roll-up across sessions (rollup.ts) as `inspect` and `report` print it after the session
 * table: in text, three tables (per project, per UTC day, week or month as --by says, per model)
 * of calls, tokens by class and cost, in 80 columns and cut to their first rows unless --all; in
 * `--json`, one last record `{"rollup": {…}}` with every row of every table and the session
 * table's fields (archive-report.ts); and that record read back (`report`).
 */
import type { Ledger } from './ledgers.js';
import type { Rollup, RollupRow } from './rollup.js';
import type { SessionTable } from './archive.js';
import { sessionTableJson } from './archive-report.js';
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

/** The table a roll-up row of --by is in. */
export type RollupPeriod = 'day' | 'week' | 'month';
export const ROLLUP_PERIODS: readonly RollupPeriod[] = ['day', 'week', 'month'];

/** The last NDJSON record of `inspect --json` over several sessions (and of `report --json`). */
export function rollupJson(rollup: Rollup, table: SessionTable, gates: readonly unknown[] = [], zone = 'UTC') {
  const rows = (name: 'project' | RollupPeriod | 'model', list: readonly RollupRow[]) =>
    list.map((row) => ({ [name]: row.key, sessions: row.sessions, ...rowJson(row.ledger) }));
  return {
    rollup: {
      sessions: rollup.sessions,
      total: rowJson(rollup.total),
      by_project: rows('project', rollup.byProject),
      by_day: rows('day', rollup.byDay),
      by_model: rows('model', rollup.byModel),
      by_week: rows('week', rollup.byWeek),
      by_month: rows('month', rollup.byMonth),
      ...sessionTableJson(table),
      time_zone: zone,
      gates,
    },
  };
}

type Json = Record<string, unknown>;

function numberIn(record: Json, name: string, what: string): number {
  const value = record[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`${what}: "${name}" is missing or not a number`);
  return value;
}

/** rowJson read back. */
function ledgerFromJson(record: Json, what: string): Ledger {
  const cost = record['cost'];
  if (typeof cost !== 'object' || cost === null) throw new Error(`${what}: "cost" is missing`);
  const usd = (name: string) => numberIn(cost as Json, name, `${what}.cost`);
  const pricedCost = { input: usd('input_usd'), cacheWrite: usd('cache_write_usd'), cacheRead: usd('cache_read_usd'), output: usd('output_usd'), total: usd('total_usd') };
  const unpricedRequests = numberIn(record, 'unpriced_requests', what);
  const unpriced = record['unpriced_models'];
  if (!Array.isArray(unpriced) || !unpriced.every((model) => model === null || typeof model === 'string')) throw new Error(`${what}: "unpriced_models" is missing`);
  return {
    requests: numberIn(record, 'requests', what),
    inputTokens: numberIn(record, 'input_tokens', what),
    cacheReadTokens: numberIn(record, 'cache_read_input_tokens', what),
    cacheWriteTokens: numberIn(record, 'cache_creation_input_tokens', what),
    cacheWrite1hTokens: numberIn(record, 'cache_creation_1h_input_tokens', what),
    outputTokens: numberIn(record, 'output_tokens', what),
    cost: unpricedRequests > 0 ? null : pricedCost,
    unpriced: unpriced as (string | null)[],
    pricedCost,
    unpricedRequests,
  };
}

/** rollupJson's `rollup` object read back as a Rollup; throws a plain Error naming the field. */
export function rollupFromJson(record: Json): Rollup {
  const total = record['total'];
  if (typeof total !== 'object' || total === null) throw new Error('rollup: "total" is missing');
  const rows = (field: string, name: string): RollupRow[] => {
    const list = record[field];
    if (!Array.isArray(list)) throw new Error(`rollup: "${field}" is missing (a roll-up written before by_week and by_month? run inspect again)`);
    return list.map((row: unknown, index) => {
      const what = `rollup.${field}[${index}]`;
      if (typeof row !== 'object' || row === null) throw new Error(`${what} is not an object`);
      const key = (row as Json)[name];
      if (key !== null && typeof key !== 'string') throw new Error(`${what}: "${name}" is not a string`);
      return { key, sessions: numberIn(row as Json, 'sessions', what), ledger: ledgerFromJson(row as Json, what) };
    });
  };
  return {
    sessions: numberIn(record, 'sessions', 'rollup'),
    total: ledgerFromJson(total as Json, 'rollup.total'),
    byProject: rows('by_project', 'project'),
    byDay: rows('by_day', 'day'),
    byWeek: rows('by_week', 'week'),
    byMonth: rows('by_month', 'month'),
    byModel: rows('by_model', 'model'),
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
export function renderRollup(rollup: Rollup, options: { readonly all: boolean; readonly by?: RollupPeriod; readonly zone?: string }): string {
  const by = options.by ?? 'day';
  const zone = options.zone ?? 'UTC';
  const periods = { day: rollup.byDay, week: rollup.byWeek, month: rollup.byMonth };
  const periodHeader = { day: `day (${zone})`, week: `week of (${zone})`, month: `month (${zone})` }[by];
  const { total } = rollup;
  const lines = [
    `roll-up of ${formatTokens(rollup.sessions)} sessions (spend: every billed call, at its model's prices)`,
    `  ${formatTokens(total.requests)} calls, ${formatTokens(total.inputTokens)} input and ${formatTokens(total.outputTokens)} output tokens, ${costCell(total)}`,
    '',
    ...table('project', 'project', rollup.byProject, options.all, (key) => key ?? '', 'path'),
    '',
    ...table(periodHeader, by, periods[by], options.all, (key) => key ?? 'undated', 'name'),
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
