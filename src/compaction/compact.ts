/**
 * One compaction, from decision to new state. `planCompaction` is pure: it decides whether to
 * compact and what to summarize. `runCompaction` passes the span through the relevance filter,
 * asks a strategy for the text (or, for prune, the outputs to replace) and assembles the state
 * the sidecar stores. Reading files and writing sidecars are left to the callers.
 */
import type { PrefixHashes } from '../session/hash.js';
import { hashMessages } from '../session/hash.js';
import type { AnyMessage, Message, RecordedCompaction, TextSpan } from '../session/model.js';
import { windowStartAt } from '../session/model.js';
import { buildProviderContext, summaryMessages } from './provider-view.js';
import { applyViewRepairSplit } from '../session/view-repair.js';
import { assertViewRules } from '../session/view-rules.js';
import type { CompactionStrategy, MetadataStrategy, SummaryOutput } from './strategy.js';
import type { TextCounter } from '../tokens/estimate.js';
import { estimateContextTokens, estimateMessageTokens, heuristicCounter, sum } from '../tokens/estimate.js';
import { RangeSums } from '../tokens/range-sums.js';
import type { ViewRepair } from '../session/view-repair.js';
import type { CutPoint, NoCutReason } from './cut-point.js';
import { findCutPoint } from './cut-point.js';
import { collectFileOps, mergeFileOps, NO_FILE_OPS } from './file-ops.js';
import type { CompactionPolicy } from './policy.js';
import { compactionPays, shouldCompact, tokensOverTrigger } from './policy.js';
import { redactMessages, redactText } from './redact.js';
import { pruningSavings } from './prune.js';
import type { DroppedOutput } from './relevance.js';
import { filterRelevant, wholeSession } from './relevance.js';
import { SessionIndex } from './session-index.js';
import type { CompactionState, PruneState, StateRecord, SummaryState } from './state.js';
import { SIDECAR_FORMAT_VERSION } from './state.js';

export const TOOL_VERSION = 'session-compactor@0.1.0';

/**
 * A session ready for compaction: messages with their estimates, and any previous state.
 * Planning reads only structure, so its messages may be slim (`AnyMessage`, a lean read's);
 * running a compaction needs the text where it reads it, and the prefix hashes of slim messages
 * taken by their read (RunnableSubject, StructureSubject).
 */
export interface CompactionSubject<M extends AnyMessage = Message> {
  readonly sessionName: string;
  readonly messages: readonly M[];
  readonly tokens: readonly number[];
  /** A previous compaction already checked against these messages (see sidecar/staleness). */
  readonly previous: { readonly state: CompactionState; readonly firstKeptIndex: number } | null;
  /** Compactions the agent recorded in the session itself; ours start after the last one. */
  readonly recorded?: readonly RecordedCompaction[];
  /**
   * Where the session ends (exclusive; default: all of `messages`). Replay compacts the session
   * as it stood before an earlier call; the messages from `end` on have not happened yet.
   */
  readonly end?: number;
  /**
   * The prefix hashes the read took while reading (read/), where the hash a sidecar stores
   * comes from when some messages are slim; absent, full messages are hashed.
   */
  readonly prefixHashes?: PrefixHashes;
}

/** Full messages: all their text there to read (and to hash, unless the read's hashes come with them). */
export type FullSubject = CompactionSubject<Message> & { readonly text?: undefined };

/**
 * Compact's second read (read/index.ts readAgainInPart): slim messages, but in full in `text`
 * where the compaction reads text (compaction/text-reads.ts), with the digest of every prefix it
 * may cut at.
 */
export type PartialSubject = CompactionSubject<AnyMessage> & { readonly prefixHashes: PrefixHashes; readonly text: TextSpan };

/** What runCompaction takes: a subject whose text is there where the compaction reads it. A lean read's is not. */
export type RunnableSubject = FullSubject | PartialSubject;

/** A lean read's subject, with the prefix hashes its read took: enough for a strategy that reads only structure. */
export type StructureSubject = CompactionSubject<AnyMessage> & { readonly prefixHashes: PrefixHashes };

/**
 * One compaction's subject and strategy, paired so a strategy that reads text only ever meets
 * text: any strategy on a runnable subject, only one that reads structure on a lean one (replay's
 * lean read).
 */
export type CompactionRun =
  | { readonly reads: 'text'; readonly subject: RunnableSubject; readonly strategy: CompactionStrategy }
  | { readonly reads: 'structure'; readonly subject: StructureSubject; readonly strategy: MetadataStrategy };

