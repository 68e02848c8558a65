/**
 * Totals across sessions: the spend ledgers of many sessions added up per project, per UTC day and
 * per model. Pure. Each session's spend is first split by day and model (`sessionSpend`, plain
 * data, so it can come back from a worker thread); `rollUp` adds those splits together. Calls are
 * the spend ledger's (ledgers.ts), priced as it priced them: nothing is priced again here.
 *
 * - **project**: what the file names (Session.project: Codex's and pi's `cwd`, Gemini CLI's
 *   `projectHash`), else the directory the session is stored in (for Claude Code, its project
 *   directory `~/.claude/projects/<project>/`).
 * - **day**: the day of each billed call's timestamp in the run's time zone (`--timezone`, else
 *   the local zone; UTC when none is given to SpendByDay), so a session over midnight is split
 *   across both days. A call without a timestamp counts on the day the session started (its
 *   first timestamp); a session with none at all is `null` (undated). The same day decides
 *   which calls `--since` and `--until` keep (DayRange): one notion of the day.
 * - **week** and **month**: the same days grouped, a week by the Monday it starts on (ISO weeks,
 *   `2026-02-02`), a month as `2026-02`.
 * - **model**: each call's own model, as its ledger priced it (`null`: the call names none).
 *
 * Dollars are added up in whole nanodollars (each part's cost rounded to 1e-9 $, then integer
 * sums): the sums are then the same in any order, so a roll-up merged from shards' roll-ups
 * (`compactor report`) equals, to the last digit, the one a single run makes.
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
  /** Latest week first (keyed by its Monday); undated last. */
  readonly byWeek: readonly RollupRow[];
  /** Latest month first; undated last. */
  readonly byMonth: readonly RollupRow[];
  /** Costliest first. */
  readonly byModel: readonly RollupRow[];
}

/** A UTC instant with a time of day from 00:00:00 to 23:59:59.999 (no 24:00, no leap second, milliseconds at most). */
const IN_DAY = /^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,3})?Z$/;

