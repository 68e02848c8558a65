/**
 * The compactions `audit` measures, each with the view the provider gets once it is applied:
 * our sidecar, the compactions an agent recorded in its session file, and the ones `replay`
 * simulates for a strategy. Pure: loading, replaying and printing are left to the command.
 */
import { summaryTokens } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { userText } from '../compaction/facts.js';
import type { AnyMessage, Message, RecordedCompaction, Session } from '../session/model.js';
import { buildProviderContext, summaryMessages } from '../compaction/provider-view.js';
import type { ReplayResult } from '../replay/simulate.js';
import type { AuditedCompaction } from './audited.js';
import { auditCompaction, measureRetention } from './fidelity.js';
import { prefixFacts } from './simulated.js';

// The record lives in audited.ts, which simulated.ts reads too (no import circle); callers keep importing it here.
export type { AuditedCompaction, AuditSource } from './audited.js';

function audited(
  base: Omit<AuditedCompaction, 'report' | 'firstKeptMessageId'>,
  messages: readonly Message[],
  after: readonly Message[],
  skip?: (message: Message) => boolean,
): AuditedCompaction {
  return {
    ...base,
    firstKeptMessageId: messages[base.firstKeptIndex]?.id ?? null,
    report: auditCompaction(messages, base.firstKeptIndex, after, skip),
  };
}

/** Our sidecar (already checked to be fresh), against the session as it is now. */
export function auditSidecar(messages: readonly Message[], state: CompactionState, firstKeptIndex: number): AuditedCompaction {
  return audited(
    {
      source: 'sidecar',
      strategy: state.strategy,
      number: 1,
      firstKeptIndex,
      endIndex: messages.length,
      tokensBefore: state.tokens_before,
      tokensAfter: state.tokens_after,
      summaryTokens: state.summary_tokens,
    },
    messages,
    buildProviderContext(messages, state),
  );
}

/** Where the session stood when the agent compacted: the first message written after the compaction's line. */
export function recordedEnd(messages: readonly AnyMessage[], compaction: RecordedCompaction): number {
  const index = messages.findIndex((message) => message.line > compaction.line);
  return Math.max(compaction.firstKeptIndex, index < 0 ? messages.length : index);
}

/** The head of a summary, to recognize it when a reader kept it as a user message. */
const SUMMARY_HEAD_CHARS = 200;

/** Whether a message is one of these recorded summaries kept as a user message (not a fact of the conversation). */
export function recordedSummaryTest(compactions: readonly RecordedCompaction[]): (message: Message) => boolean {
  const heads = compactions.map((compaction) => compaction.summary.trim().slice(0, SUMMARY_HEAD_CHARS)).filter(Boolean);
  return (message) => {
    const text = userText(message);
    return text.length > 0 && heads.some((head) => text.includes(head));
  };
}

/**
 * The agent's own compactions. Each one's span is everything before its first kept message
 * (its summary folds the earlier ones in), and its view is its summary plus the messages kept
 * up to the point where it happened. Earlier summaries kept as user messages are not facts.
 */
export function auditRecorded(session: Session): AuditedCompaction[] {
  const isSummary = recordedSummaryTest(session.recordedCompactions);
  return session.recordedCompactions.map((compaction, index) => {
    const end = recordedEnd(session.messages, compaction);
    const after = [...summaryMessages(compaction.summary, null), ...session.messages.slice(compaction.firstKeptIndex, end)];
    return audited(
      {
        source: 'recorded',
        strategy: 'recorded',
        number: index + 1,
        firstKeptIndex: compaction.firstKeptIndex,
        endIndex: end,
        tokensBefore: compaction.tokensBefore ?? null,
        tokensAfter: null,
        summaryTokens: summaryTokens(compaction.summary, null),
      },
      session.messages,
      after,
      isSummary,
    );
  });
}

/**
 * Every compaction a replay made, each against the session as it stood at that call. `facts`: the
 * facts of every message gathered once (simulated.ts prefixFacts), of which each compaction's are
 * a prefix; without them (null) each compaction collects the facts before its cut again.
 */
export function auditReplay(messages: readonly Message[], result: ReplayResult, strategy: string, facts = prefixFacts(messages)): AuditedCompaction[] {
  const events = result.turns.flatMap((turn) => turn.compactions);
  return events.map((event, index) => {
    const end = event.beforeCallIndex;
    const seen = messages.slice(0, end);
    const base = {
      source: 'simulated',
      strategy,
      number: index + 1,
      firstKeptIndex: event.state.first_kept_index,
      endIndex: end,
      tokensBefore: event.tokensBefore,
      tokensAfter: event.tokensAfter,
      summaryTokens: event.summaryTokens,
    } as const;
    const after = buildProviderContext(seen, event.state);
    if (!facts) return audited(base, seen, after);
    const found = facts.upTo(Math.min(base.firstKeptIndex, seen.length));
    return { ...base, firstKeptMessageId: seen[base.firstKeptIndex]?.id ?? null, report: measureRetention(found, after) };
  });
}

export interface StrategyRetention {
  readonly strategy: string;
  readonly compactions: number;
  /** Facts kept over facts found, pooled over the strategy's compactions. */
  readonly retention: number;
  readonly lowest: number;
  readonly directivesFound: number;
  readonly directivesKept: number;
}

/** One line per simulated strategy: pooled retention, its lowest compaction, and the directives. */
export function retentionByStrategy(audits: readonly AuditedCompaction[], strategies: readonly string[]): StrategyRetention[] {
  return strategies.map((strategy) => {
    const mine = audits.filter((audit) => audit.source === 'simulated' && audit.strategy === strategy);
    let found = 0;
    let kept = 0;
    let directivesFound = 0;
    let directivesKept = 0;
    for (const { report } of mine) {
      for (const count of Object.values(report.counts)) {
        found += count.found;
        kept += count.kept;
      }
      directivesFound += report.counts.directive.found;
      directivesKept += report.counts.directive.kept;
    }
    return {
      strategy,
      compactions: mine.length,
      retention: found === 0 ? 1 : kept / found,
      lowest: mine.reduce((low, audit) => Math.min(low, audit.report.retention), 1),
      directivesFound,
      directivesKept,
    };
  });
}