/** The number of messages the subject's session has so far. */
export function subjectEnd(subject: CompactionSubject<AnyMessage>): number {
  return subject.end ?? subject.messages.length;
}

export type CompactionPlan =
  | {
      readonly kind: 'skip';
      /**
       * `skipped`: under the trigger or nothing to cut; `up-to-date`: the existing sidecar still
       * covers it; `would-thrash`: over the trigger, and no valid cut could bring it under.
       */
      readonly status: 'skipped' | 'up-to-date' | 'would-thrash';
      readonly reason: string;
      readonly contextTokens: number;
      readonly cut: CutPoint;
    }
  | {
      readonly kind: 'compact';
      readonly contextTokens: number;
      readonly cut: Extract<CutPoint, { kind: 'cut' }>;
      /** First message of the new span: 0 or the previous first kept message. */
      readonly start: number;
    };

/** Tokens of the synthetic summary + acknowledgement pair for this summary text. */
export function summaryTokens(summary: string, turnPrefixSummary: string | null, count: TextCounter = heuristicCounter): number {
  return summaryMessages(summary, turnPrefixSummary).reduce((total, message) => total + estimateMessageTokens(message, count), 0);
}

/**
 * Context after replacing messages [from, firstKept) by a summary: the full context (calibrated
 * by reported usage, so the system prompt and tool schemas stay counted) minus the estimates of
 * the replaced messages plus the summary's own tokens. `from` is where the context window
 * starts: 0, or the first kept message of the agent's own last compaction.
 */
export function contextAfterCompaction(
  fullContext: number,
  tokens: RangeSums,
  firstKept: number,
  summaryTokenCount: number,
  from = 0,
): number {
  return Math.max(0, fullContext - tokens.sum(from, firstKept) + summaryTokenCount);
}

/** First message of the current context window: after the agent's own last compaction, or 0. */
export function recordedWindowStart(subject: CompactionSubject<AnyMessage>): number {
  return windowStartAt(subject.recorded ?? [], subjectEnd(subject));
}

/**
 * Tokens a compaction takes off every later call: the estimates of what it replaced minus what
 * stands in for them (the summary pair, or the placeholders of pruned outputs).
 */
export function tokensSaved(
  messages: readonly AnyMessage[],
  tokens: readonly number[],
  firstKeptIndex: number,
  state: CompactionState,
  count: TextCounter = heuristicCounter,
  from = 0,
): number {
  if (state.pruned_outputs) return pruningSavings(messages, tokens, state.pruned_outputs, count);
  return sum(tokens, from, firstKeptIndex) - state.summary_tokens;
}

/** Does this state hold pruned outputs rather than a summary? */
function isPruneState(state: CompactionState): state is PruneState {
  return state.pruned_outputs !== null;
}

/**
 * Summaries build on summaries and prunes on prunes. A previous compaction of the other kind
 * cannot be merged, so the subject starts over without it; `discarded` says why.
 */
export function previousFor<Subject extends CompactionSubject<AnyMessage>>(
  subject: Subject,
  strategy: CompactionStrategy,
): { readonly subject: Subject; readonly discarded: string | null } {
  const previous = subject.previous;
  if (!previous || isPruneState(previous.state) === (strategy.kind === 'prune')) return { subject, discarded: null };
  return {
    subject: { ...subject, previous: null },
    discarded: `the sidecar was written by ${previous.state.strategy}, which ${strategy.name} cannot build on; compacting from scratch`,
  };
}

/**
 * The provider view `state` defines over the subject's context window (from the agent's own last
 * compaction to the end): what `context` prints for a sidecar holding `state`.
 */
export function subjectView<M extends AnyMessage>(subject: CompactionSubject<M>, state: CompactionState | null): (M | Message)[] {
  return buildProviderContext(subjectWindow(subject).messages, state);
}

/** The subject's context window: its messages from the agent's own last compaction to the end, and where they start. */
export function subjectWindow<M extends AnyMessage>(subject: CompactionSubject<M>): { readonly start: number; readonly messages: M[] } {
  const start = recordedWindowStart(subject);
  return { start, messages: subject.messages.slice(start, subjectEnd(subject)) };
}

/** Our previous compaction, unless the agent has since compacted past its cut (then it no longer applies). */
export function livePrevious(subject: CompactionSubject<AnyMessage>): CompactionSubject['previous'] {
  const previous = subject.previous;
  return previous && previous.firstKeptIndex >= recordedWindowStart(subject) ? previous : null;
}

