/**
 * `compactor context SESSION`: the provider view (summary, acknowledgement, kept messages) as
 * canonical JSONL, exactly what a harness would send after the sidecar's compaction; with
 * `--as anthropic|openai-chat|openai-responses`, the one request body that API takes for it. A
 * view that breaks the provider's rules is our bug: the command fails before printing anything.
 */
import type { CommandModule } from 'yargs';
import { ExitCode, UsageError } from '../errors.js';
import { EOL } from 'node:os';
import { writeCompactedView } from '../fork/view-stream.js';
import type { RequestApi } from '../session/request-body.js';
import { DEFAULT_MAX_TOKENS, REQUEST_APIS } from '../session/request-body.js';
import type { RequestBodyWriter } from '../session/request-body-stream.js';
import { requestBodyWriter } from '../session/request-body-stream.js';
import { STRICT_OPTION, takeNamesAfterDoubleDash } from './options.js';
import { logWarning } from '../pipeline/log.js';
import { resolveSessionName } from '../pipeline/inputs.js';
import { toCanonicalRecord } from '../formats/canonical.js';
import { FORMAT_NAMES } from '../formats/index.js';
import { textOut } from '../report/text-out.js';

interface ContextArgs {
  session: string;
  format: string;
  strict: boolean;
  redact: boolean;
  as?: RequestApi;
  model?: string;
  'max-tokens': number;
}

export const contextCommand: CommandModule<object, ContextArgs> = {
  command: 'context [session]',
  describe: 'Print what the provider sees after compaction, as canonical JSONL or as one API request body (--as)',
  // `as never`: yargs types the flags as parsed, before normalizeArgs (options.ts) gives the handler
  // its args type (inputs from `--` and positionals, defaults filled in); the handler's type is the truth.
  builder: (yargs) =>
    yargs
      .positional('session', { describe: 'one session file or session id, or - for stdin', type: 'string' })
      .middleware(takeNamesAfterDoubleDash('session'), true)
      .check((args) => {
        const session = args['session'];
        if (typeof session === 'string') return true;
        throw new UsageError(session === undefined ? 'name the session file to print' : 'context prints one session: name one file');
      })
      .option('format', { describe: 'session format', choices: FORMAT_NAMES as string[], default: 'auto' })
      .option('strict', STRICT_OPTION)
      .option('redact', { describe: 'mask secrets (API keys, passwords, private keys…) in what is printed', type: 'boolean', default: false })
      .option('as', { describe: 'print the request body this API takes instead', choices: REQUEST_APIS })
      .option('model', { describe: 'with --as: the model the body names (default: the session\'s)', type: 'string' })
      .option('max-tokens', { describe: 'with --as anthropic: max_tokens', type: 'number', default: DEFAULT_MAX_TOKENS }) as never,
  handler: async (args) => {
    const out = textOut();
    let body: RequestBodyWriter | null = null;
    // Written as it is read: the view is decided and checked before its first message comes.
    // A session id names the session wherever the agents keep it (pipeline/located.ts).
    const session = await resolveSessionName(args.session);
    await writeCompactedView(session, { format: args.format, strict: args.strict, redact: args.redact, warn: logWarning }, {
      start: ({ model, system }) => {
        if (args.as) body = requestBodyWriter(args.as, { model: args.model ?? model ?? 'unknown', maxTokens: args['max-tokens'] }, system, out.write);
      },
      message: (message) => {
        if (body) body.message(message);
        else out.write(`${JSON.stringify(toCanonicalRecord(message))}${EOL}`);
      },
      end: () => {
        if (!body) return;
        body.end();
        out.write(EOL);
      },
    });
    out.close();
    process.exitCode = ExitCode.ok;
  },
};
