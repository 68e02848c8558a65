/**
 * The library: everything a harness needs to estimate, cut, summarize and persist in-process.
 */
export * from './session/model.js';
export { buildProviderContext, summaryMessages, SUMMARY_PREAMBLE, SUMMARY_ACKNOWLEDGEMENT } from './compaction/provider-view.js';
export { viewViolations, assertViewRules, holdsNothing, ViewRuleError, type ViewRule, type ViewViolation } from './session/view-rules.js';
export { planViewRepair, applyViewRepair, MISSING_RESULT_OUTPUT, type ViewRepair } from './session/view-repair.js';
export { hashMessages } from './session/hash.js';
export { requestBody, anthropicRequest, openAiChatRequest, openAiResponsesRequest, REQUEST_APIS, DEFAULT_MAX_TOKENS, type RequestApi, type RequestOptions } from './session/request-body.js';
export {
  forkSession,
  planFork,
  sessionRequestBody,
  loadCompactedView,
  FORK_WRITERS,
  type ForkResult,
  type ForkNoGain,
  type ForkAttempt,
  type ForkSessionOptions,
  type RequestBodyOptions,
  type CompactedView,
  type ForkFile,
  type ForkSource,
  type ForkOptions,
  type ForkWriter,
} from './fork/index.js';
export * from './tokens/estimate.js';
export * from './tokens/provider-calls.js';
export * from './compaction/policy.js';
export { policyJson } from './config/policy.js';
export * from './compaction/cut-point.js';
export * from './compaction/cut-sites.js';
export * from './compaction/file-ops.js';
export * from './session/tool-files.js';
export * from './compaction/serialize.js';
export * from './compaction/state.js';
export * from './compaction/compact.js';
export * from './compaction/redact.js';
export * from './compaction/facts.js';
export * from './compaction/relevance.js';
export * from './compaction/prune.js';
export type { Strategy, TextStrategy, MetadataStrategy, SummaryInput, SummaryOutput, PruneStrategy, PruneInput, CompactionStrategy } from './compaction/strategy.js';
export { readsOnlyStructure } from './compaction/strategy.js';
export { createStrategy, STRATEGY_NAMES, type StrategyName, type StrategyOptions } from './strategies/index.js';
export { truncateStrategy, truncateSummary } from './strategies/truncate.js';
export { createExtractStrategy, extractSummary, DEFAULT_EXTRACT_SUMMARY_TOKENS } from './strategies/extract.js';
export { pruneStrategy } from './strategies/prune.js';
export { createSummarizeStrategy, type SummarizeOptions } from './strategies/summarize.js';
export { createChatClient, SummarizerError, type ChatClient, type ChatRequest, type ChatReply } from './llm/client.js';
export { resolveSummarizer, SUMMARIZER_DEFAULTS, type SummarizerSettings } from './config/summarizer.js';
export { isContextOverflow, OVERFLOW_PATTERNS } from './llm/overflow.js';
export type { FormatReader } from './formats/reader.js';
export { readSession, detectFormat, READERS, FORMAT_NAMES } from './formats/index.js';
export { opencodeDataDir, opencodeSessionStores } from './formats/opencode-location.js';
export { parseStoreAddress, storeAddress } from './formats/store-address.js';
export { sidecarPath, loadSidecar, saveSidecar } from './sidecar/store.js';
export { checkFreshness, type Freshness } from './sidecar/staleness.js';
export { groupTurns, turnUsage, totalUsage } from './growth/turns.js';
export { replaySession, type ReplayResult, type ReplayInput, type FullReplayInput, type LeanReplayInput } from './replay/simulate.js';
export { analyzeGrowth, type GrowthReport } from './growth/attribution.js';
export { callCost, type CostSplit } from './cost/billing.js';
export { cachedTokens, cacheLifetime, CACHE_TTL_MS, type CacheLifetime } from './replay/cache.js';
export { billedCalls, billedCost, buildLedgers, type BilledCall, type Ledger, type Ledgers, type LedgerDifference } from './ledgers/ledgers.js';
export { rollUp, RollupSum, sessionSpend, sessionProject, utcDay, weekOf, type Rollup, type RollupRow, type SessionSpend } from './ledgers/rollup.js';
export { SessionRanking, SORT_KEYS, rowOrder, type SessionRow, type SessionTable, type SessionTotals, type SortKey } from './ledgers/archive.js';
export { presetPolicy, PRESET_NAMES, type ReplayPolicy, type PresetName } from './replay/presets.js';
export { policyCosts, recordedCalls, recordedCost, type PolicyCosts, type RecordedCalls, type RecordedCost, type CallBilling } from './replay/savings.js';
export { replayRollup, ReplayRollupSum, rollupInput, TOP_SESSIONS, type ReplayRollup, type RollupInput } from './replay/rollup.js';
export { replayRollupJson } from './replay/rollup-report.js';
export { detectThrash, THRASH_TURNS } from './replay/thrash.js';
export { checkGates, type GateLimits, type Breach } from './gates/check.js';
export { lookupModel, type CatalogModel, type Rates } from './pricing/catalog.js';
export { sessionWindow, knownWindow, type ContextWindow, type WindowSource } from './pricing/window.js';
export { recordedCompactionEffects, type RecordedCompactionEffect } from './growth/recorded.js';
export { measureRetention, auditCompaction, normalizeForMatch, type FidelityReport, type KindCount } from './audit/fidelity.js';
export { auditSidecar, auditRecorded, auditReplay, retentionByStrategy, type AuditedCompaction } from './audit/compactions.js';
export { InputError, UsageError, ExitCode } from './errors.js';
export { compactFile, forkFile, type CompactFileOptions } from './compact/file.js';
export type { ForkPlace } from './compact/fork.js';
export type { CompactOutcome, ForkOutcome, CompactStatus, OutcomeOf, Measured, Tried } from './compact/job.js';
export type { CompactJob, PolicyChoice, OfflineStrategyName } from './compact/job.js';
export { compactRecord, compactLine, forkRecord, forkLine } from './compact/render.js';
