/**
 * The frame every per-session command shares (estimate, inspect, replay, compact, audit):
 * select the inputs (with --shard), open one output, run the sessions, print each one's
 * warnings and result in input order or its failure, above the progress bar, close the output
 * and set the exit code (0, 1 a session failed, 3 a CI gate failed). A command supplies only
 * how its sessions run and how one result prints.
 */
import { createProgress, printAbove, shouldShowProgress } from '../report/progress.js';
import type { Diagnostic } from '../session/model.js';
import type { SessionInput } from '../read/input.js';
import type { Outcome } from './batch.js';
import { selectInputs } from './inputs.js';
import { ExitCode } from '../errors.js';
import type { CommandOutput } from './output.js';
import { createOutput, reportFailure } from './output.js';
import { parseShard } from './shard.js';
import { inputShape } from '../formats/input-source.js';
import type { FilterArgs, SessionFilter } from './filters.js';
import { filters, keepsUnread, parseFilter, selectSessionTask } from './filters.js';
import { parseAgents } from './locations.js';
import { logFormat, logMessage } from './log.js';
import { parseJobs, runSessions } from './sessions.js';

/** The flags the frame reads itself (every command has them; the filters, those that read many). */
export interface FrameArgs extends FilterArgs {
  readonly inputs: readonly string[];
  readonly json: boolean;
  readonly shard?: string | undefined;
  readonly format: string;
  readonly jobs: string;
  readonly agent?: string | undefined;
}

/** Failed sessions (1) win over breached gates (3): an error means the numbers are incomplete. */
export function exitCodeFor(failed: boolean, breached: boolean): ExitCode {
  if (failed) return ExitCode.failed;
  return breached ? ExitCode.gate : ExitCode.ok;
}

/** A session's result: whatever the command prints, and the warnings its read found. */
export interface SessionResult {
  readonly warnings?: readonly (Diagnostic | string)[];
}

export interface SessionCommand<Result extends SessionResult> {
  /**
   * Runs the sessions (runSessions, runSessionBatches or runBatch), handing each outcome to `emit`
   * in input order. Each session comes with what its walk found (read/input.ts): pass it on to the read.
   * Returns the outcomes `finish` and `breached` read: none for a command that folds each result
   * as it is printed (inspect over an archive), so its memory does not grow with the sessions.
   */
  run(sessions: readonly SessionInput[], emit: (outcome: Outcome<Result>) => void): Promise<readonly Outcome<Result>[]>;
  /** Prints one session's result; its warnings are already printed. */
  print(path: string, result: Result): void;
  /** After the last session, before the output closes: tables, totals, --html. */
  finish?(outcomes: readonly Outcome<Result>[]): void | Promise<void>;
  /** Did a CI gate fail? Exit 3 unless a session failed (exit 1). */
  breached?(outcomes: readonly Outcome<Result>[]): boolean;
}

export interface FrameOptions {
  /**
   * Draw the progress bar (on a terminal, without --json, outside CI). Commands that print a
   * report per session ask for it only when stdout is not the same terminal.
   */
  readonly progress: boolean;
  /** Hears how many candidate files a walk found, before they are sniffed (inputs.ts expandInputFiles). */
  readonly walked?: (candidates: number) => void;
  /** The run writes sidecars beside its sessions (compact): with no path, stderr says it writes into the agents' folders. */
  readonly writesBeside?: boolean;
}

/** The sessions the filters keep, read once each to know (filters.ts); stderr says how many. */
async function selectedSessions(found: readonly SessionInput[], filter: SessionFilter, args: FrameArgs): Promise<SessionInput[]> {
  const kept = new Set<string>();
  // Stdin and pipes can be read only once, by the command: they are kept, unfiltered.
  const once = found.filter((input) => inputShape(input.path).onlyOnce);
  for (const { path } of once) {
    kept.add(path);
    logMessage('info', `${path}: read once only (stdin or a pipe), so kept whatever the filters say`);
  }
  // A --format given replaces what the walk sniffed: then every session is read.
  const unread = found.map((input) => (kept.has(input.path) ? true : args.format === 'auto' ? keepsUnread(input, filter) : null));
  found.forEach((input, index) => unread[index] && kept.add(input.path));
  const toRead = found.filter((_, index) => unread[index] === null);
  await runSessions(toRead, selectSessionTask, { format: args.format, filter }, (outcome) => {
    if (!outcome.ok || outcome.value) kept.add(outcome.path);
  }, parseJobs(args.jobs));
  const asked = [
    ...(args.since !== undefined ? [`--since ${args.since}`] : []),
    ...(args.until !== undefined ? [`--until ${args.until}`] : []),
    ...(filter.days !== null ? [`in ${filter.zone}`] : []),
    ...(args.project !== undefined ? [`--project ${JSON.stringify(args.project)}`] : []),
  ];
  logMessage('info', `kept ${kept.size} of ${found.length} session${found.length === 1 ? '' : 's'} (${asked.join(', ')})`);
  return found.filter((input) => kept.has(input.path));
}

export async function runSessionCommand<Result extends SessionResult>(
  args: FrameArgs,
  options: FrameOptions,
  command: (output: CommandOutput) => SessionCommand<Result>,
): Promise<void> {
  const filter = parseFilter(args);
  const shard = parseShard(args.shard);
  const agents = parseAgents(args.agent);
  const found = await selectInputs(args.inputs, shard, options.walked, agents);
  if (args.inputs.length === 0 && options.writesBeside) logMessage('info', 'writing sidecars beside the sessions in the agents\' folders (name a path to write elsewhere; --dry-run writes none)');
  const paths = filters(filter) ? await selectedSessions(found, filter, args) : found;
  const output = createOutput(args.json);
  // JSON logs on stderr are for a program to read: no bar among them.
  const progress = createProgress(paths.length, options.progress && shouldShowProgress(args.json || logFormat() === 'json'));
  const { run, print, finish, breached } = command(output);
  let outcomes: readonly Outcome<Result>[];
  // Seen as each outcome is emitted: a run that keeps no outcomes still exits 1 on a failure.
  let failed = false;
  try {
    outcomes = await run(paths, (outcome) => {
      if (!outcome.ok) failed = true;
      progress.tick(outcome.path);
      // A session's lines go above the bar, which is drawn again below them with the new count.
      printAbove(() => {
        if (!outcome.ok) return reportFailure(output, outcome.path, outcome.error);
        outcome.value.warnings?.forEach((warning) => output.warn(warning));
        print(outcome.path, outcome.value);
      });
    });
  } finally {
    // Also when the run throws: the bar's timer would keep the process alive.
    progress.stop();
  }
  await finish?.(outcomes);
  await output.close();
  process.exitCode = exitCodeFor(
    failed || outcomes.some((outcome) => !outcome.ok),
    breached?.(outcomes) ?? false,
  );
}

/** Progress for a command that prints a report per session: only when those reports go elsewhere. */
export const progressBesideReports = (): boolean => !process.stdout.isTTY;