/** The context the next provider call would carry, with recorded and previous compactions applied. */
export function currentContextTokens(subject: CompactionSubject<AnyMessage>, count: TextCounter = heuristicCounter): number {
  const full = estimateContextTokens(subject.messages, subject.tokens, subjectEnd(subject), subject.recorded);
  const previous = livePrevious(subject);
  if (!previous) return full;
  const saved = tokensSaved(subject.messages, subject.tokens, previous.firstKeptIndex, previous.state, count, recordedWindowStart(subject));
  return Math.max(0, full - saved);
}

const NO_CUT_REASONS: Record<NoCutReason, string> = {
  fits: 'the recent messages already fit the keep budget',
  'at-previous-cut': 'nothing new to summarize since the last compaction',
  'no-valid-cut': 'no valid cut point',
  'cannot-get-under': 'no valid cut brings the context under the trigger',
};

/**
 * Whether to compact and where to cut. Over the trigger, the cut must summarize at least what
 * the context exceeds it by (the summary is assumed no larger than the previous one; the real one
 * is measured by runGuardedCompaction), so a compaction that would leave it over is not planned.
 */
export function planCompaction(subject: CompactionSubject<AnyMessage>, policy: CompactionPolicy): CompactionPlan {
  const contextTokens = currentContextTokens(subject);
  const previous = livePrevious(subject);
  const start = Math.max(previous?.firstKeptIndex ?? 0, recordedWindowStart(subject));
  const quiet = previous ? 'up-to-date' : 'skipped';
  const minSummarizedTokens = tokensOverTrigger(contextTokens, policy);
  const range = { start, end: subjectEnd(subject), afterCompaction: previous !== null };
  const cut = findCutPoint(subject.messages, subject.tokens, { ...policy, minSummarizedTokens }, range);
  if (!shouldCompact(contextTokens, policy)) {
    // One reason for each status: a session compacted before is up to date (its sidecar keeps it
    // under the trigger), one never compacted is skipped as under it.
    const reason = previous ? 'its sidecar still covers it' : 'under the compaction threshold';
    return { kind: 'skip', status: quiet, reason, contextTokens, cut };
  }
  if (cut.kind === 'none') {
    const status = cut.reason === 'cannot-get-under' ? 'would-thrash' : quiet;
    return { kind: 'skip', status, reason: NO_CUT_REASONS[cut.reason], contextTokens, cut };
  }
  return { kind: 'compact', contextTokens, cut, start };
}

/** Why a compaction that ran was not kept: it did not shrink the context, or left it over the trigger. */
export type Refusal = 'no-gain' | 'would-thrash';

export type GuardedCompaction =
  | {
      readonly kind: 'compacted';
      readonly state: CompactionState;
      /** The plan that was kept: its cut may lie past the planned one (the summary was larger). */
      readonly plan: Extract<CompactionPlan, { kind: 'compact' }>;
      readonly tokensAfter: number;
    }
  | {
      readonly kind: Refusal;
      /** The compaction that was refused (what a sidecar would have held); its usage counts every attempt. */
      readonly state: CompactionState;
      readonly tokensBefore: number;
      readonly tokensAfter: number;
    };

/**
 * How often a cut is moved on when the real summary left the context over the trigger: each move
 * runs the strategy again, which for the summarizer is another paid call.
 */
export const MAX_CUT_ATTEMPTS = 3;

export interface GuardOptions extends RunOptions {
  /**
   * The context after a compaction that produced `state`, measured as its `before` was: the
   * sidecar's tokens_after by default; replay passes its simulated prompt.
   */
  readonly measure?: (state: CompactionState) => number;
  /** A moved cut may pass the previous one (overflow recovery; see CutOptions). */
  readonly forcePastPreviousCut?: boolean;
}

/**
 * runCompaction under the two guards a compaction must pass to be kept. It must get under the
 * trigger when it started over it: if the real summary leaves it over, the cut moves on by the
 * excess (at most MAX_CUT_ATTEMPTS runs), else `would-thrash`. And it must pay (policy.ts
 * compactionPays), else `no-gain`. The policy's allowThrash / allowNoGain switch each off.
 */
