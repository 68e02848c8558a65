/**
 * Totals across sessions: the spend ledgers of many sessions added up per project, per UTC day and
 * per model. Pure. Each session's spend is first split by day and model (`sessionSpend`, plain
 * data, so it can come back from a worker thread); `rollUp` adds those splits together. Calls are
 * the spend ledger's (ledgers.ts), priced as it priced them: nothing is priced again here.
 *
 * - **project**: what the file names (Session.project: Codex's and pi's `cwd`, Gemini CLI's
 *   `projectHash`), else the directory the session is stored in (for Claude Code, its project
 *   directory `~/.claude/projects/<project>/`).
 * - **day**: the UTC day of each billed call's timestamp, so a session over midnight is split
 *   across both days. A call without a timestamp counts on the day the session started (its
 *   first timestamp); a session with none at all is `null` (undated).
 * - **model**: each call's own model, as its ledger priced it (`null`: the call names none).
 */
import { dirname } from 'node:path';
import type { AnyMessage, Session } from '../session/model.js';
import type { CostSplit } from '../cost/billing.js';
import type { BilledCall, Ledger } from './ledgers.js';
import { isSpend, LedgerSum } from './ledgers.js';

/** One session's spend for one day and model. */
export interface SpendPart {
  readonly day: string | null;
  readonly model: string | null;
  readonly ledger: Ledger;
}

/** One session's spend, split by day and model. */
export interface SessionSpend {
  readonly project: string;
  readonly parts: readonly SpendPart[];
}

/** A row of a roll-up table: its key (project, day or model), the sessions in it and their spend. */
export interface RollupRow {
  readonly key: string | null;
  readonly sessions: number;
  readonly ledger: Ledger;
}

export interface Rollup {
  readonly sessions: number;
  readonly total: Ledger;
  /** Costliest first (cost of the priced calls, then tokens). */
  readonly byProject: readonly RollupRow[];
  /** Latest day first; undated last. */
  readonly byDay: readonly RollupRow[];
  /** Costliest first. */
  readonly byModel: readonly RollupRow[];
}

/** A UTC instant with a time of day from 00:00:00 to 23:59:59.999 (no 24:00, no leap second, milliseconds at most). */
const IN_DAY = /^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,3})?Z$/;

/**
 * Days of timestamps, as the Date parser gives them, for one run of reads (a session's). The
 * timestamps agents write are mostly UTC instants with a time of day inside the day, so the day
 * the parser gives follows from their first ten characters alone (the parser rolls an impossible
 * date over, `02-30` to March, whatever the time): one parse for a run of them. The last date
 * parsed is held here, by whoever reads the run, not in the module.
 */
export class UtcDays {
  /** The date part of the last in-day timestamp parsed, and the day the parser made of it. */
  private lastDate = '';
  private lastDay: string | null = null;

  /** `2026-02-03` for a timestamp the Date parser reads; null for none or one it cannot. */
  day(timestamp: string | null | undefined): string | null {
    if (!timestamp) return null;
    const inDay = IN_DAY.test(timestamp);
    if (inDay && this.lastDate !== '' && timestamp.startsWith(this.lastDate)) return this.lastDay;
    const time = Date.parse(timestamp);
    const day = Number.isNaN(time) ? null : new Date(time).toISOString().slice(0, 10);
    if (inDay) {
      this.lastDate = timestamp.slice(0, 10);
      this.lastDay = day;
    }
    return day;
  }
}

/** `2026-02-03` for a timestamp the Date parser reads; null for none or one it cannot. */
export function utcDay(timestamp: string | null | undefined): string | null {
  return new UtcDays().day(timestamp);
}

/** The project a session belongs to (see the header). */
export function sessionProject(session: Pick<Session, 'path' | 'project'>): string {
  return session.project ?? dirname(session.path);
}

