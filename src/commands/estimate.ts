/**
 * `compactor estimate`: token counts, the current context, and the cut compaction would take.
 */
import type { CommandModule } from 'yargs';
import type { CompactionPlan } from '../compaction/compact.js';
import { planCompaction } from '../compaction/compact.js';
import { fitPathMiddle, formatTokens, outputWidth, printable } from '../report/format.js';
import { renderTable } from '../report/table.js';
import type { AnyMessage, Diagnostic } from '../session/model.js';
import { sum } from '../tokens/estimate.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import { sessionTask } from '../workers/task.js';
import type { SessionInput } from '../read/index.js';
import { loadSession } from '../read/index.js';
import { heldSubject, loadPrevious, sidecarReading } from '../sidecar/previous.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { jobsFromArgs, runSettings, withInputs, withPolicy } from './options.js';
import { refusalReason } from '../compact/render.js';
import type { PolicyValues } from '../config/policy.js';
import { policyFor } from '../config/policy.js';
import { sessionWindow } from '../pricing/window.js';
import type { ReadTaskOptions } from '../pipeline/sessions.js';
import { earlyStart, runSessions } from '../pipeline/sessions.js';
import { runSessionCommand } from '../pipeline/session-command.js';

function cutJson(plan: CompactionPlan, messages: readonly AnyMessage[]) {
  const cut = plan.cut;
  if (cut.kind === 'none') return null;
  return {
    index: cut.index,
    first_kept_message_id: messages[cut.index]!.id,
    split_turn: cut.splitTurnStart !== null,
    forced: cut.forced,
    past_keep_budget: cut.pastKeepBudget,
    tokens_to_summarize: cut.tokensToSummarize,
    tokens_kept: cut.tokensKept,
  };
}

interface EstimateOptions extends ReadTaskOptions {
  /** The policy settings (they cross to worker threads); the window is resolved per session. */
  readonly policy: PolicyValues;
}

interface EstimateResult {
  readonly record: {
    readonly session: string;
    readonly messages: number;
    readonly estimated_tokens: number;
    readonly context_tokens: number;
    readonly context_window: number;
    readonly would_compact: boolean;
    readonly would_thrash: boolean;
    readonly cut: ReturnType<typeof cutJson>;
    readonly [field: string]: unknown;
  };
  readonly warnings: readonly Diagnostic[];
}

/** One session's estimate (runs in a worker thread for big batches). Needs no message text. */
export const estimateSessionTask = sessionTask('estimate', async (input: SessionInput, options: EstimateOptions): Promise<EstimateResult> => {
  const { path } = input;
  const count = await loadTextCounter(options.tokenizer);
  const state = await loadPrevious(path);
  const loaded = await loadSession(input, { format: options.format, sidecar: sidecarReading(state), count, messages: 'lean' });
  const { subject, warnings } = heldSubject(path, loaded, state, { strict: options.strict });
  const window = await sessionWindow(loaded.session, { flag: options.policy.context_limit ?? undefined });
  const policy = policyFor(options.policy, window.tokens);
  const plan = planCompaction(subject, policy);
  const wouldThrash = plan.kind === 'skip' && plan.status === 'would-thrash';
  const record = {
    session: path,
    format: loaded.session.format,
    messages: loaded.session.messages.length,
    estimated_tokens: sum(loaded.tokens),
    context_tokens: plan.contextTokens,
    context_window: window.tokens,
    context_window_source: window.source,
    would_compact: plan.kind === 'compact',
    would_thrash: wouldThrash,
    compacted_before: subject.previous !== null,
    cut: cutJson(plan, loaded.session.messages),
    ...(plan.kind === 'skip' ? { reason: wouldThrash ? refusalReason('would-thrash', plan.contextTokens, null, policy) : plan.reason } : {}),
  };
  return { record, warnings };
});

/** The folder every path starts with, with its trailing slash (`fixtures/real/`), or `` when they share none or there is one path. */
function sharedFolder(paths: readonly string[]): string {
  if (paths.length < 2) return '';
  let shared = paths[0]!.slice(0, paths[0]!.lastIndexOf('/') + 1);
  for (const path of paths) while (shared !== '' && !path.startsWith(shared)) shared = shared.slice(0, shared.slice(0, -1).lastIndexOf('/') + 1);
  return shared;
}

export const estimateCommand: CommandModule<object, CommonArgs & PolicyArgs> = {
  command: 'estimate [inputs..]',
  describe: 'Estimate tokens and the cut compaction would take',
  builder: (yargs) => withPolicy(withInputs(yargs, 'estimate')),
  handler: async (args) => {
    // Every setting is read and checked up front, before any session is read.
    const settings = await runSettings(args, 'estimate');
    const options: EstimateOptions = { format: args.format, policy: settings.policy, tokenizer: settings.tokenizer, strict: args.strict };
    const rows: string[][] = [];
    // Workers start up, and import the task, while the walk's files are sniffed.
    const early = earlyStart(() => jobsFromArgs(args), estimateSessionTask.name);
    await runSessionCommand<EstimateResult>(args, { progress: true, walked: early.walked }, (output) => ({
      run: (paths, emit) => runSessions(paths, estimateSessionTask, options, emit, jobsFromArgs(args), { early: early.pool() }),
      print: (path, { record }) => {
        output.record(record);
        const cut = record.cut;
        rows.push([
          path,
          formatTokens(record.messages),
          formatTokens(record.estimated_tokens),
          formatTokens(record.context_tokens),
          record.would_compact ? 'yes' : record.would_thrash ? 'would-thrash' : 'no',
          cut ? `${cut.index}${cut.split_turn ? ' (split)' : ''}` : '-',
        ]);
      },
      finish: () => {
        if (output.json || rows.length === 0) return;
        const columns = [
          { header: 'session', align: 'left' },
          { header: 'messages' },
          { header: 'tokens' },
          { header: 'context' },
          { header: 'compact' },
          { header: 'cut at' },
        ] as const;
        // The session column takes what the others leave of the width (each column has a space each side, and one between).
        const others = columns.slice(1).reduce((sum, column, at) => sum + Math.max(column.header.length, ...rows.map((row) => row[at + 1]!.length)) + 3, 0);
        const pathWidth = Math.max(20, outputWidth() - others - 2);
        // Paths too long for it lose the folder they all share (the walked one), named in the header.
        const paths = rows.map((row) => row[0]!);
        const shared = paths.some((path) => printable(path).length > pathWidth) ? sharedFolder(paths) : '';
        const header = shared === '' ? 'session' : `session (in ${fitPathMiddle(shared, pathWidth - 'session (in )'.length)})`;
        const table = renderTable(
          [{ ...columns[0], header }, ...columns.slice(1)],
          rows.map(([path, ...rest]) => [fitPathMiddle(path!.slice(shared.length), pathWidth), ...rest]),
        );
        process.stdout.write(`${table}\n`);
      },
    }));
  },
};