export function runGuardedCompaction(
  subject: RunnableSubject,
  plan: Extract<CompactionPlan, { kind: 'compact' }>,
  strategy: CompactionStrategy,
  policy: CompactionPolicy,
  options: GuardOptions = {},
): Promise<GuardedCompaction> {
  return guardedCompaction({ reads: 'text', subject, strategy }, plan, policy, options);
}

/** runGuardedCompaction of a run that may read only structure (replay's lean read). */
export async function guardedCompaction(
  run: CompactionRun,
  plan: Extract<CompactionPlan, { kind: 'compact' }>,
  policy: CompactionPolicy,
  options: GuardOptions = {},
): Promise<GuardedCompaction> {
  const { subject } = run;
  const measure = options.measure ?? ((state: CompactionState) => state.tokens_after);
  const before = plan.contextTokens;
  const excess = tokensOverTrigger(before, policy);
  /** The largest context under the trigger. */
  const ceiling = before - excess;
  const range = { start: plan.start, end: subjectEnd(subject), afterCompaction: livePrevious(subject) !== null };
  const cutOptions = { ...policy, forcePastPreviousCut: options.forcePastPreviousCut ?? false };
  let current = plan;
  let spentBefore: CompactionState['usage'] = null;
  for (let attempt = 1; ; attempt++) {
    const state = await compactRun(run, current, { ...options, spentBefore });
    spentBefore = state.usage;
    const after = measure(state);
    if (excess > 0 && after > ceiling) {
      // The summary came out larger than the plan allowed for: summarize that much more.
      const minSummarizedTokens = current.cut.tokensToSummarize + (after - ceiling);
      const cut =
        attempt < MAX_CUT_ATTEMPTS
          ? findCutPoint(subject.messages, subject.tokens, { ...cutOptions, minSummarizedTokens }, range, options.index?.cutSites)
          : null;
      if (cut?.kind !== 'cut') return { kind: 'would-thrash', state, tokensBefore: before, tokensAfter: after };
      current = { ...current, cut };
      continue;
    }
    if (!policy.allowNoGain && !compactionPays(before, after)) return { kind: 'no-gain', state, tokensBefore: before, tokensAfter: after };
    return { kind: 'compacted', state, plan: current, tokensAfter: after };
  }
}

/**
 * The fields of a state that depend on how the span was compacted; `dropped` is the outputs the
 * relevance filter dropped from this span, added to the previous state's (see DroppedChain).
 */
type PartKey = 'fallback' | 'summary' | 'turn_prefix_summary' | 'tokens_after' | 'summary_tokens' | 'usage' | 'pruned_outputs' | 'details';
type SummaryPart = Pick<SummaryState, PartKey> & { readonly dropped: DroppedChain };
type PrunePart = Pick<PruneState, PartKey> & { readonly dropped: DroppedChain };

/**
 * A state lists every output dropped so far: the previous state's list, then this span's. Replay
 * keeps all its simulated states, and copying the whole list into each made its memory grow with
 * compactions × drops (0.7 GB of peak RSS for a 1 GB session's 96,000 compactions), so a state
 * keeps its own drops and the chain before it, and builds the list when first read (JSON.stringify
 * reads it for a sidecar like any other field). The chain links lists, not states: a link to the
 * previous state kept every state of a replay alive through the latest one.
 */
interface DroppedChain {
  readonly own: readonly DroppedOutput[];
  readonly before: DroppedChain | null;
  built: readonly DroppedOutput[] | null;
}

/**
 * Where a state made here keeps its chain: a property of its own under a symbol, not enumerable,
 * so JSON, a spread copy and a worker's structured clone never see it (a copy reads its list).
 */
const DROPPED_CHAIN: unique symbol = Symbol('dropped outputs chain');

/** The chain `state`'s list is read from: its own, or (a state read from a sidecar, or a copy) its list as stored. */
function chainOf(state: CompactionState): DroppedChain {
  const chain: unknown = Reflect.get(state, DROPPED_CHAIN);
  return isDroppedChain(chain) ? chain : { own: [], before: null, built: state.dropped_outputs };
}

function isDroppedChain(value: unknown): value is DroppedChain {
  return typeof value === 'object' && value !== null && 'own' in value && 'before' in value;
}

/**
 * The chain of a state that adds `own` to `previous`'s drops. A span that dropped nothing shares
 * the previous chain (the same list), so the chain is as long as the compactions that dropped
 * something, not as all of them.
 */
