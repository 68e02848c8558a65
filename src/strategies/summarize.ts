/**
 * `summarize`: an LLM writes the structured checkpoint. The history span is
 * folded into the previous summary (or summarized afresh), a split turn's prefix gets a summary
 * of its own, and the `<read-files>` / `<modified-files>` lists from the core's tracking are
 * appended here, never taken from the model. Talking to the endpoint is the ChatClient's job.
 */
import { formatFileOps } from '../compaction/file-ops.js';
import { serializeForSummary } from '../compaction/serialize.js';
import { previousSummaryText } from '../compaction/state.js';
import type { ChatClient } from '../llm/client.js';
import type { FoldResult } from '../llm/fold.js';
import { foldTranscript } from '../llm/fold.js';
import { cleanSummary } from '../llm/reply.js';
import type { Message } from '../session/model.js';
import type { Strategy, SummaryInput, SummaryOutput } from '../compaction/strategy.js';

export interface SummarizeOptions {
  readonly client: ChatClient;
  readonly maxSummaryTokens: number;
  readonly summarizerContext: number;
  readonly instructions: string | null;
}

/** The history summary when a split turn starts the session: there is nothing before it. */
export const NO_EARLIER_HISTORY = 'No earlier history: the session starts with the turn summarized below.';

/** One transcript entry per message, so chunks break between messages where they can. */
function transcriptEntries(messages: readonly Message[]): string[] {
  return messages.map((message) => serializeForSummary([message])).filter((entry) => entry !== '');
}

/** The summary text to merge into, without the file lists (those are recomputed, not merged by the model). */
export function previousForUpdate(input: SummaryInput): string | null {
  return input.previous ? cleanSummary(previousSummaryText(input.previous)) : null;
}

export function withFileOps(summary: string, input: SummaryInput): string {
  const files = formatFileOps(input.fileOps);
  return files ? `${summary}\n\n${files}` : summary;
}

export function createSummarizeStrategy(options: SummarizeOptions): Strategy {
  const foldOptions = {
    client: options.client,
    maxSummaryTokens: options.maxSummaryTokens,
    summarizerContext: options.summarizerContext,
    instructions: options.instructions,
  };
  return {
    name: 'summarize',
    async summarize(input): Promise<SummaryOutput> {
      const signal = input.signal ? { signal: input.signal } : {};
      const history = await foldTranscript('history', transcriptEntries(input.history), previousForUpdate(input), { ...foldOptions, ...signal });
      const prefix: FoldResult | null =
        input.turnPrefix.length > 0 ? await foldTranscript('turn-prefix', transcriptEntries(input.turnPrefix), null, { ...foldOptions, ...signal }) : null;
      const runs = prefix ? [history, prefix] : [history];
      return {
        summary: withFileOps(history.summary ?? NO_EARLIER_HISTORY, input),
        turnPrefixSummary: prefix?.summary ?? null,
        usage: {
          input: runs.reduce((total, run) => total + run.usage.input, 0),
          output: runs.reduce((total, run) => total + run.usage.output, 0),
        },
        details: {
          model: options.client.model,
          requests: runs.reduce((total, run) => total + run.requests, 0),
          chunks: runs.reduce((total, run) => total + run.chunks, 0),
          overflow_splits: runs.reduce((total, run) => total + run.splits, 0),
          // Why any reply was not used (over the budget, cut off, not a summary): requests counts its second try.
          rejected_replies: runs.flatMap((run) => run.rejected.map((reply) => ({ reason: reply.reason, reply_tokens: reply.replyTokens }))),
        },
      };
    },
  };
}
