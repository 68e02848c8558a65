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
export type { Strategy, SummaryInput, SummaryOutput } from './strategies/strategy.js';
export { createStrategy, STRATEGY_NAMES, type StrategyName } from './strategies/index.js';
export { truncateStrategy, truncateSummary } from './strategies/truncate.js';
export type { FormatReader } from './formats/reader.js';
export { readSession, detectFormat, READERS, FORMAT_NAMES } from './formats/index.js';
export { sidecarPath, loadSidecar, saveSidecar } from './sidecar/store.js';
export { checkFreshness, type Freshness } from './sidecar/staleness.js';
export { groupTurns, turnUsage, totalUsage } from './audit/turns.js';
export { replaySession, type ReplayResult, type ReplayInput } from './audit/replay.js';
export { recordedCompactionEffects, type RecordedCompactionEffect } from './audit/recorded.js';
export { InputError, UsageError, ExitCode } from './errors.js';