function droppedChain(own: readonly DroppedOutput[], previous: CompactionState | null): DroppedChain {
  const before = previous ? chainOf(previous) : null;
  if (own.length === 0 && before) return before;
  return { own, before, built: null };
}

function droppedList(chain: DroppedChain): readonly DroppedOutput[] {
  if (chain.built) return chain.built;
  // Back to a list already known; a loop, as a replay's chain is as long as its compactions are many.
  const parts = [chain.own];
  for (let link = chain.before; link; link = link.before) {
    if (link.built) {
      parts.push(link.built);
      break;
    }
    parts.push(link.own);
  }
  return (chain.built = parts.reverse().flat());
}

/** A state's two fields computed when first read. */
type LazyKey = 'summarized_hash' | 'dropped_outputs';

/** What a state's two fields computed when first read are made from. */
interface LazyFields {
  /** The summarized prefix's digest. */
  readonly hash: () => string;
  readonly dropped: DroppedChain;
}

/**
 * A state with its summarized_hash and dropped_outputs computed when first read. Made out here,
 * so the getters hold only `lazy`: made inside runCompaction they held its scope (the subject,
 * whose previous state held the one before, and the options with their closures), and a
 * replay's latest state kept every earlier one alive.
 */
// Each kind in, the same kind out: every field is copied as it is, so what told the kinds apart
// (pruned_outputs, summary) is unchanged. The last form is the one the kinds share.
function withLazyFields(fields: Omit<SummaryState, LazyKey>, lazy: LazyFields): SummaryState;
function withLazyFields(fields: Omit<PruneState, LazyKey>, lazy: LazyFields): PruneState;
function withLazyFields(fields: Omit<StateRecord, LazyKey>, lazy: LazyFields): StateRecord;
function withLazyFields(fields: Omit<StateRecord, LazyKey>, lazy: LazyFields): StateRecord {
  let summarizedHash: string | undefined;
  // Every key written out, in the sidecar's order: with the others spread in before the getters,
  // the written sidecar had the two getters last (test/cli/golden.test.ts).
  const made: StateRecord = {
    format_version: fields.format_version,
    session: fields.session,
    strategy: fields.strategy,
    fallback: fields.fallback,
    summary: fields.summary,
    turn_prefix_summary: fields.turn_prefix_summary,
    first_kept_message_id: fields.first_kept_message_id,
    first_kept_index: fields.first_kept_index,
    tokens_before: fields.tokens_before,
    tokens_after: fields.tokens_after,
    summary_tokens: fields.summary_tokens,
    messages_summarized: fields.messages_summarized,
    messages_summarized_total: fields.messages_summarized_total,
    get summarized_hash() {
      return (summarizedHash ??= lazy.hash());
    },
    read_files: fields.read_files,
    modified_files: fields.modified_files,
    compactions: fields.compactions,
    usage: fields.usage,
    get dropped_outputs() {
      return droppedList(lazy.dropped);
    },
    pruned_outputs: fields.pruned_outputs,
    details: fields.details,
    created_at: fields.created_at,
    tool_version: fields.tool_version,
  };
  Object.defineProperty(made, DROPPED_CHAIN, { value: lazy.dropped });
  return made;
}

/** The digest of messages [0, cut): from the prefix hashes the read took, or (full messages) hashed here when it took none there. */
function prefixDigest(run: CompactionRun, cut: number): () => string {
  if (run.reads === 'structure') return takenDigest(run.subject.prefixHashes, cut);
  const { subject } = run;
  if (subject.text !== undefined) return takenDigest(subject.prefixHashes, cut);
  const { messages, prefixHashes } = subject;
  return () => prefixHashes?.at(cut) ?? hashMessages(messages, 0, cut);
}

/** The digest a read of slim messages took: one at every cut the compaction may make (read/index.ts). */
function takenDigest(hashes: PrefixHashes, cut: number): () => string {
  return () => {
    const digest = hashes.at(cut);
    if (digest === undefined) throw new Error(`internal: the read took no prefix hash at message ${cut}`);
    return digest;
  };
}

/**
 * What a compaction reads, cut at `cut` and redacted under `redact`: the session's structure
 * (ids, tool calls, file paths), and the span's full messages when the run reads text.
 */
type CompactionSource =
  | { readonly reads: 'text'; readonly structure: readonly AnyMessage[]; readonly text: TextSpan; readonly strategy: CompactionStrategy }
  | { readonly reads: 'structure'; readonly structure: readonly AnyMessage[]; readonly strategy: MetadataStrategy };

