/**
 * The library's front door to this room: `compactFile` and `forkFile`, one call each, from a
 * session's path to its typed outcome (job.ts), with the command line's defaults. The job is
 * built from plain options; the run is the one `compact` and `fork` make (session.ts, fork.ts):
 * the sidecar's lock, the two reads, the plan, the strategy, the view check, the atomic write.
 */
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { PolicyValues } from '../config/policy.js';
import { DEFAULT_POLICY_VALUES } from '../config/policy.js';
import type { OnError } from '../config/settings.js';
import { createTempSweeper } from '../sidecar/store.js';
import type { StrategyName, StrategyOptions } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import type { TokenizerName } from '../tokens/tokenizers.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import { forkCompacted } from './fork.js';
import type { ForkPlace } from './fork.js';
import type { CompactJob, CompactOutcome, CompactTools, ForkOutcome, OfflineStrategyName } from './job.js';
import { compactSession } from './session.js';

export interface CompactFileOptions {
  /**
   * An offline strategy by name (default `truncate`), or a strategy built beforehand: a
   * summarizer's is `createSummarizeStrategy({ client: createChatClient(…), … })`.
   */
  readonly strategy?: OfflineStrategyName | CompactionStrategy;
  /** The offline strategies' options (--max-summary-tokens). */
  readonly strategyOptions?: StrategyOptions;
  /** Policy settings by the config file's names (`context_limit`, `keep_recent`, `trigger_percent`…); the rest at their defaults. */
  readonly policy?: Partial<PolicyValues>;
  /** A format name; default `auto`. */
  readonly format?: string;
  readonly strict?: boolean;
  readonly tokenizer?: TokenizerName;
  /** Plan and report, write nothing (the outcome is `would-compact`). */
  readonly dryRun?: boolean;
  /** Mask secrets in what is summarized and stored; default: on for a strategy built beforehand (it may send the transcript away), off for the offline ones. */
  readonly redact?: boolean;
  /** The relevance filter on the summarized span (`compact --no-relevance`); default on. */
  readonly relevance?: boolean;
  /** What a failed summarizer leaves: `fail` (default), `skip`, `truncate`. */
  readonly onError?: OnError;
  /** Abort to abandon the session in flight. */
  readonly signal?: AbortSignal;
}

function isStrategyName(name: string): name is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(name);
}

async function jobAndTools(options: CompactFileOptions): Promise<{ job: CompactJob; tools: CompactTools }> {
  const given = options.strategy ?? 'truncate';
  const strategyOptions = options.strategyOptions ?? {};
  const strategy = typeof given === 'string' ? createStrategy(given, strategyOptions) : given;
  const tokenizer = options.tokenizer ?? 'heuristic';
  const job: CompactJob = {
    format: options.format ?? 'auto',
    tokenizer,
    strict: options.strict ?? false,
    policy: { kind: 'settings', values: { ...DEFAULT_POLICY_VALUES, ...options.policy } },
    dryRun: options.dryRun ?? false,
    redact: options.redact ?? typeof given !== 'string',
    relevance: options.relevance ?? true,
    // The name a worker would build the strategy by; this call runs it here, as built.
    strategy: isStrategyName(strategy.name) ? strategy.name : 'summarize',
    strategyOptions,
    onError: options.onError ?? 'fail',
  };
  const count = tokenizer === 'heuristic' ? undefined : await loadTextCounter(tokenizer);
  return { job, tools: { strategy, count, signal: options.signal ?? new AbortController().signal } };
}

/**
 * Compacts one session file as `compact` does: writes its sidecar (unless a dry run) and returns
 * the outcome. Never throws for the session's own trouble: that is the `failed` outcome.
 */
export async function compactFile(path: string, options: CompactFileOptions = {}): Promise<CompactOutcome> {
  const { job, tools } = await jobAndTools(options);
  return compactSession(path, job, tools, createTempSweeper());
}

/**
 * Compacts one session file as `fork` does, then writes the fork its agent resumes (beside the
 * original, or in `outDir`): the outcome says what was written, or why nothing was.
 */
export async function forkFile(path: string, options: CompactFileOptions & ForkPlace = {}): Promise<ForkOutcome> {
  const { job, tools } = await jobAndTools({ ...options, dryRun: false });
  const place = { ...(options.outDir ? { outDir: options.outDir } : {}), ...(options.now ? { now: options.now } : {}), ...(options.allowNoGain ? { allowNoGain: true } : {}) };
  return forkCompacted(path, job, tools, createTempSweeper(), place);
}
