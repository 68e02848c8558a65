/**
 * The archive view as `inspect` (over several sessions) and `report` (over saved roll-ups) end
 * their run: the ranked session table, the roll-up, the archive-wide gates. Sessions (or whole
 * roll-ups read back) are folded in as they come: N rows and the roll-up's rows are held, not
 * every session. `finish` prints the text view or the last NDJSON record `{"rollup": …}`, one
 * line per breached total gate on stderr, and the cost gate's warning when calls had no price.
 */
import type { SessionRow, SessionTable, SortKey } from '../ledgers/archive.js';
import { SessionRanking } from '../ledgers/archive.js';
import { renderSessionTable } from '../ledgers/archive-report.js';
import type { Rollup, SessionSpend } from '../ledgers/rollup.js';
import { RollupSum } from '../ledgers/rollup.js';
import type { RollupPeriod } from '../ledgers/rollup-report.js';
import { renderRollup, rollupJson } from '../ledgers/rollup-report.js';
import type { Breach, GateLimits } from '../gates/check.js';
import { breachJson, checkTotalGates } from '../gates/check.js';
import type { CommandOutput } from '../pipeline/output.js';
import { totalBreachLine, unpricedGateWarning } from './gates.js';

export interface ArchiveViewOptions {
  readonly sort: SortKey;
  readonly top: number;
  readonly by: RollupPeriod;
  readonly all: boolean;
  readonly limits: GateLimits;
  /** The time zone of the days (`--timezone`; UTC by default), named in the roll-up's headers. */
  readonly zone?: string;
}

export class ArchiveView {
  private readonly ranking: SessionRanking;
  private readonly sum = new RollupSum();
  private breaches: readonly Breach[] = [];

  constructor(private readonly options: ArchiveViewOptions) {
    this.ranking = new SessionRanking(options.sort, options.top);
  }

  /** One session's row and spend. */
  add(row: SessionRow, spend: SessionSpend): void {
    this.ranking.add(row);
    this.sum.add(spend);
  }

  /** A saved run's view (a shard's roll-up record), over sessions none of the others had. */
  addSaved(table: SessionTable, rollup: Rollup): void {
    this.ranking.addTable(table);
    this.sum.addRollup(rollup);
  }

  /** Did a total gate fail (after finish)? */
  get breached(): boolean {
    return this.breaches.length > 0;
  }

  finish(output: CommandOutput): void {
    const table = this.ranking.table();
    const rollup = this.sum.rollup();
    const { limits } = this.options;
    const { total } = rollup;
    if (limits.maxTotalCostUsd !== undefined && total.unpricedRequests > 0) output.warn(unpricedGateWarning(total.unpricedRequests, total.unpriced));
    this.breaches = checkTotalGates({ costUsd: total.pricedCost.total, inputTokens: total.inputTokens }, limits);
    const zone = this.options.zone ?? 'UTC';
    const gates = this.breaches.map((breach) => breachJson(breach));
    output.record(rollupJson(rollup, table, gates, zone), () => `${renderSessionTable(table)}\n${renderRollup(rollup, { all: this.options.all, by: this.options.by, zone })}`);
    for (const breach of this.breaches) process.stderr.write(`${totalBreachLine(rollup.sessions, breach)}\n`);
  }
}
