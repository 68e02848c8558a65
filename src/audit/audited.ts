/**
 * One audited compaction: where it came from (our sidecar, the agent's own record, a replay),
 * what it kept and what the fidelity audit found. Types only; compactions.ts and simulated.ts
 * make them.
 */
import type { FidelityReport } from './fidelity.js';

export type AuditSource = 'sidecar' | 'recorded' | 'simulated';

export interface AuditedCompaction {
  readonly source: AuditSource;
  /** The strategy that wrote it; `recorded` for an agent's own compaction. */
  readonly strategy: string;
  /** 1-based among the compactions of the same source and strategy. */
  readonly number: number;
  readonly firstKeptIndex: number;
  readonly firstKeptMessageId: string | null;
  /** End of the messages the provider saw with it (exclusive): where the session stood then. */
  readonly endIndex: number;
  readonly tokensBefore: number | null;
  readonly tokensAfter: number | null;
  readonly summaryTokens: number;
  readonly report: FidelityReport;
}
