/**
 * The sidecar's on-disk schema. Everything read back from disk goes through it, so a corrupt
 * or foreign file is rejected with a message instead of flowing into the core.
 */
import * as z from 'zod';
import type { CompactionState, StateRecord } from '../compaction/state.js';
import { SIDECAR_FORMAT_VERSION } from '../compaction/state.js';
import { REJECT_REASONS } from '../llm/reply.js';

const count = z.number().int().nonnegative();

/**
 * The summarize strategy's `details`: the summarizer's record of this compaction. Other keys
 * may follow; `rejected_replies` came later, so a sidecar without it still loads.
 */
export const summarizeDetailsSchema = z.looseObject({
  model: z.string(),
  requests: count,
  chunks: count,
  overflow_splits: count,
  rejected_replies: z.array(z.object({ reason: z.enum(REJECT_REASONS), reply_tokens: count.nullable() })).optional(),
});

/** The record as stored, both kinds in one shape, checked; sidecarSchema gives the state it holds. */
const sidecarRecordSchema = z.object({
  format_version: z.literal(SIDECAR_FORMAT_VERSION),
  session: z.string().min(1),
  strategy: z.string().min(1),
  fallback: z.boolean(),
  summary: z.string(),
  turn_prefix_summary: z.string().nullable(),
  first_kept_message_id: z.string().min(1),
  first_kept_index: count,
  tokens_before: count,
  tokens_after: count,
  summary_tokens: count,
  messages_summarized: count,
  messages_summarized_total: count,
  summarized_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  read_files: z.array(z.string()),
  modified_files: z.array(z.string()),
  compactions: count.min(1),
  usage: z.object({ input_tokens: count, output_tokens: count }).nullable(),
  // Both added after the first sidecars: absent means none, so older version-1 sidecars still load.
  dropped_outputs: z
    .array(
      z.object({
        tool_request_id: z.string(),
        message_id: z.string(),
        tool: z.string(),
        reason: z.enum(['superseded-read', 'duplicate-output']),
        kept_tool_request_id: z.string(),
        tokens: count,
      }),
    )
    .default([]),
  pruned_outputs: z
    .array(z.object({ tool_request_id: z.string(), message_id: z.string(), tool: z.string(), arguments: z.string(), tokens: count }))
    .nullable()
    .default(null),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  tool_version: z.string(),
}).superRefine((sidecar, context) => {
  // A prune keeps the history: a sidecar with pruned outputs and a summary is neither kind.
  if (sidecar.pruned_outputs !== null && (sidecar.summary !== '' || sidecar.turn_prefix_summary !== null)) {
    context.addIssue({ code: 'custom', message: 'a pruned sidecar (pruned_outputs set) holds no summary', path: [sidecar.summary !== '' ? 'summary' : 'turn_prefix_summary'] });
    return;
  }
  // Only the summarize strategy's details have a shape to check; a fallback is stored as truncate.
  if (sidecar.strategy !== 'summarize') return;
  const parsed = summarizeDetailsSchema.safeParse(sidecar.details);
  for (const issue of parsed.error?.issues ?? []) context.addIssue({ code: 'custom', message: issue.message, path: ['details', ...issue.path] });
});

/**
 * The state a valid sidecar holds, by its kind: a summary prunes nothing; a prune (checked
 * above) holds no summary.
 */
function stateOf(record: z.output<typeof sidecarRecordSchema>): CompactionState {
  if (record.pruned_outputs === null) return { ...record, pruned_outputs: null };
  return { ...record, summary: '', turn_prefix_summary: null, pruned_outputs: record.pruned_outputs };
}

export const sidecarSchema = sidecarRecordSchema.transform(stateOf);

// Keeps the schema and the core's type from drifting apart: this fails to compile if they do.
type Parsed = z.output<typeof sidecarRecordSchema>;
export const schemaMatchesState: (value: Parsed) => StateRecord = (value) => value;
export const stateMatchesSchema: (value: StateRecord) => Parsed = (value) => ({
  ...value,
  read_files: [...value.read_files],
  modified_files: [...value.modified_files],
  dropped_outputs: [...value.dropped_outputs],
  pruned_outputs: value.pruned_outputs ? [...value.pruned_outputs] : null,
  details: { ...value.details },
});

