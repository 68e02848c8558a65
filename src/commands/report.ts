/**
 * `compactor report FILE…`: the archive view of saved `inspect --json` outputs, one per shard
 * (`--shard K/N`) or one per run over disjoint sessions, merged: the same session table, roll-up
 * and total gates as one run over all their sessions would print; in `--json` its last record,
 * byte for byte. Each file's last `{"rollup": …}` record is read (the per-session records before
 * it are passed over); the table keeps the files' ranking (their --sort, and at most their --top).
 * Saved `replay --json` outputs give the what-if across all their sessions instead: every
 * per-session record is read again, in the files' order, into the replay roll-up
 * (replay/rollup.ts), as one run over them in that order prints it.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { CommandModule } from 'yargs';
import { InputError, UsageError, describeError } from '../errors.js';
import type { SessionTable, SortKey } from '../ledgers/archive.js';
import { SORT_KEYS } from '../ledgers/archive.js';
import { sessionTableFromJson } from '../ledgers/archive-report.js';
import type { Rollup } from '../ledgers/rollup.js';
import type { RollupPeriod } from '../ledgers/rollup-report.js';
import { ROLLUP_PERIODS, rollupFromJson } from '../ledgers/rollup-report.js';
import { createOutput } from '../pipeline/output.js';
import { ExitCode } from '../errors.js';
import type { TotalGateArgs } from './gates.js';
import { totalGateLimits, withTotalGates } from './gates.js';
import { ArchiveView } from './archive-view.js';
import type { RollupInput } from '../replay/rollup.js';
import { ReplayRollupSum, rollupInput } from '../replay/rollup.js';
import { renderReplayRollup, replayRollupJson } from '../replay/rollup-report.js';
import { takeNamesAfterDoubleDash } from './options.js';

interface ReportArgs extends TotalGateArgs {
  files: string[];
  json: boolean;
  sort?: SortKey;
  top?: number;
  by: RollupPeriod;
  all: boolean;
}

/** One saved run's archive view. */
interface Saved {
  readonly file: string;
  /** The zone its days were counted in (`time_zone`). */
  readonly zone: string;
  readonly table: SessionTable;
  readonly rollup: Rollup;
}

/** A file's lines, numbered from 1; a read error names the file. */
async function* linesOf(file: string): AsyncGenerator<{ line: number; text: string }> {
  let line = 0;
  try {
    for await (const text of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) yield { line: ++line, text };
  } catch (error) {
    throw new InputError(`cannot read: ${describeError(error)}`, file);
  }
}

/** Is this saved output replay's? Its first record (a session's, or the roll-up) has `policies`. */
async function isReplay(file: string): Promise<boolean> {
  for await (const { line, text } of linesOf(file)) {
    if (text.trim() === '') continue;
    try {
      const record = JSON.parse(text) as Record<string, unknown>;
      const rollup = record['rollup'] as Record<string, unknown> | undefined;
      return Array.isArray((rollup ?? record)['policies']);
    } catch (error) {
      throw new InputError(`not a JSON record: ${describeError(error)}`, file, line);
    }
  }
  return false;
}

/** The per-session records of a saved `replay --json` output, in order, as the roll-up reads them. */
async function* replayRecords(file: string): AsyncGenerator<RollupInput> {
  for await (const { line, text } of linesOf(file)) {
    if (text.trim() === '' || text.startsWith('{"rollup":')) continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new InputError(`not a JSON record: ${describeError(error)}`, file, line);
    }
    // A failed session's record has no policies: no roll-up counts it.
    if (!Array.isArray(record['policies'])) continue;
    try {
      // `as unknown as`: a record of our own `replay --json`, trusted to have its shape (no schema
      // for it); rollupInput copies the fields the roll-up reads, and a missing list throws below.
      yield rollupInput(record as unknown as RollupInput);
    } catch (error) {
      throw new InputError(`not a replay --json record: ${describeError(error)}`, file, line);
    }
  }
}