function compactionSource(run: CompactionRun, cut: number, redact: boolean): CompactionSource {
  const upToCut = <M extends AnyMessage>(messages: readonly M[]): readonly M[] => (redact ? redactMessages(messages.slice(0, cut)) : messages);
  if (run.reads === 'structure') return { reads: 'structure', structure: upToCut(run.subject.messages), strategy: run.strategy };
  const { subject, strategy } = run;
  if (subject.text === undefined) {
    // Full messages: the structure and the text are one list (redacted once).
    const messages = upToCut(subject.messages);
    return { reads: 'text', structure: messages, text: { from: 0, messages }, strategy };
  }
  const { from, messages } = subject.text;
  const text = redact ? { from, messages: redactMessages(messages.slice(0, Math.max(0, cut - from))) } : subject.text;
  return { reads: 'text', structure: upToCut(subject.messages), text, strategy };
}

/**
 * The span [start, cut) as the summarizer gets it: the session's tool-pairing breakage repaired
 * as in the provider view (session/view-repair.ts), split into the history and a split turn's
 * prefix, each checked against the provider's rules (a violation is our bug: ViewRuleError).
 */
function summarizerInput<M extends AnyMessage>(
  span: readonly M[],
  start: number,
  cut: Extract<CutPoint, { kind: 'cut' }>,
  repair: ViewRepair,
  end: number,
): { history: readonly (M | Message)[]; turnPrefix: readonly (M | Message)[] } {
  const [history, turnPrefix] = applyViewRepairSplit(span, start, repair, cut.splitTurnStart ?? cut.index, end);
  assertViewRules(history, "the summarizer's input");
  assertViewRules(turnPrefix, "the summarizer's input (the split turn's prefix)");
  return { history, turnPrefix };
}

export interface RunOptions {
  readonly count?: TextCounter;
  readonly now?: Date;
  readonly signal?: AbortSignal;
  /**
   * Mask secrets (compaction/redact.ts) in everything the strategy reads and in what the sidecar
   * stores: the span's messages, the file lists and the summary.
   */
  readonly redact?: boolean;
  /** The relevance filter on the span (relevance.ts); on unless false (`--no-relevance`). */
  readonly relevance?: boolean;
  /**
   * Lookups over subject.messages and subject.tokens, built once by a caller that compacts one
   * session many times (replay), so each compaction costs its window rather than the session.
   */
  readonly index?: SessionIndex<AnyMessage>;
  /**
   * Summarizer tokens this compaction already spent on attempts that were not kept (a cut moved
   * on: runGuardedCompaction); added to the state's `usage`, which counts all its calls.
   */
  readonly spentBefore?: CompactionState['usage'];
}

/** Compacts the planned span with `strategy` and returns the state to store. */
export function runCompaction(
  subject: RunnableSubject,
  plan: Extract<CompactionPlan, { kind: 'compact' }>,
  strategy: CompactionStrategy,
  options: RunOptions = {},
): Promise<CompactionState> {
  return compactRun({ reads: 'text', subject, strategy }, plan, options);
}

