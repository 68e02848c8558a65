/**
 * `truncate`: no LLM. Says how many messages of each kind were compacted and which
 * files were read or modified. Counts carry over from the previous compaction.
 */
import { formatFileOps } from '../compaction/file-ops.js';
import type { AnyMessage } from '../session/model.js';
import { isToolResultMessage } from '../session/model.js';
import type { MetadataStrategy, SummaryInput, SummaryOutput } from '../compaction/strategy.js';

type RoleCounts = Record<'user' | 'assistant' | 'system' | 'tool_results', number>;

const LABELS: Record<keyof RoleCounts, string> = {
  user: 'user',
  assistant: 'assistant',
  system: 'system',
  tool_results: 'tool results',
};

function countRoles(messages: readonly AnyMessage[], start: RoleCounts): RoleCounts {
  const counts = { ...start };
  for (const message of messages) {
    if (isToolResultMessage(message)) counts.tool_results++;
    else counts[message.role]++;
  }
  return counts;
}

function previousCounts(details: Readonly<Record<string, unknown>> | undefined): RoleCounts {
  const empty: RoleCounts = { user: 0, assistant: 0, system: 0, tool_results: 0 };
  const stored = details?.['role_counts'];
  if (!stored || typeof stored !== 'object') return empty;
  for (const key of Object.keys(empty) as (keyof RoleCounts)[]) {
    const value = (stored as Record<string, unknown>)[key];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) empty[key] = value;
  }
  return empty;
}

function describe(label: string, counts: RoleCounts): string {
  const total = counts.user + counts.assistant + counts.system + counts.tool_results;
  const parts = (Object.keys(LABELS) as (keyof RoleCounts)[])
    .filter((key) => counts[key] > 0)
    .map((key) => `${counts[key]} ${LABELS[key]}`);
  return `[${label} ${total} messages: ${parts.join(', ')}]`;
}

export function truncateSummary(input: SummaryInput<AnyMessage>): SummaryOutput {
  const counts = countRoles(input.history, previousCounts(input.previous?.details));
  // A previous turn-prefix summary is history now: its messages are already in the counts.
  const files = formatFileOps(input.fileOps);
  const summary = files ? `${describe('Compacted', counts)}\n\n${files}` : describe('Compacted', counts);
  const turnPrefixSummary =
    input.turnPrefix.length > 0 ? describe('Compacted turn prefix of', countRoles(input.turnPrefix, previousCounts(undefined))) : null;
  const allCounts = countRoles(input.turnPrefix, counts);
  return { summary, turnPrefixSummary, usage: null, details: { role_counts: allCounts } };
}

export const truncateStrategy: MetadataStrategy = {
  name: 'truncate',
  metadataOnly: true,
  summarize: async (input) => truncateSummary(input),
};