/** Formatters by time zone: making one costs far more than using it (immutable once made). */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = FORMATTERS.get(zone);
  if (!formatter) FORMATTERS.set(zone, (formatter = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' })));
  return formatter;
}

/**
 * The days of a run of timestamps (a session's) in time zone `zone` (an IANA name), as the Date
 * parser reads them; null for none or one it cannot read. The timestamps agents write are mostly
 * UTC instants with a time of day inside the day. In UTC, their day follows from their first ten
 * characters alone (the parser rolls an impossible date over, `02-30` to March, whatever the
 * time); in another zone, whose offset changes on the minute at most, from their first sixteen:
 * one parse for a run of them. What the last parse gave is held here, by whoever reads the run.
 */
export class DayReader {
  /** The prefix (date in UTC, minute elsewhere) of the last in-day instant parsed, and its day. */
  private lastPrefix = '';
  private lastDay: string | null = null;
  private readonly prefixLength: number;
  private readonly formatter: Intl.DateTimeFormat | null;

  constructor(readonly zone = 'UTC') {
    this.prefixLength = zone === 'UTC' ? 10 : 16;
    this.formatter = zone === 'UTC' ? null : formatterFor(zone);
  }

  day(timestamp: string | null | undefined): string | null {
    if (!timestamp) return null;
    const inDay = IN_DAY.test(timestamp);
    if (inDay && this.lastPrefix !== '' && timestamp.startsWith(this.lastPrefix)) return this.lastDay;
    const time = Date.parse(timestamp);
    // en-CA writes dates as YYYY-MM-DD.
    const day = Number.isNaN(time) ? null : this.formatter ? this.formatter.format(time) : new Date(time).toISOString().slice(0, 10);
    if (inDay) {
      this.lastPrefix = timestamp.slice(0, this.prefixLength);
      this.lastDay = day;
    }
    return day;
  }
}

/** `2026-02-03` for a timestamp the Date parser reads; null for none or one it cannot. */
export function utcDay(timestamp: string | null | undefined): string | null {
  return new DayReader().day(timestamp);
}

/** The day a timestamp falls on in time zone `zone` (DayReader, for one timestamp). */
export function dayIn(timestamp: string | null | undefined, zone: string): string | null {
  return new DayReader(zone).day(timestamp);
}

/** Days from `since` to `until`, both included (YYYY-MM-DD; null: open); a call is kept when its day is in it. */
export interface DayRange {
  readonly since: string | null;
  readonly until: string | null;
}

/** Is the day in the range? An undated call (null) is in no range. */
export function inDayRange(day: string | null, range: DayRange): boolean {
  if (day === null) return false;
  return (range.since === null || day >= range.since) && (range.until === null || day <= range.until);
}

/** How SpendByDay dates calls: the time zone of its days, and the days whose calls it keeps (null: all). */
export interface DayRule {
  readonly zone: string;
  readonly range: DayRange | null;
}

const UTC_DAYS: DayRule = { zone: 'UTC', range: null };

/** The project a session belongs to (see the header). */
export function sessionProject(session: Pick<Session, 'path' | 'project'>): string {
  return session.project ?? dirname(session.path);
}

/** The day the session started: its first dated message, else its first dated off-context call. */
export function startDay(session: Session<AnyMessage>, days: DayReader = new DayReader()): string | null {
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
export function sessionSpend(session: Session<AnyMessage>, billed: readonly BilledCall[], costs: readonly (CostSplit | null)[], days: DayRule = UTC_DAYS): SessionSpend {
  const sum = new SpendByDay(session, days);
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
  private readonly reader: DayReader;
  /** The sum the last call went to: a session's calls come in runs of one day and model. */
  private last: SpendSum | null = null;

  constructor(
    session: Session<AnyMessage>,
    private readonly days: DayRule = UTC_DAYS,
  ) {
    this.reader = new DayReader(days.zone);
    this.started = startDay(session, this.reader);
    this.project = sessionProject(session);
  }

  /** Adds a spend call, unless its day is outside the rule's range (`--since`, `--until`). */
  add(call: BilledCall, cost: CostSplit | null): void {
    if (!isSpend(call)) return;
    const day = this.reader.day(call.timestamp) ?? this.started;
    if (this.days.range !== null && !inDayRange(day, this.days.range)) return;
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

/** Dollars as whole nanodollars: integer sums are exact (to $9M) and so the same in any order. */
const NANO = 1e9;
const nano = (usd: number): number => Math.round(usd * NANO);

/** Model names in a fixed order (no model first): a merged roll-up lists them as one run does. */
function byName(a: string | null, b: string | null): number {
  if (a === null || b === null) return a === null ? (b === null ? 0 : -1) : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Whole ledgers added up, their dollars in nanodollars (see the header). The sum's `cost` is
 * null when a call had no price, else the priced cost, as LedgerSum's.
 */
export class ExactLedgerSum {
  /** Tokens, calls and unpriced models, summed as LedgerSum sums them; only the dollars are kept apart. */
  private readonly counts = new LedgerSum();
  private readonly usd = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0, total: 0 };

  addLedger(ledger: Ledger): void {
    this.counts.addLedger(ledger);
    const cost = ledger.pricedCost;
    this.usd.input += nano(cost.input);
    this.usd.cacheWrite += nano(cost.cacheWrite);
    this.usd.cacheRead += nano(cost.cacheRead);
    this.usd.output += nano(cost.output);
    this.usd.total += nano(cost.total);
  }

  ledger(): Ledger {
    const { usd } = this;
    const counted = this.counts.ledger();
    const pricedCost = { input: usd.input / NANO, cacheWrite: usd.cacheWrite / NANO, cacheRead: usd.cacheRead / NANO, output: usd.output / NANO, total: usd.total / NANO };
    return { ...counted, cost: counted.unpricedRequests > 0 ? null : pricedCost, unpriced: [...counted.unpriced].sort(byName), pricedCost };
  }
}

/** A session's spend over all its days and models, summed as the roll-up sums it. */
export function sessionTotal(spend: SessionSpend): Ledger {
  const sum = new ExactLedgerSum();
  for (const part of spend.parts) sum.addLedger(part.ledger);
  return sum.ledger();
}

class Rows {
  private readonly rows = new Map<string | null, { sum: ExactLedgerSum; sessions: number; lastSession: number }>();

  /** A part of session number `session` (a session counts once per row, however many parts it has there). */
  add(key: string | null, ledger: Ledger, session: number): void {
    const row = this.row(key);
    row.sum.addLedger(ledger);
    if (row.lastSession !== session) {
      row.sessions++;
      row.lastSession = session;
    }
  }

  /** A row of another roll-up over other sessions (a shard's). */
  addRow(row: RollupRow): void {
    const mine = this.row(row.key);
    mine.sum.addLedger(row.ledger);
    mine.sessions += row.sessions;
  }

  list(): RollupRow[] {
    return [...this.rows].map(([key, row]) => ({ key, sessions: row.sessions, ledger: row.sum.ledger() }));
  }

  private row(key: string | null) {
    let row = this.rows.get(key);
    if (!row) this.rows.set(key, (row = { sum: new ExactLedgerSum(), sessions: 0, lastSession: -1 }));
    return row;
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

/** The Monday of a day's ISO week, `2026-02-02` for `2026-02-04`. */
export function weekOf(day: string): string {
  const time = Date.parse(`${day}T00:00:00Z`);
  const weekday = (new Date(time).getUTCDay() + 6) % 7;
  return new Date(time - weekday * 86_400_000).toISOString().slice(0, 10);
}

/** The roll-up's tables, one name each as `--json` names them. */
export const ROLLUP_KEYS = ['project', 'day', 'week', 'month', 'model'] as const;

/** The sessions' spend added up per project, day, week, month and model, one session at a time (O(rows), not O(sessions)). */
export class RollupSum {
  private sessions = 0;
  private readonly total = new ExactLedgerSum();
  private readonly tables = { project: new Rows(), day: new Rows(), week: new Rows(), month: new Rows(), model: new Rows() };

  add(spend: SessionSpend): void {
    const session = this.sessions++;
    const { project, day, week, month, model } = this.tables;
    for (const part of spend.parts) {
      this.total.addLedger(part.ledger);
      project.add(spend.project, part.ledger, session);
      day.add(part.day, part.ledger, session);
      week.add(part.day === null ? null : weekOf(part.day), part.ledger, session);
      month.add(part.day === null ? null : part.day.slice(0, 7), part.ledger, session);
      model.add(part.model, part.ledger, session);
    }
  }

  /** Another roll-up, over other sessions (a shard's, read back by `compactor report`). */
  addRollup(rollup: Rollup): void {
    this.sessions += rollup.sessions;
    this.total.addLedger(rollup.total);
    const from = { project: rollup.byProject, day: rollup.byDay, week: rollup.byWeek, month: rollup.byMonth, model: rollup.byModel };
    for (const key of ROLLUP_KEYS) for (const row of from[key]) this.tables[key].addRow(row);
  }

  rollup(): Rollup {
    const { project, day, week, month, model } = this.tables;
    return {
      sessions: this.sessions,
      total: this.total.ledger(),
      byProject: project.list().sort(costliestFirst),
      byDay: day.list().sort(latestFirst),
      byWeek: week.list().sort(latestFirst),
      byMonth: month.list().sort(latestFirst),
      byModel: model.list().sort(costliestFirst),
    };
  }
}

/** The sessions' spend added up per project, day, week, month and model. */
export function rollUp(spends: readonly SessionSpend[]): Rollup {
  const sum = new RollupSum();
  for (const spend of spends) sum.add(spend);
  return sum.rollup();
}