async function compactRun(run: CompactionRun, plan: Extract<CompactionPlan, { kind: 'compact' }>, options: RunOptions): Promise<CompactionState> {
  const { subject, strategy } = run;
  const { messages } = subject;
  const end = subjectEnd(subject);
  const index: SessionIndex<AnyMessage> = options.index ?? new SessionIndex<AnyMessage>(messages, new RangeSums(subject.tokens));
  const previous = livePrevious(subject);
  const { cut, start } = plan;
  if (previous && previousFor(subject, strategy).discarded) throw new Error('runCompaction: previous state of another kind (use previousFor)');
  const count = options.count ?? heuristicCounter;
  // Redaction masks everything the strategy reads and the sidecar stores (span, file lists, summary).
  const redact = options.redact ?? false;
  const source = compactionSource(run, cut.index, redact);
  const fileOps = mergeFileOps(
    previous ? { read: previous.state.read_files, modified: previous.state.modified_files } : NO_FILE_OPS,
    collectFileOps(source.structure.slice(start, cut.index)),
  );
  const fullContext = index.contextTokens(end, subject.recorded);
  const windowStart = recordedWindowStart(subject);
  const summarizedNow = cut.index - start;
  const hash = prefixDigest(run, cut.index);
  /** The state in the sidecar's documented field order, from what differs between summaries and prunes. */
  function state(part: SummaryPart): SummaryState;
  function state(part: PrunePart): PruneState;
  function state(part: SummaryPart | PrunePart): StateRecord {
    return withLazyFields(
      {
        format_version: SIDECAR_FORMAT_VERSION,
        session: subject.sessionName,
        strategy: strategy.name,
        fallback: part.fallback,
        summary: part.summary,
        turn_prefix_summary: part.turn_prefix_summary,
        first_kept_message_id: messages[cut.index]!.id,
        first_kept_index: cut.index,
        tokens_before: plan.contextTokens,
        tokens_after: part.tokens_after,
        summary_tokens: part.summary_tokens,
        messages_summarized: summarizedNow,
        messages_summarized_total: (previous?.state.messages_summarized_total ?? 0) + summarizedNow,
        read_files: fileOps.read,
        modified_files: fileOps.modified,
        compactions: (previous?.state.compactions ?? 0) + 1,
        usage: part.usage,
        pruned_outputs: part.pruned_outputs,
        details: part.details,
        created_at: (options.now ?? new Date()).toISOString(),
        tool_version: TOOL_VERSION,
      },
      // Computed when first read: hashing every summarized message is the costliest step, and a
      // replay's simulated states are never stored (with slim messages it is the prefix hash the
      // read took: RunnableSubject). Replay's states are read in order when they cross from a
      // worker thread, so its index hashes each message once for all of them.
      { hash, dropped: part.dropped },
    );
  }

  const rest = { previous: previous?.state ?? null, fileOps, ...(options.signal ? { signal: options.signal } : {}) };
  const repair = index.viewRepair(windowStart);
  let summarized: SummaryOutput;
  let dropped: readonly DroppedOutput[] = [];
  if (source.reads === 'structure') {
    // Slim messages have no outputs for the relevance filter to drop.
    summarized = await source.strategy.summarize({ ...summarizerInput(source.structure.slice(start, cut.index), start, cut, repair, end), ...rest });
  } else {
    const { structure, text, strategy: reader } = source;
    if (reader.kind === 'prune') {
      const pruned = [...(previous?.state.pruned_outputs ?? []), ...reader.prune({ messages: structure, text, from: start, to: cut.index, count })];
      return state({
        fallback: false,
        summary: '',
        turn_prefix_summary: null,
        tokens_after: Math.max(0, fullContext - pruningSavings(messages, subject.tokens, pruned, count, end)),
        summary_tokens: 0,
        dropped: droppedChain([], null),
        pruned_outputs: pruned,
        usage: options.spentBefore ?? null,
        details: {},
      });
    }
    // The filter reads the text span, indexed from its first message: the redacted span is a copy
    // of its own, cut at the cut; otherwise the filter reads the session so far, indexed.
    const at = (index: number) => index - text.from;
    const scope = redact ? { ...wholeSession(structure), end: at(cut.index) } : { end: at(end), requestOf: (id: string) => index.requestBefore(id, end) };
    const filtered =
      options.relevance === false
        ? { messages: text.messages.slice(at(start), at(cut.index)), dropped: [] }
        : filterRelevant(text.messages, at(start), at(cut.index), count, scope);
    dropped = filtered.dropped;
    summarized = await reader.summarize({ ...summarizerInput(filtered.messages, start, cut, repair, end), ...rest });
  }
  // A summarizer may echo something the patterns missed in its input: mask its output too.
  const output = redact
    ? { ...summarized, summary: redactText(summarized.summary), turnPrefixSummary: summarized.turnPrefixSummary && redactText(summarized.turnPrefixSummary) }
    : summarized;
  const newSummaryTokens = summaryTokens(output.summary, output.turnPrefixSummary, count);
  return state({
    fallback: output.fallback ?? false,
    summary: output.summary,
    turn_prefix_summary: output.turnPrefixSummary,
    tokens_after: contextAfterCompaction(fullContext, index.tokens, cut.index, newSummaryTokens, windowStart),
    summary_tokens: newSummaryTokens,
    dropped: droppedChain(dropped, previous?.state ?? null),
    pruned_outputs: null,
    usage: addUsage(options.spentBefore ?? null, output.usage ? { input_tokens: output.usage.input, output_tokens: output.usage.output } : null),
    details: output.details,
  });
}

function addUsage(a: CompactionState['usage'], b: CompactionState['usage']): CompactionState['usage'] {
  if (!a || !b) return a ?? b;
  return { input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens };
}
