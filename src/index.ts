/**
 * The library: everything a harness needs to estimate, cut, summarize and persist in-process.
 */
export * from './session/model.js';
export { buildProviderContext, summaryMessages, SUMMARY_PREAMBLE, SUMMARY_ACKNOWLEDGEMENT } from './session/provider-view.js';
export { hashMessages } from './session/hash.js';
export * from './tokens/estimate.js';
export * from './tokens/provider-calls.js';
export * from './compaction/policy.js';
export * from './compaction/cut-point.js';
export * from './compaction/file-ops.js';
export * from './compaction/serialize.js';
export * from './compaction/state.js';
export * from './compaction/compact.js';
export * from './compaction/facts.js';
export * from './compaction/relevance.js';
export * from './compaction/prune.js';
export type { Strategy, SummaryInput, SummaryOutput, PruneStrategy, PruneInput, CompactionStrategy } from './strategies/strategy.js';
export { createStrategy, STRATEGY_NAMES, type StrategyName, type StrategyOptions } from './strategies/index.js';
export { truncateStrategy, truncateSummary } from './strategies/truncate.js';
export { createExtractStrategy, extractSummary, DEFAULT_EXTRACT_SUMMARY_TOKENS } from './strategies/extract.js';
export { pruneStrategy } from './strategies/prune.js';
export type { FormatReader } from './formats/reader.js';
export { readSession, detectFormat, READERS, FORMAT_NAMES } from './formats/index.js';
export { sidecarPath, loadSidecar, saveSidecar } from './sidecar/store.js';
export { checkFreshness, type Freshness } from './sidecar/staleness.js';
export { groupTurns, turnUsage, totalUsage } from './audit/turns.js';
export { replaySession, type ReplayResult, type ReplayInput } from './audit/replay.js';
export { measureRetention, auditCompaction, normalizeForMatch, type FidelityReport, type KindCount } from './audit/fidelity.js';
export { auditSidecar, auditRecorded, auditReplay, retentionByStrategy, type AuditedCompaction } from './audit/compactions.js';
export { InputError, UsageError, ExitCode } from './errors.js';
