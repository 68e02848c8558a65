/**
 * `compactor report FILE…`: the archive view of saved `inspect --json` outputs, one per shard
 * (`--shard K/N`) or one per run over disjoint sessions, merged: the same session table, roll-up
 * and total gates as one run over all their sessions would print; in `--json` its last record,
 * byte for byte. Each file's last `{"rollup": …}` record is read (the per-session records before
 * it are passed over); the table keeps the files' ranking (their --sort, and at most their --top).
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
  readonly table: SessionTable;
  readonly rollup: Rollup;
}

/** The last roll-up record of a saved `inspect --json` output; an error naming the file and line otherwise. */
async function readSaved(file: string): Promise<Saved> {
  let last: { line: number; text: string } | null = null;
  let lineNumber = 0;
  try {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const text of lines) {
      lineNumber++;
      // Only a roll-up record starts so; the sessions' records are not parsed.
      if (text.startsWith('{"rollup":')) last = { line: lineNumber, text };
    }
  } catch (error) {
    throw new InputError(`cannot read: ${describeError(error)}`, file);
  }
  if (!last) throw new InputError('no {"rollup": …} record: save the output of `inspect --json` over several sessions or with --shard', file);
  try {
    const record = (JSON.parse(last.text) as { rollup: Record<string, unknown> }).rollup;
    return { file, table: sessionTableFromJson(record), rollup: rollupFromJson(record) };
  } catch (error) {
    throw new InputError(describeError(error), file, last.line);
  }
}

export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report [files..]',
  describe: 'Merge saved inspect --json outputs (shards) into one archive view',
  builder: (yargs) =>
    withTotalGates(
      yargs
        .positional('files', { describe: 'saved inspect --json outputs, one per shard', type: 'string', array: true })
        .middleware(takeNamesAfterDoubleDash('files'), true)
        .check((args) => {
          if ((args['files'] as string[] | undefined)?.length) return true;
          throw new UsageError('name at least one saved inspect --json output');
        })
        .option('json', { describe: 'print the roll-up record as inspect --json ends with it', type: 'boolean', default: false })
        .option('sort', { describe: 'rank the sessions by (the saved runs must have ranked by it)', choices: SORT_KEYS })
        .option('top', { describe: 'session rows (at most the saved runs\' --top) [default: theirs]', type: 'number' })
        .option('by', { describe: 'the roll-up by UTC day, week (from Monday) or month', choices: ROLLUP_PERIODS, default: 'day' as RollupPeriod })
        .option('all', { describe: 'every row of the roll-up tables', type: 'boolean', default: false }),
    ) as never,
  handler: async (args) => {
    const limits = totalGateLimits(args);
    if (args.top !== undefined && !(Number.isInteger(args.top) && args.top >= 1)) throw new UsageError(`--top must be a whole number >= 1, got ${String(args.top)}`);
    const saved: Saved[] = [];
    for (const file of args.files) saved.push(await readSaved(file));
    const sorts = new Set(saved.map((one) => one.table.sort));
    if (sorts.size > 1) throw new UsageError(`the files ranked their sessions by different keys (${[...sorts].join(', ')}): run inspect with one --sort`);
    const sort = saved[0]!.table.sort;
    if (args.sort !== undefined && args.sort !== sort) throw new UsageError(`--sort ${args.sort}: the files kept their top sessions by ${sort}; run inspect --sort ${args.sort}`);
    const kept = Math.min(...saved.map((one) => one.table.top));
    if (args.top !== undefined && args.top > kept) throw new UsageError(`--top ${args.top}: the files kept ${kept} sessions each; run inspect with --top ${args.top}`);
    const view = new ArchiveView({ sort, top: args.top ?? kept, by: args.by, all: args.all, limits });
    for (const one of saved) view.addSaved(one.table, one.rollup);
    const output = createOutput(args.json);
    view.finish(output);
    await output.close();
    process.exitCode = view.breached ? ExitCode.gate : ExitCode.ok;
  },
};
