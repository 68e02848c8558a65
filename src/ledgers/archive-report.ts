/**
 * The session table (archive.ts) as `inspect` and `report` print it: in text, ranked rows and a
 * totals row in 80 columns (the project cut from the left, keeping its informative end; the
 * model from the right); in `--json`, the `session_rows`, `session_totals`, `sort` and `top`
 * fields of the roll-up record, and back from them (a shard's record, read by `report`).
 */
import type { SessionRow, SessionTable, SessionTotals, SortKey } from './archive.js';
import { SORT_KEYS } from './archive.js';
import { fitPath, formatTokens, formatTokensShort, formatUsd } from '../report/format.js';

/** A session row in `--json`. */
export function sessionRowJson(row: SessionRow) {
  return {
    session: row.session,
    agent: row.agent,
    project: row.project,
    start_day: row.startDay,
    model: row.model,
    calls: row.calls,
    cost_usd: row.costUsd,
    unpriced_calls: row.unpricedCalls,
    peak_context_tokens: row.peakTokens,
    window_tokens: row.windowTokens,
    peak_percent: row.windowTokens > 0 ? Math.round((row.peakTokens / row.windowTokens) * 1000) / 10 : null,
    input_tokens: row.inputTokens,
    recorded_compactions: row.recordedCompactions,
  };
}

function totalsJson(totals: SessionTotals) {
  return {
    sessions: totals.sessions,
    calls: totals.calls,
    cost_usd: totals.costUsd,
    unpriced_calls: totals.unpricedCalls,
    peak_context_tokens: totals.peakTokens,
    input_tokens: totals.inputTokens,
    recorded_compactions: totals.recordedCompactions,
  };
}

/** The table's fields of the roll-up record. */
export function sessionTableJson(table: SessionTable) {
  return { sort: table.sort, top: table.top, session_rows: table.rows.map(sessionRowJson), session_totals: totalsJson(table.totals) };
}

type Json = Record<string, unknown>;