/** The day the session started: its first dated message, else its first dated off-context call. */
function startDay(session: Session<AnyMessage>, days: UtcDays): string | null {
  for (const message of session.messages) {
    const day = days.day(message.timestamp);
    if (day) return day;
  }
  for (const call of session.offContext) {
    const day = days.day(call.timestamp);
    if (day) return day;
  }
  return null;
}

/** The session's spend calls (`billed`, priced at `costs`) split by day and model. */
export function sessionSpend(session: Session<AnyMessage>, billed: readonly BilledCall[], costs: readonly (CostSplit | null)[]): SessionSpend {
  const sum = new SpendByDay(session);
  billed.forEach((call, position) => sum.add(call, costs[position] ?? null));
  return sum.spend();
}

/** One day's and model's spend in a session, as it is summed. */
interface SpendSum {
  readonly day: string | null;
  readonly model: string | null;
  readonly sum: LedgerSum;
}

/** sessionSpend call by call (each with its cost, in billedCalls' order), so no list of them is held. */
export class SpendByDay {
  private readonly started: string | null;
  private readonly project: string;
  private readonly sums = new Map<string, SpendSum>();
  private readonly days = new UtcDays();
  /** The sum the last call went to: a session's calls come in runs of one day and model. */
  private last: SpendSum | null = null;

  constructor(session: Session<AnyMessage>) {
    this.started = startDay(session, this.days);
    this.project = sessionProject(session);
  }

  add(call: BilledCall, cost: CostSplit | null): void {
    if (!isSpend(call)) return;
    const day = this.days.day(call.timestamp) ?? this.started;
    let entry = this.last;
    if (entry === null || entry.day !== day || entry.model !== call.model) {
      const key = JSON.stringify([day, call.model]);
      const known = this.sums.get(key);
      entry = known ?? { day, model: call.model, sum: new LedgerSum() };
      if (!known) this.sums.set(key, entry);
      this.last = entry;
    }
    entry.sum.add(call, cost);
  }

  spend(): SessionSpend {
    return { project: this.project, parts: [...this.sums.values()].map(({ day, model, sum }) => ({ day, model, ledger: sum.ledger() })) };
  }
}

class Rows {
  private readonly rows = new Map<string | null, { sum: LedgerSum; sessions: number; lastSession: number }>();

  add(key: string | null, ledger: Ledger, session: number): void {
    let row = this.rows.get(key);
    if (!row) this.rows.set(key, (row = { sum: new LedgerSum(), sessions: 0, lastSession: -1 }));
    row.sum.addLedger(ledger);
    if (row.lastSession !== session) {
      row.sessions++;
      row.lastSession = session;
    }
  }

  list(): RollupRow[] {
    return [...this.rows].map(([key, row]) => ({ key, sessions: row.sessions, ledger: row.sum.ledger() }));
  }
}

function costliestFirst(a: RollupRow, b: RollupRow): number {
  const tokens = (row: RollupRow) => row.ledger.inputTokens + row.ledger.outputTokens;
  return b.ledger.pricedCost.total - a.ledger.pricedCost.total || tokens(b) - tokens(a) || String(a.key).localeCompare(String(b.key));
}

function latestFirst(a: RollupRow, b: RollupRow): number {
  if (a.key === null || b.key === null) return a.key === null ? (b.key === null ? 0 : 1) : -1;
  return b.key.localeCompare(a.key);
}

/** The sessions' spend added up per project, day and model. */
export function rollUp(spends: readonly SessionSpend[]): Rollup {
  const total = new LedgerSum();
  const byProject = new Rows();
  const byDay = new Rows();
  const byModel = new Rows();
  spends.forEach((spend, session) => {
    for (const part of spend.parts) {
      total.addLedger(part.ledger);
      byProject.add(spend.project, part.ledger, session);
      byDay.add(part.day, part.ledger, session);
      byModel.add(part.model, part.ledger, session);
    }
  });
  return {
    sessions: spends.length,
    total: total.ledger(),
    byProject: byProject.list().sort(costliestFirst),
    byDay: byDay.list().sort(latestFirst),
    byModel: byModel.list().sort(costliestFirst),
  };
}
