/**
 * The `compactor` command line: registers the commands and turns every failure into one line
 * on stderr and a documented exit code (README "Exit codes").
 */
import { createRequire } from 'node:module';
import type Yargs from 'yargs';
import type { Argv, CommandModule } from 'yargs';
import { installInterruptHandlers, interruption, stopAtOnceOnSignal } from './pipeline/interrupt.js';
import { logFormat, logMessage } from './pipeline/log.js';
import { describeError, ExitCode, InputError, UsageError } from './errors.js';

const require = createRequire(import.meta.url);
/** Given to yargs: its CommonJS build looks for package.json from the working directory. */
const { version } = require('../package.json') as { version: string };

/** A command handed to yargs: each module keeps its own argument types up to this call. */
type Registration = (parser: Argv) => Argv;
const registration =
  <Args>(module: CommandModule<object, Args>): Registration =>
  (parser) =>
    parser.command(module);

/**
 * Each command's module, loaded only when it runs (or when help or completion lists them all):
 * start-up is most of a small session's run, and each command pulls in its own dependencies.
 */
export const COMMANDS: Record<string, () => Promise<Registration>> = {
  estimate: async () => registration((await import('./commands/estimate.js')).estimateCommand),
  inspect: async () => registration((await import('./commands/inspect.js')).inspectCommand),
  compact: async () => registration((await import('./commands/compact.js')).compactCommand),
  replay: async () => registration((await import('./commands/replay.js')).replayCommand),
  context: async () => registration((await import('./commands/context.js')).contextCommand),
  fork: async () => registration((await import('./commands/fork.js')).forkCommand),
  audit: async () => registration((await import('./commands/audit.js')).auditCommand),
  report: async () => registration((await import('./commands/report.js')).reportCommand),
};

/** Commands that write nothing (compact --dry-run says so in its handler): a signal stops them at once. */
const READ_ONLY = new Set(['estimate', 'inspect', 'replay', 'context', 'audit', 'report']);

/** The command modules this command line needs: the named command's alone when it comes first. */
async function commandsFor(argv: readonly string[]): Promise<Registration[]> {
  const first = argv[0];
  const names = first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
  return Promise.all(names.map((name) => COMMANDS[name]!()));
}

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

/**
 * yargs lays out the whole help text before running a command, in case the command shows it
 * (string widths of every option, word wrap: a tenth of a small session's run). Ours never does:
 * a failure prints one line and points to --help. Reached through yargs' internal methods; if a
 * release moves them, nothing changes but the time.
 */
function skipHelpCache(parser: unknown): void {
  const usage = (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } }).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // `--version` alone needs neither yargs nor any command: answered before loading them.
  if (argv.length === 1 && argv[0] === '--version') {
    process.stdout.write(`${version}\n`);
    return;
  }
  const uninstall = installInterruptHandlers(ExitCode.interrupted);
  if (argv[0] !== undefined && READ_ONLY.has(argv[0])) stopAtOnceOnSignal();
  process.stdout.on('error', exitQuietlyOnClosedStdout);
  // yargs' CommonJS build: its ES module build wraps help text every N characters, mid-word (its
  // cliui ships no word wrap there); the CommonJS one wraps between words.
  const yargs = require('yargs/yargs') as typeof Yargs;
  const { normalizeArgs, usageMessage } = await import('./commands/options.js');
  let parser = yargs([...argv])
    .scriptName('compactor')
    // Messages in English whatever the locale: usageMessage rewrites yargs's own.
    .locale('en')
    // Names after `--` are kept apart, so commands can take them as sessions (options.ts).
    .parserConfiguration({ 'populate--': true })
    .middleware(normalizeArgs(argv), true)
    .usage('$0 <command> [options] <sessions..>');
  for (const register of await commandsFor(argv)) parser = register(parser);
  parser = parser
    // bash or zsh by $SHELL; the script asks `compactor --get-yargs-completions …` at each <tab>.
    .completion('completion', 'Print a bash or zsh completion script (zsh when $SHELL is zsh)')
    .demandCommand(1, 'name a command: estimate, inspect, compact, replay, context, fork, audit, report or completion')
    .strict()
    .wrap(Math.min(100, process.stdout.columns || 80))
    .epilogue('Exit codes: 0 ok, 1 a session failed (or a rejected API key stopped the batch), 2 bad usage, 3 a CI gate was breached, 130 interrupted.')
    .fail((message, error) => {
      // yargs reports its own parse errors with a message; errors thrown by handlers arrive as `error`.
      throw error ?? new UsageError(usageMessage(message));
    })
    .help()
    .version(version);
  skipHelpCache(parser);
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
