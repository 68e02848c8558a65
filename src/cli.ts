/**
 * The `compactor` command line: registers the commands and turns every failure into one line
 * on stderr and a documented exit code (README "Exit codes").
 */
import { createRequire } from 'node:module';
import type Yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { auditCommand } from './commands/audit.js';
import { compactCommand } from './commands/compact.js';
import { contextCommand } from './commands/context.js';
import { estimateCommand } from './commands/estimate.js';
import { forkCommand } from './commands/fork.js';
import { inspectCommand } from './commands/inspect.js';
import { replayCommand } from './commands/replay.js';
import { installInterruptHandlers, interruption } from './pipeline/interrupt.js';
import { logFormat, logMessage } from './pipeline/log.js';
import { describeError, ExitCode, InputError, UsageError } from './errors.js';
import { normalizeArgs, usageMessage } from './commands/options.js';

/**
 * yargs' CommonJS build: its ES module build wraps help text every N characters, mid-word (its
 * cliui ships no word wrap there); the CommonJS one wraps between words.
 */
const require = createRequire(import.meta.url);
const yargs = require('yargs') as typeof Yargs;
/** Given to yargs: its CommonJS build looks for package.json from the working directory. */
const { version } = require('../package.json') as { version: string };

function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return ExitCode.usage;
  return ExitCode.failed;
}

/**
 * A reader that stops early (`compactor context s.jsonl | head`) closes our stdout: stop quietly,
 * as `git log | head` does, instead of dying on an unhandled EPIPE with a stack trace.
 */
function exitQuietlyOnClosedStdout(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? ExitCode.ok);
  process.stderr.write(`compactor: error: cannot write output: ${describeError(error)}\n`);
  process.exit(ExitCode.failed);
}

export async function main(argv: readonly string[] = hideBin(process.argv)): Promise<void> {
  const uninstall = installInterruptHandlers(ExitCode.interrupted);
  process.stdout.on('error', exitQuietlyOnClosedStdout);
  const parser = yargs([...argv])
    .scriptName('compactor')
    // Messages in English whatever the locale: usageMessage rewrites yargs's own.
    .locale('en')
    // Names after `--` are kept apart, so commands can take them as sessions (options.ts).
    .parserConfiguration({ 'populate--': true })
    .middleware(normalizeArgs(argv), true)
    .usage('$0 <command> [options] <sessions..>')
    .command(estimateCommand)
    .command(inspectCommand)
    .command(compactCommand)
    .command(replayCommand)
    .command(contextCommand)
    .command(forkCommand)
    .command(auditCommand)
    // bash or zsh by $SHELL; the script asks `compactor --get-yargs-completions …` at each <tab>.
    .completion('completion', 'Print a bash or zsh completion script (zsh when $SHELL is zsh)')
    .demandCommand(1, 'name a command: estimate, inspect, compact, replay, context, fork, audit or completion')
    .strict()
    .wrap(Math.min(100, process.stdout.columns || 80))
    .epilogue('Exit codes: 0 ok, 1 a session failed (or a rejected API key stopped the batch), 2 bad usage, 3 a CI gate was breached, 130 interrupted.')
    .fail((message, error) => {
      // yargs reports its own parse errors with a message; errors thrown by handlers arrive as `error`.
      throw error ?? new UsageError(usageMessage(message));
    })
    .help()
    .version(version);
  try {
    await parser.parseAsync();
  } catch (error) {
    const known = error instanceof InputError || error instanceof UsageError;
    if (logFormat() === 'json') logMessage('error', describeError(error));
    else {
      process.stderr.write(`compactor: ${known ? '' : 'error: '}${describeError(error)}\n`);
      if (error instanceof UsageError) process.stderr.write('Run compactor --help for usage.\n');
    }
    if (!known && process.env['COMPACTOR_DEBUG'] && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    process.exitCode = exitCodeFor(error);
  } finally {
    uninstall();
  }
  // Interrupted work is incomplete whatever else happened: 130 wins over 0, 1 and 3. A batch
  // stopped by an error every session would meet (a rejected key) failed: 1.
  if (interruption.requested) process.exitCode = ExitCode.interrupted;
  else if (interruption.failure) process.exitCode = ExitCode.failed;
}