/** A field read back, checked; `what` names it in the error. */
function field<T>(record: Json, name: string, check: (value: unknown) => value is T, what: string): T {
  const value = record[name];
  if (!check(value)) throw new Error(`${what}: "${name}" is missing or not what inspect --json writes`);
  return value;
}
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** sessionTableJson read back (a shard's roll-up record); throws a plain Error naming the field. */
export function sessionTableFromJson(rollup: Json): SessionTable {
  const sort = field(rollup, 'sort', (value): value is SortKey => SORT_KEYS.includes(value as SortKey), 'rollup');
  const top = field(rollup, 'top', isNumber, 'rollup');
  const rows = field(rollup, 'session_rows', Array.isArray, 'rollup').map((entry: unknown, index) => {
    const what = `rollup.session_rows[${index}]`;
    if (!isRecord(entry)) throw new Error(`${what} is not an object`);
    return {
      session: field(entry, 'session', isString, what),
      agent: field(entry, 'agent', isString, what),
      project: field(entry, 'project', isString, what),
      startDay: field(entry, 'start_day', isStringOrNull, what),
      model: field(entry, 'model', isStringOrNull, what),
      calls: field(entry, 'calls', isNumber, what),
      costUsd: field(entry, 'cost_usd', isNumber, what),
      unpricedCalls: field(entry, 'unpriced_calls', isNumber, what),
      peakTokens: field(entry, 'peak_context_tokens', isNumber, what),
      windowTokens: field(entry, 'window_tokens', isNumber, what),
      inputTokens: field(entry, 'input_tokens', isNumber, what),
      recordedCompactions: field(entry, 'recorded_compactions', isNumber, what),
    };
  });
  const totals = field(rollup, 'session_totals', isRecord, 'rollup');
  const number = (name: string) => field(totals, name, isNumber, 'rollup.session_totals');
  return {
    sort,
    top,
    rows,
    totals: {
      sessions: number('sessions'),
      calls: number('calls'),
      costUsd: number('cost_usd'),
      unpricedCalls: number('unpriced_calls'),
      peakTokens: number('peak_context_tokens'),
      inputTokens: number('input_tokens'),
      recordedCompactions: number('recorded_compactions'),
    },
  };
}

/** The text width the table keeps to. */
const WIDTH = 80;

/** Short agent names for the text column (the format's name in `--json`). */
const AGENT_LABELS: Readonly<Record<string, string>> = {
  'claude-code': 'claude',
  'gemini-cli': 'gemini',
  'opencode-json': 'opencode',
  'anthropic-messages': 'anthropic',
  'openai-chat': 'openai',
  canonical: 'canon',
};

/** A model as the text column shows it: no `claude-` (the agent column says whose) and no release date (`sonnet-4-5`). */
function shortModel(model: string): string {
  return model.replace(/^claude-/, '').replace(/-\d{8}$/, '');
}

/** A name cut from the right to `width`: `claude-opus-4-…`. */
function fitName(name: string, width: number): string {
  return name.length <= width ? name : `${name.slice(0, width - 1)}…`;
}

const SORT_WORDS: Record<SortKey, string> = { cost: 'spend', peak: 'peak context', input: 'tokens re-sent', calls: 'calls', date: 'start day' };

/**
 * The table in text: a title, the ranked rows, a totals row. Columns: agent, project, start
 * (UTC day), model, calls, spend ($ of the priced calls; `*` when some calls had no price), peak
 * (context at its largest), win (the peak's share of the window), re-sent (input tokens billed),
 * cmp (compactions the agent recorded).
 */
export function renderSessionTable(table: SessionTable): string {
  const { rows, totals } = table;
  const title = `${formatTokens(totals.sessions)} sessions, the top ${formatTokens(rows.length)} by ${SORT_WORDS[table.sort]} (--sort, --top):`;
  const figures = (row: Pick<SessionRow, 'calls' | 'costUsd' | 'unpricedCalls' | 'peakTokens' | 'inputTokens' | 'recordedCompactions'>, window: string) => [
    formatTokensShort(row.calls),
    `${formatUsd(row.costUsd)}${row.unpricedCalls > 0 ? '*' : ''}`,
    formatTokensShort(row.peakTokens),
    window,
    formatTokensShort(row.inputTokens),
    formatTokens(row.recordedCompactions),
  ];
  const body = rows.map((row) => ({
    agent: AGENT_LABELS[row.agent] ?? row.agent,
    project: row.project,
    start: row.startDay ?? 'undated',
    model: row.model === null ? '-' : shortModel(row.model),
    figures: figures(row, row.windowTokens > 0 ? `${Math.round((row.peakTokens / row.windowTokens) * 100)}%` : '-'),
  }));
  const total = { agent: 'total', project: `${formatTokens(totals.sessions)} sessions`, start: '', model: '', figures: figures(totals, '') };
  const all = [...body, total];
  const heads = ['calls', 'spend', 'peak', 'win', 're-sent', 'cmp'];
  const figureWidths = heads.map((head, column) => Math.max(head.length, ...all.map((row) => row.figures[column]!.length)));
  const agentWidth = Math.max('agent'.length, ...all.map((row) => row.agent.length));
  const startWidth = Math.max('start'.length, ...all.map((row) => row.start.length));
  // One space between columns; the project and the model share what the rest leave, half each
  // (the model 6 to 12 columns, leaving the project 12 where it can; a shorter model leaves the
  // rest to the project).
  const fixed = agentWidth + startWidth + figureWidths.reduce((sum, width) => sum + width, 0) + 9;
  const half = Math.max(6, Math.min(12, Math.floor((WIDTH - fixed) / 2), WIDTH - fixed - 12));
  const modelWidth = Math.min(half, Math.max('model'.length, ...all.map((row) => row.model.length)));
  const projectWidth = Math.max('project'.length, WIDTH - fixed - modelWidth);
  const usedProject = Math.min(projectWidth, Math.max('project'.length, ...all.map((row) => row.project.length)));
  const line = (agent: string, project: string, start: string, model: string, cells: readonly string[]) =>
    [agent.padEnd(agentWidth), project.padEnd(usedProject), start.padEnd(startWidth), model.padEnd(modelWidth), ...cells.map((cell, column) => cell.padStart(figureWidths[column]!))].join(' ').trimEnd();
  const lines = [title, line('agent', 'project', 'start', 'model', heads)];
  for (const row of all) lines.push(line(row.agent, fitPath(row.project, usedProject), row.start, fitName(row.model, modelWidth), row.figures));
  if (totals.unpricedCalls > 0) lines.push(`* ${formatTokens(totals.unpricedCalls)} calls to models with no price are not in the spend`);
  return `${lines.join('\n')}\n`;
}
