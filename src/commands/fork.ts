/**
 * `compactor fork SESSION…`: compacts each session as `compact` does (same flags; the sidecar is
 * written or reused), then writes a new session file in the session's own format that its agent
 * continues with the compaction applied, and prints the command that resumes it: the use case is
 * compact/fork.ts; this module parses the flags and prints the outcomes (compact/render.ts).
 * A session with nothing to compact, or whose fork would not make the agent's request smaller
 * (`no-gain`), is not forked (exit 0, as compact's skips); one the agent could not continue, or a
 * format no fork is written for, fails with one line and no file.
 */
import type { CommandModule } from 'yargs';
import { UsageError } from '../errors.js';
import { isStdin } from '../formats/json/input-source.js';
import { forkCompacted } from '../compact/fork.js';
import type { ForkOutcome } from '../compact/job.js';
import { forkLine, forkRecord } from '../compact/render.js';
import { runBatch } from '../pipeline/batch.js';
import type { CompactArgs } from './compact.js';
import { prepareCompaction } from './compact.js';
import { withAllowNoGain, withInputs, withPolicy, withSettings } from './options.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { withSummarizer } from './summarizer.js';
import type { LogFormat } from '../pipeline/log.js';
import { configureLog, LOG_FORMATS, writeEvent } from '../pipeline/log.js';

// fork takes compact's flags but --dry-run (it would write nothing to fork from).
type ForkArgs = Omit<CompactArgs, 'dry-run'> & { out?: string };

export const forkCommand: CommandModule<object, ForkArgs> = {
  command: 'fork [inputs..]',
  describe: 'Compact each session and write a new session file its agent resumes compacted',
  builder: (yargs) =>
    withSettings(withSummarizer(withAllowNoGain(withPolicy(withInputs(yargs, 'fork'))), 'fork'), ['strategy', 'relevance'], 'fork')
      .option('out', { describe: 'write the forks here instead of where the agent looks for them', type: 'string' })
      .option('redact', { describe: 'mask secrets in what is summarized and stored (default: on for remote endpoints)', type: 'boolean' })
      .option('log-format', { describe: 'stderr: text or json (one JSON event a line)', choices: LOG_FORMATS, default: 'text' as LogFormat })
      .check((args) => {
        // A fork and the sidecar it starts from are files beside their session: stdin has no place.
        if (!(args['inputs'] as string[] | undefined)?.some(isStdin)) return true;
        throw new UsageError('fork does not read stdin (-): a fork and its sidecar are written beside the session file; save the session to a file and name it');
      }),
  handler: async (args) => {
    configureLog(args['log-format'], args.verbose);
    const { job, tools, concurrency, sweep } = await prepareCompaction({ ...args, 'dry-run': false }, 'fork');
    const place = { ...(args.out ? { outDir: args.out } : {}), allowNoGain: args['allow-no-gain'] === true };
    await runSessionCommand<Exclude<ForkOutcome, { status: 'failed' }>>(args, { progress: true }, (output) => ({
      run: (paths, emit) =>
        runBatch(
          paths,
          async ({ path }) => {
            const outcome = await forkCompacted(path, job, tools, sweep, place);
            if (outcome.status !== 'failed') return outcome;
            // A failed session is the frame's to report, after its own lines.
            outcome.warnings.forEach((warning) => output.warn(warning));
            outcome.events.forEach(writeEvent);
            throw Object.assign(new Error(outcome.error), { stopsBatch: outcome.stopsRun });
          },
          emit,
          concurrency,
        ),
      print: (_path, outcome) => {
        outcome.events.forEach(writeEvent);
        output.record(forkRecord(outcome), () => forkLine(outcome));
      },
    }));
  },
};
