/**
 * `compactor fork SESSION…`: compacts each session as `compact` does (same flags; the sidecar is
 * written or reused), then writes a new session file in the session's own format that its agent
 * continues with the compaction applied (src/fork/), and prints the command that resumes it.
 * A session with nothing to compact, or whose fork would not make the agent's request smaller
 * (`no-gain`), is not forked (exit 0, as compact's skips); one the agent could not continue, or a
 * format no fork is written for, fails with one line and no file.
 */
import type { CommandModule } from 'yargs';
import { formatTokens } from '../report/format.js';
import { readSession } from '../formats/index.js';
import { forkSession, refusedFork } from '../fork/index.js';
import { unresumableReason } from '../fork/source.js';
import { runBatch } from '../pipeline/batch.js';
import type { CompactArgs } from './compact.js';
import { prepareCompaction } from './compact.js';
import { settingFlag, withAllowNoGain, withInputs, withPolicy } from './options.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { withSummarizer } from './summarizer.js';
import type { LogFormat } from '../pipeline/log.js';
import { configureLog, LOG_FORMATS } from '../pipeline/log.js';

type ForkArgs = CompactArgs & { out?: string };

interface ForkOutcome {
  readonly warnings?: readonly string[];
  readonly record: Record<string, unknown>;
  readonly line: string;
}

export const forkCommand: CommandModule<object, ForkArgs> = {
  command: 'fork <inputs..>',
  describe: 'Compact each session and write a new session file its agent resumes compacted',
  builder: (yargs) =>
    withSummarizer(withAllowNoGain(withPolicy(withInputs(yargs, 'fork'))), 'fork')
      .option(...settingFlag('strategy', 'fork'))
      .option('out', { describe: 'write the forks here instead of where the agent looks for them', type: 'string' })
      .option('redact', { describe: 'mask secrets in what is summarized and stored (default: on for remote endpoints)', type: 'boolean' })
      .option('log-format', { describe: 'stderr: text or json (one JSON event a line)', choices: LOG_FORMATS, default: 'text' as LogFormat }) as never,
  handler: async (args) => {
    configureLog(args['log-format'], args.verbose);
    const { compactInThisThread, concurrency } = await prepareCompaction({ ...args, 'dry-run': false }, 'fork');
    await runSessionCommand<ForkOutcome>(args, { progress: true }, (output) => ({
      run: (paths, emit) =>
        runBatch(
          paths,
          async ({ path }): Promise<ForkOutcome> => {
            // Refused before compacting: a session the agent cannot continue gets no file at all.
            const session = await readSession(path, args.format);
            const unforkable = refusedFork(session) ?? unresumableReason(session);
            if (unforkable) throw unforkable;
            const compacted = await compactInThisThread(path, (warning) => output.warn(warning));
            if (compacted.status !== 'compacted' && compacted.status !== 'up-to-date') {
              const reason = String(compacted.record['reason'] ?? compacted.line);
              return {
                record: { ...compacted.record, status: compacted.status },
                line: `not forked ${path}: ${compacted.status}, nothing to fork (${reason})`,
              };
            }
            const fork = await forkSession(path, { format: args.format, strict: args.strict, allowNoGain: args['allow-no-gain'] === true, ...(args.out ? { outDir: args.out } : {}) });
            const tokens = `${formatTokens(fork.tokens_before)} -> ${formatTokens(fork.tokens_after)} tokens`;
            if (fork.status === 'no-gain') {
              return { record: { ...fork }, line: `not forked ${path}: no-gain, ${fork.reason} (${tokens})` };
            }
            const { status, ...written } = fork;
            return {
              record: { ...written, status },
              line:
                `forked     ${path} -> ${fork.fork} (${tokens})\n` +
                `           ${fork.resume ? `resume: ${fork.resume}` : 'no agent resumes this format: send its messages with your harness'}`,
            };
          },
          emit,
          concurrency,
        ),
      print: (_path, result) => output.record(result.record, () => result.line),
    }));
  },
};
