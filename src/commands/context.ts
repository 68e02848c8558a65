/**
 * `compactor context SESSION`: the provider view (summary, acknowledgement, kept messages) as
 * canonical JSONL, exactly what a harness would send after the sidecar's compaction. A view that
 * breaks the provider's rules is our bug: the command fails before printing anything.
 */
import type { CommandModule } from 'yargs';
import { redactMessages } from '../compaction/redact.js';
import { livePrevious, subjectView } from '../compaction/compact.js';
import { ExitCode, UsageError } from '../errors.js';
import { assertViewRules } from '../session/view-rules.js';
import { loadSession } from '../pipeline/load.js';
import { STRICT_OPTION, takeNamesAfterDoubleDash } from './options.js';
import { logWarning } from '../pipeline/log.js';
import { toCanonicalRecord } from '../formats/canonical.js';
import { FORMAT_NAMES } from '../formats/index.js';
import { jsonLinesWriter } from '../report/json-lines.js';

interface ContextArgs {
  session: string;
  format: string;
  strict: boolean;
  redact: boolean;
}

export const contextCommand: CommandModule<object, ContextArgs> = {
  command: 'context [session]',
  describe: 'Print what the provider sees after compaction, as canonical JSONL',
  builder: (yargs) =>
    yargs
      .positional('session', { describe: 'one session file, or - for stdin', type: 'string' })
      .middleware(takeNamesAfterDoubleDash('session'), true)
      .check((args) => {
        const session = args['session'];
        if (typeof session === 'string') return true;
        throw new UsageError(session === undefined ? 'name the session file to print' : 'context prints one session: name one file');
      })
      .option('format', { describe: 'session format', choices: FORMAT_NAMES as string[], default: 'auto' })
      .option('strict', STRICT_OPTION)
      .option('redact', { describe: 'mask secrets (API keys, passwords, private keys…) in what is printed', type: 'boolean', default: false }) as never,
  handler: async (args) => {
    const loaded = await loadSession(args.session, { format: args.format, withSidecar: true, staleSidecar: 'fail', strict: args.strict });
    loaded.warnings.forEach(logWarning);
    const writer = jsonLinesWriter();
    // The agent's own last compaction already cut the session: its window is where the view starts.
    const state = livePrevious(loaded.subject)?.state ?? null;
    const view = subjectView(loaded.subject, state);
    assertViewRules(view, state ? 'the compacted view' : 'the provider view', args.session);
    for (const message of args.redact ? redactMessages(view) : view) {
      writer.write(toCanonicalRecord(message));
    }
    await writer.close();
    process.exitCode = ExitCode.ok;
  },
};
