/**
 * The audits of a session's sidecar and of the compactions its agent recorded, taken as the
 * session's messages go by in order, so that a read need not hold them all (`audit` without
 * `--strategy`: src/pipeline/audit-session.ts). The same figures as compactions.ts
 * `auditSidecar` and `auditRecorded` over the whole session: a compaction's facts are those of
 * the messages before its cut, gathered one message at a time (compaction/facts.ts
 * FactCollector: the facts of a prefix are a prefix of them), and only the messages each view
 * shows after the cut are held, in full, to look the facts up in. Pure.
 */
import { summaryTokens } from '../compaction/compact.js';
import type { Fact } from '../compaction/facts.js';
import { FactCollector } from '../compaction/facts.js';
import type { CutView } from '../compaction/provider-view.js';
import { summaryMessages } from '../compaction/provider-view.js';
import type { CompactionState } from '../compaction/state.js';
import type { Message, RecordedCompaction, ToolResultBlock } from '../session/model.js';
import { applyViewRepair, repairStream } from '../session/view-repair.js';
import type { AuditedCompaction } from './audited.js';
import { recordedSummaryTest } from './compactions.js';
import { measureRetention } from './fidelity.js';

export interface StreamedAuditPlan {
  /** How many messages the session has. */
  readonly total: number;
  /** The sidecar's summary (not a prune) and the cut view it defines over the whole session. */
  readonly sidecar: {
    readonly state: CompactionState;
    readonly firstKeptIndex: number;
    readonly firstKeptMessageId: string | null;
    readonly view: CutView;
  } | null;
  /** The agent's own compactions, each with where the session stood then (compactions.ts recordedEnd). */
  readonly recorded: readonly { readonly compaction: RecordedCompaction; readonly end: number; readonly firstKeptMessageId: string | null }[];
  /** Whether the session's last tool call with this id runs a shell command (facts.ts errorSource). */
  readonly shellCall: (id: string) => boolean;
}

export interface AuditStream {
  /** The session's message at `index` (in order, from 0), in full. */
  push(message: Message, index: number): void;
  /** The audits, sidecar first, as auditSidecar and auditRecorded give them. */
  finish(): AuditedCompaction[];
}

export function auditStream(plan: StreamedAuditPlan): AuditStream {
  const errorSourceOf = (result: ToolResultBlock) => result.is_error || plan.shellCall(result.tool_request_id);
  const { sidecar, recorded } = plan;
  const sidecarFacts = new FactCollector(errorSourceOf);
  const sidecarAfter: Message[] = sidecar ? [...sidecar.view.summary] : [];
  const sidecarView = sidecar ? repairStream<Message>(sidecar.view.from, plan.total, sidecar.view.repair, (message) => sidecarAfter.push(message)) : null;
  // Recorded compactions: one span of facts each, every one a prefix of the messages that are not summaries.
  const isSummary = recordedSummaryTest(recorded.map(({ compaction }) => compaction));
  const recordedFacts = new FactCollector(errorSourceOf);
  const factsAtCut = recorded.map(() => -1);
  const recordedAfter = recorded.map(({ compaction }): Message[] => [...summaryMessages(compaction.summary, null)]);
  const lastCut = Math.max(0, ...recorded.map(({ compaction }) => compaction.firstKeptIndex));
  return {
    push(message, index) {
      if (sidecar) {
        if (index < sidecar.firstKeptIndex) sidecarFacts.add(message);
        if (index >= sidecar.view.from) sidecarView!.push(message, index);
      }
      recorded.forEach(({ compaction, end }, n) => {
        if (compaction.firstKeptIndex === index) factsAtCut[n] = recordedFacts.facts.length;
        if (index >= compaction.firstKeptIndex && index < end) recordedAfter[n]!.push(message);
      });
      if (index < lastCut && !isSummary(message)) recordedFacts.add(message);
    },
    finish() {
      const audits: AuditedCompaction[] = [];
      if (sidecar) audits.push(sidecarAudit(sidecar, plan.total, sidecarFacts.facts, sidecarAfter, true));
      recorded.forEach(({ compaction, end, firstKeptMessageId }, n) => {
        const found = factsAtCut[n]! < 0 ? recordedFacts.facts.length : factsAtCut[n]!;
        audits.push({
          source: 'recorded',
          strategy: 'recorded',
          number: n + 1,
          firstKeptIndex: compaction.firstKeptIndex,
          endIndex: end,
          tokensBefore: compaction.tokensBefore ?? null,
          tokensAfter: null,
          summaryTokens: summaryTokens(compaction.summary, null),
          firstKeptMessageId,
          report: measureRetention(recordedFacts.facts.slice(0, found), recordedAfter[n]!),
        });
      });
      return audits;
    },
  };
}

/**
 * The sidecar's audit from the facts of the messages before its cut and, `shown` false, the
 * messages from its cut on (repaired here into its view), or, `shown` true, its view already.
 */
export function sidecarAudit(
  sidecar: NonNullable<StreamedAuditPlan['sidecar']>,
  total: number,
  facts: readonly Fact[],
  after: readonly Message[],
  shown = false,
): AuditedCompaction {
  const { state } = sidecar;
  return {
    source: 'sidecar',
    strategy: state.strategy,
    number: 1,
    firstKeptIndex: sidecar.firstKeptIndex,
    endIndex: total,
    tokensBefore: state.tokens_before,
    tokensAfter: state.tokens_after,
    summaryTokens: state.summary_tokens,
    firstKeptMessageId: sidecar.firstKeptMessageId,
    report: measureRetention(facts, shown ? after : [...sidecar.view.summary, ...applyViewRepair(after, sidecar.view.from, sidecar.view.repair)]),
  };
}