/** The last roll-up record of a saved `inspect --json` output; an error naming the file and line otherwise. */
async function readSaved(file: string): Promise<Saved> {
  let last: { line: number; text: string } | null = null;
  // Only a roll-up record starts so; the sessions' records are not parsed.
  for await (const entry of linesOf(file)) if (entry.text.startsWith('{"rollup":')) last = entry;
  if (!last) throw new InputError('no {"rollup": …} record: save the output of `inspect --json` over several sessions or with --shard', file);
  try {
    const record = (JSON.parse(last.text) as { rollup: Record<string, unknown> }).rollup;
    const zone = record['time_zone'];
    if (typeof zone !== 'string') throw new Error('rollup: "time_zone" is missing (a roll-up written before it? run inspect again)');
    return { file, zone, table: sessionTableFromJson(record), rollup: rollupFromJson(record) };
  } catch (error) {
    throw new InputError(describeError(error), file, last.line);
  }
}

export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report [files..]',
  describe: 'Merge saved inspect --json (or replay --json) outputs, one per shard, into one archive view (or what-if)',
  // `as never`: yargs types the flags as parsed (`files` may be missing until the check below
  // refuses that, the gates' flags untyped); the handler's type is the truth.
  builder: (yargs) =>
    withTotalGates(
      yargs
        .positional('files', { describe: 'saved inspect --json (or replay --json) outputs, one per shard', type: 'string', array: true })
        .middleware(takeNamesAfterDoubleDash('files'), true)
        .check((args) => {
          if ((args['files'] as string[] | undefined)?.length) return true;
          throw new UsageError('name at least one saved inspect --json output');
        })
        .option('json', { describe: 'print the roll-up record as inspect --json ends with it', type: 'boolean', default: false })
        .option('sort', { describe: 'rank the sessions by (the saved runs must have ranked by it)', choices: SORT_KEYS })
        .option('top', { describe: 'session rows (at most the saved runs\' --top) [default: theirs]', type: 'number' })
        .option('by', { describe: 'the roll-up by day, week (from Monday) or month (as the saved runs counted days)', choices: ROLLUP_PERIODS, default: 'day' as RollupPeriod })
        .option('all', { describe: 'every row of the roll-up tables', type: 'boolean', default: false }),
    ) as never,
  handler: async (args) => {
    const limits = totalGateLimits(args);
    if (args.top !== undefined && !(Number.isInteger(args.top) && args.top >= 1)) throw new UsageError(`--top must be a whole number >= 1, got ${String(args.top)}`);
    const kinds = await Promise.all(args.files.map(isReplay));
    if (kinds.some((replay) => replay)) {
      if (!kinds.every((replay) => replay)) throw new UsageError('give report the outputs of one command: all inspect --json, or all replay --json');
      const sum = new ReplayRollupSum();
      for (const file of args.files) for await (const record of replayRecords(file)) sum.add(record);
      const across = sum.rollup();
      const output = createOutput(args.json);
      output.record(replayRollupJson(across), () => renderReplayRollup(across));
      await output.close();
      return;
    }
    const saved: Saved[] = [];
    for (const file of args.files) saved.push(await readSaved(file));
    const sorts = new Set(saved.map((one) => one.table.sort));
    if (sorts.size > 1) throw new UsageError(`the files ranked their sessions by different keys (${[...sorts].join(', ')}): run inspect with one --sort`);
    const sort = saved[0]!.table.sort;
    if (args.sort !== undefined && args.sort !== sort) throw new UsageError(`--sort ${args.sort}: the files kept their top sessions by ${sort}; run inspect --sort ${args.sort}`);
    const kept = Math.min(...saved.map((one) => one.table.top));
    if (args.top !== undefined && args.top > kept) throw new UsageError(`--top ${args.top}: the files kept ${kept} sessions each; run inspect with --top ${args.top}`);
    const zones = new Set(saved.map((one) => one.zone));
    if (zones.size > 1) throw new UsageError(`the files counted days in different time zones (${[...zones].join(', ')}): run inspect with one --timezone`);
    const view = new ArchiveView({ sort, top: args.top ?? kept, by: args.by, all: args.all, limits, zone: saved[0]!.zone });
    for (const one of saved) view.addSaved(one.table, one.rollup);
    const output = createOutput(args.json);
    view.finish(output);
    await output.close();
    process.exitCode = view.breached ? ExitCode.gate : ExitCode.ok;
  },
};
