/**
 * The archive view's session table: one row per session (agent, project, start day, model,
 * calls, spend, peak context and its share of the window, tokens re-sent, recorded compactions),
 * ranked by one key, of which only the top N are kept as sessions arrive (a bounded sorted list),
 * and the totals over every session folded as they pass. Pure. Memory: N rows and one totals
 * record, whatever the number of sessions. Rows from other runs (a shard's `--json` roll-up) go
 * in the same way, so a merge ranks and totals as one run does.
 */

/** One session's row. Dollars as the roll-up sums them (rollup.ts sessionTotal: nanodollars). */
export interface SessionRow {
  readonly session: string;
  /** The session's format (claude-code, codex, pi, gemini-cli, opencode, …). */
  readonly agent: string;
  readonly project: string;
  /** The UTC day of its first dated message; null when undated. */
  readonly startDay: string | null;
  /** The session's model (or the first its calls name); null when none. */
  readonly model: string | null;
  /** Billed calls (the spend ledger's). */
  readonly calls: number;
  /** Dollars of the priced calls. */
  readonly costUsd: number;
  /** Calls with tokens whose model has no price (not in costUsd). */
  readonly unpricedCalls: number;
  /** The largest context a turn started with, in tokens. */
  readonly peakTokens: number;
  /** The window the session ran with, in tokens. */
  readonly windowTokens: number;
  /** Every input token billed (cached parts included): the context re-sent call after call. */
  readonly inputTokens: number;
  /** Compactions the agent recorded in the file. */
  readonly recordedCompactions: number;
}

export const SORT_KEYS = ['cost', 'peak', 'input', 'calls', 'date'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** Rows a table shows by default. */
export const DEFAULT_TOP = 20;

const figure: Record<SortKey, (row: SessionRow) => number> = {
  cost: (row) => row.costUsd,
  peak: (row) => row.peakTokens,
  input: (row) => row.inputTokens,
  calls: (row) => row.calls,
  // Latest first; undated last.
  date: (row) => (row.startDay === null ? -Infinity : Date.parse(`${row.startDay}T00:00:00Z`)),
};

/** Highest first by the key, then by the session's name: one order whatever order the rows came in. */
export function rowOrder(key: SortKey): (a: SessionRow, b: SessionRow) => number {
  const of = figure[key];
  return (a, b) => {
    const x = of(a);
    const y = of(b);
    if (x !== y) return x > y ? -1 : 1;
    return a.session < b.session ? -1 : a.session > b.session ? 1 : 0;
  };
}

/** The totals row: sums, and the highest peak. */
export interface SessionTotals {
  readonly sessions: number;
  readonly calls: number;
  readonly costUsd: number;
  readonly unpricedCalls: number;
  readonly peakTokens: number;
  readonly inputTokens: number;
  readonly recordedCompactions: number;
}

export const NO_TOTALS: SessionTotals = { sessions: 0, calls: 0, costUsd: 0, unpricedCalls: 0, peakTokens: 0, inputTokens: 0, recordedCompactions: 0 };

const NANO = 1e9;
const nano = (usd: number): number => Math.round(usd * NANO);

/** The ranked table as it ends: its key, the N it keeps, the top rows and the totals. */
export interface SessionTable {
  readonly sort: SortKey;
  readonly top: number;
  readonly rows: readonly SessionRow[];
  readonly totals: SessionTotals;
}

/** Rows as they come: the top N kept in order (binary insertion), the totals summed (dollars in nanodollars, as rollup.ts). */
export class SessionRanking {
  private readonly rows: SessionRow[] = [];
  private readonly order: (a: SessionRow, b: SessionRow) => number;
  private sessions = 0;
  private calls = 0;
  private nanoUsd = 0;
  private unpricedCalls = 0;
  private peakTokens = 0;
  private inputTokens = 0;
  private recordedCompactions = 0;

  constructor(
    readonly sort: SortKey,
    readonly top: number,
  ) {
    this.order = rowOrder(sort);
  }

  add(row: SessionRow): void {
    this.fold({ ...NO_TOTALS, sessions: 1, ...row });
    this.keep(row);
  }

  /** Another table over other sessions (a shard's): its rows ranked in, its totals added. */
  addTable(table: Pick<SessionTable, 'rows' | 'totals'>): void {
    this.fold(table.totals);
    for (const row of table.rows) this.keep(row);
  }

  table(): SessionTable {
    const { sessions, calls, unpricedCalls, peakTokens, inputTokens, recordedCompactions } = this;
    return { sort: this.sort, top: this.top, rows: [...this.rows], totals: { sessions, calls, costUsd: this.nanoUsd / NANO, unpricedCalls, peakTokens, inputTokens, recordedCompactions } };
  }

  private fold(totals: SessionTotals): void {
    this.sessions += totals.sessions;
    this.calls += totals.calls;
    this.nanoUsd += nano(totals.costUsd);
    this.unpricedCalls += totals.unpricedCalls;
    this.peakTokens = Math.max(this.peakTokens, totals.peakTokens);
    this.inputTokens += totals.inputTokens;
    this.recordedCompactions += totals.recordedCompactions;
  }

  private keep(row: SessionRow): void {
    const { rows, order } = this;
    if (rows.length >= this.top && order(row, rows[rows.length - 1]!) >= 0) return;
    let low = 0;
    let high = rows.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (order(rows[middle]!, row) <= 0) low = middle + 1;
      else high = middle;
    }
    rows.splice(low, 0, row);
    if (rows.length > this.top) rows.pop();
  }
}
