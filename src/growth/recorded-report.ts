/**
 * How the agent's own compactions are reported: the `--json` shape (inspect's
 * `recorded_compactions`, replay's per turn) and the one-line human form.
 */
import type { RecordedCompactionEffect } from './recorded.js';
import { formatTokens } from '../report/format.js';

export function recordedCompactionJson(effect: RecordedCompactionEffect) {
  return {
    line: effect.line,
    first_kept_message_id: effect.firstKeptMessageId,
    tokens_before: effect.tokensBefore,
    tokens_after: effect.tokensAfter,
    reported_drop: effect.reportedDrop,
  };
}

/**
 * `agent compaction at line 360: 175,004 -> 25,739 tokens`. The first kept message is left to
 * `--json`: a Claude uuid would push the line past 80 columns.
 */
export function describeRecordedCompaction(effect: RecordedCompactionEffect): string {
  const after = effect.tokensAfter === null ? '? (no call since)' : formatTokens(effect.tokensAfter);
  return `agent compaction at line ${effect.line}: ${formatTokens(effect.tokensBefore)} -> ${after} tokens`;
}
