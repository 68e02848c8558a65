/**
 * What-if replay: the same session under a replay policy, call by call. Pure apart from what
 * the strategy does.
 *
 * Every provider call is rebuilt (prompt = everything before it, as reported or estimated). The
 * policy is checked before each turn's first call, or before every call (see CheckPoint), and
 * whenever a call would exceed the window (overflow: emergency compaction, keep = limit / 5,
 * forced). A compaction replaces messages [0, first kept) by the strategy's real
 * summary, so later calls carry `prompt − replaced estimates + summary (+ carried user
 * messages)`, or, for the prune strategy, `prompt − what its placeholders saved` (compact.ts
 * `tokensSaved`). A pruning policy (opencode) first shrinks old tool outputs to a placeholder.
 * Each simulated call also records how much of its prompt survived a rewrite, for the cache
 * model (src/replay/cache.ts); dollars are left to src/replay/savings.ts.
 *
 * Compactions the agent recorded itself are already in the reported inputs ("before"); ours
 * apply on top of them, summarizing only from the agent's window start, and one the agent
 * compacted past stops counting. Each turn lists the recorded ones that happened in it.
 *
 * While it runs, the simulation holds the provider calls, its simulated calls, refusals and
 * turns' numbers as columns (columns.ts), made into objects by `ReplayColumns.report()`.
 */
import type { CompactionRun, Refusal } from '../compaction/compact.js';
import { guardedCompaction, tokensSaved } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { toolRequestsById } from '../compaction/facts.js';
import { findPrunable, placeholderTokens } from '../compaction/prune.js';
import { findCutPoint } from '../compaction/cut-point.js';
import { SessionIndex } from '../compaction/session-index.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { emergencyPolicy, shouldCompact, tokensOverTrigger } from '../compaction/policy.js';
import type { AnyMessage, Message, RecordedCompaction, ToolRequestBlock } from '../session/model.js';
import { isTurnStart, windowStartAt } from '../session/model.js';
import type { PrefixHashes } from '../session/hash.js';
import { prefixHashesOf } from '../session/hash.js';
import type { CompactionStrategy, MetadataStrategy } from '../compaction/strategy.js';
import type { TextCounter } from '../tokens/estimate.js';
import { RangeSums } from '../tokens/range-sums.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import { providerCalls } from '../tokens/provider-calls.js';
import { stablePrefixTokens } from './cache.js';
import type { ReplayPolicy } from './presets.js';
import type { PrunedSizes } from './pruned-sizes.js';
import { customPolicy } from './presets.js';
import type { RecordedCompactionEffect } from '../growth/recorded.js';
import { effectsInTurn, recordedCompactionEffects } from '../growth/recorded.js';
import type { Turn } from '../growth/turns.js';
import { groupTurns } from '../growth/turns.js';
import type { TurnSums } from './columns.js';
import type { CompactionStore } from './columns.js';
import { CallColumns, CompactionColumns, CompactionList, RefusalColumns, TurnColumns } from './columns.js';
import type { CompactionTrigger, ReplayCompaction, ReplayEvent, ReplayRefusal, SimulatedCall, SummarizerCall } from './records.js';

// The records live in records.ts, which columns.ts reads too (no import circle); callers keep importing them here.
export type { CompactionTrigger, ReplayCompaction, ReplayEvent, ReplayRefusal, SimulatedCall, SummarizerCall } from './records.js';

/** What the simulation reads of a provider call. */
type CallAt = Pick<ProviderCall, 'index' | 'input' | 'output'>;

/** What the simulation reads of a turn. */
type TurnAt = Pick<Turn, 'turn' | 'startIndex'>;

/** The simulation's carried tokens once a compaction applies. */
interface Applied {
  readonly prunedActive: number;
  readonly removed: number;
  readonly summaryTokens: number;
  readonly carried: number;
}

export interface ReplayPrune {
  readonly beforeCallIndex: number;
  readonly turn: number;
  readonly messages: number;
  readonly tokensSaved: number;
}

export interface ReplayTurn extends TurnSums {
  readonly turn: number;
  readonly compactions: readonly ReplayCompaction[];
  /** Compactions the policy's guards refused in this turn (none for the presets). */
  readonly refusals: readonly ReplayRefusal[];
  readonly prunes: readonly ReplayPrune[];
  /** Compactions the agent itself recorded during this turn, with their real effect. */
  readonly recorded: readonly RecordedCompactionEffect[];
}

export interface ReplayTotals {
  readonly requests: number;
  readonly inputTokensBefore: number;
  readonly inputTokensAfter: number;
  readonly outputTokens: number;
  /** 1 − after / before; 0 when nothing was sent. */
  readonly reduction: number;
  readonly compactions: number;
  /** Compactions refused as `no-gain` and as `would-thrash`. */
  readonly noGain: number;
  readonly wouldThrash: number;
  readonly prunes: number;
  readonly tokensPruned: number;
  readonly summarizerInputTokens: number;
  readonly summarizerOutputTokens: number;
  /** Largest turn baseline before and after. */
  readonly maxBaselineBefore: number;
  readonly maxBaselineAfter: number;
}

export interface ReplayResult {
  readonly policy: ReplayPolicy;
  /** Prompt tokens before the first message (system prompt, tools): what a compaction leaves cached. */
  readonly stablePrefix: number;
  readonly calls: readonly SimulatedCall[];
  readonly turns: readonly ReplayTurn[];
  readonly totals: ReplayTotals;
}

/** A compaction without its state. */
function withoutState({ state: _state, ...event }: ReplayCompaction): ReplayEvent {
  return event;
}

/** A turn whose compactions are kept as `Event`s (with their states, or as reports show them). */
type TurnWith<Event extends ReplayEvent> = Omit<ReplayTurn, 'compactions'> & { readonly compactions: readonly Event[] };

/** A result as reports read it: each turn's compactions without their states. */
export interface ReplayReport extends Omit<ReplayResult, 'turns'> {
  readonly turns: readonly TurnWith<ReplayEvent>[];
}

/**
 * The result without the simulated states, for a report that prints none of them: a state's
 * `summarized_hash` is hashed when first read, and a worker thread posting the state back would
 * read it (on slim messages, which cannot be hashed, it would throw), and the states are held
 * no longer than the simulation needs them.
 */
export function withoutStates(result: ReplayResult): ReplayReport {
  return {
    ...result,
    turns: result.turns.map((turn) => ({ ...turn, compactions: turn.compactions.map(withoutState) })),
  };
}

interface ReplayOf {
  readonly sessionName: string;
  readonly tokens: readonly number[];
  /** A preset or custom replay policy; a bare CompactionPolicy is replayed as `custom`. */
  readonly policy: ReplayPolicy | CompactionPolicy;
  readonly count?: TextCounter;
  /** The relevance filter on each simulated compaction's span, as compact runs it; on unless false (`--no-relevance`). */
  readonly relevance?: boolean;
  /** The agent's own compactions (Session.recordedCompactions). */
  readonly recorded?: readonly RecordedCompaction[];
  /** Taken while reading, for a pruning policy with this placeholder: its messages may then be slim. */
  readonly prunedSizes?: PrunedSizes;
}

/** A replay of full messages, with any strategy. */
export interface FullReplayInput extends ReplayOf {
  readonly read?: 'full';
  readonly messages: readonly Message[];
  readonly strategy: CompactionStrategy;
}

/** A replay of a lean read's slim messages: only a strategy that reads structure can run on them. */
export interface LeanReplayInput extends ReplayOf {
  readonly read: 'lean';
  readonly messages: readonly AnyMessage[];
  readonly strategy: MetadataStrategy;
}

export type ReplayInput = FullReplayInput | LeanReplayInput;

/**
 * A set of message indices, a byte a message (made at the first index added): what pruning
 * marks. A Map of them, by index, with what each saved (never read back), was a 3.7 MB table on
 * the 909 MB canonical session under opencode, which prunes most tool outputs in the end.
 */
class IndexMarks {
  private marks: Uint8Array | null = null;
  constructor(private readonly size: number) {}

  add(index: number): void {
    this.marks ??= new Uint8Array(this.size);
    this.marks[index] = 1;
  }

  has(index: number): boolean {
    return this.marks !== null && this.marks[index] === 1;
  }
}

/**
 * The session as the policy would have sent it: mutable state, advanced call by call.
 *
 * Each simulated compaction must cost its window (from our last cut to the call), not the whole
 * session, or replay grows with the square of the session: no prefix is copied or summed from
 * the first message. Token sums over ranges come from RangeSums, and everything else that would
 * scan the session (tool pairing, tool calls by id, the last reported prompt) from one
 * SessionIndex; test/replay/replay-linear.test.ts counts the reads.
 */
class Simulation {
  /** Message estimates as they are now (pruned outputs shrunk), with their running sums. */
  readonly current: RangeSums;
  /**
   * The estimates as read, for what a compaction removes from every later prompt: `current`
   * itself under a policy that never prunes (only pruning changes `current`; a copy of its
   * counts and tree is 16 bytes a message).
   */
  readonly original: RangeSums;
  /** Tokens of the user's own messages (turn starts; 0 elsewhere), for the ones Codex carries. */
  private userTokens: RangeSums | null = null;
  /** Tokens pruning saved, by message index; null until something is pruned (all of them 0). */
  private prunedSums: RangeSums | null = null;
  /** Every tool call by id, for pruning (its only reader): built when a policy first prunes. */
  private requests: ReadonlyMap<string, ToolRequestBlock> | null = null;
  readonly index: SessionIndex<AnyMessage>;
  /**
   * What the states' summarized_hash is taken from, only when read: replay stores no state, and
   * a lean read (a structure-only strategy, no pruning) has no text to hash.
   */
  readonly hashes: PrefixHashes;
  /** The messages when read in full (checked once: a check per call would make replay quadratic). */
  private readonly full: readonly Message[] | null;
  firstKept = 0;
  /** Original estimates of the messages our compaction replaced, which every prompt no longer carries. */
  removed = 0;
  summaryTokens = 0;
  previous: { state: CompactionState; firstKeptIndex: number } | null = null;
  /** The messages pruned so far. */
  readonly pruned: IndexMarks;
  /** Tokens saved by pruning messages still in the kept part. */
  prunedActive = 0;
  /** Set by a rewrite, consumed by the next call. */
  pendingUnchanged: number | null = null;

  constructor(
    readonly input: ReplayInput & { readonly policy: ReplayPolicy },
    readonly stablePrefix: number,
  ) {
    this.current = new RangeSums(input.tokens);
    this.original = input.policy.prune ? new RangeSums(input.tokens) : this.current;
    this.index = new SessionIndex(input.messages, this.current);
    this.pruned = new IndexMarks(input.messages.length);
    const full = input.read === 'lean' ? null : input.messages;
    this.full = full;
    let hashes: PrefixHashes | null = null;
    this.hashes = full
      ? { at: (end) => (hashes ??= prefixHashesOf(full)).at(end) }
      : {
          at: () => {
            throw new Error('internal: a replay of slim messages has no text to hash (its states are never stored)');
          },
        };
  }

  /** Tokens pruning saved over [from, to). */
  private prunedSum(from: number, to: number): number {
    return this.prunedSums ? this.prunedSums.sum(from, to) : 0;
  }

  /**
   * Each message's tokens once `placeholder` replaces its tool outputs: taken while reading
   * (commands/replay.ts reads lean then), else sized from the full messages.
   */
  private prunedTokens(placeholder: string): (index: number) => number {
    const taken = this.input.prunedSizes;
    if (taken?.placeholder === placeholder) return (index) => taken.tokens[index]!;
    const full = this.full;
    if (!full) throw new Error('internal: a pruning policy was replayed on slim messages without their pruned sizes');
    return (index) => placeholderTokens(full[index]!, placeholder, this.input.count);
  }

  /**
   * Tokens of the user's own messages before `end`, newest first, up to `budget` (Codex keeps
   * them). Counts are never negative, so the newest-first walk that stops at the budget adds up to
   * min(budget, all of them).
   */
  private carriedUserTokens(end: number, budget: number): number {
    const { messages, tokens } = this.input;
    this.userTokens ??= new RangeSums(messages.map((message, i) => (isTurnStart(message) ? (tokens[i] ?? 0) : 0)));
    return Math.min(this.userTokens.sum(0, end), budget);
  }

  prompt(call: CallAt): number {
    return this.promptWith(call, this);
  }

  /** The agent compacted past our cut: its own summary replaced ours, as the reported inputs show. */
  followAgent(call: CallAt): void {
    const windowStart = windowStartAt(this.input.recorded ?? [], call.index);
    if (this.firstKept === 0 || this.firstKept >= windowStart) return;
    this.prunedActive -= this.prunedSum(0, windowStart);
    this.firstKept = 0;
    this.removed = 0;
    this.summaryTokens = 0;
    this.previous = null;
  }

  private rewrote(unchanged: number): void {
    this.pendingUnchanged = Math.min(this.pendingUnchanged ?? Infinity, unchanged);
  }

  prune(turn: TurnAt, call: CallAt): ReplayPrune | null {
    const rules = this.input.policy.prune;
    if (!rules) return null;
    const range = { start: this.firstKept, end: turn.startIndex };
    const requests = (this.requests ??= toolRequestsById(this.input.messages));
    const marks = findPrunable(this.input.messages, this.current.values, range, this.pruned, rules, requests, this.prunedTokens(rules.placeholder));
    if (marks.length === 0) return null;
    let saved = 0;
    let earliest = Infinity;
    for (const mark of marks) {
      this.current.add(mark.index, -mark.saved);
      this.prunedSums ??= new RangeSums(new Array<number>(this.input.tokens.length).fill(0));
      this.prunedSums.add(mark.index, mark.saved);
      this.pruned.add(mark.index);
      saved += mark.saved;
      earliest = Math.min(earliest, mark.index);
    }
    this.prunedActive += saved;
    this.rewrote(this.prompt(call) - this.current.sum(earliest, call.index));
    return { beforeCallIndex: call.index, turn: turn.turn, messages: marks.length, tokensSaved: saved };
  }

  /**
   * A compaction before `call`, kept only if it passes the policy's guards (compact.ts
   * runGuardedCompaction): the same cut and the same checks as `compact`, measured on the
   * simulated prompt. A refused one changes nothing and is returned as a refusal.
   */
  async compact(call: CallAt, position: number, turn: number, rules: CompactionPolicy, trigger: CompactionTrigger): Promise<ReplayCompaction | ReplayRefusal | null> {
    const { input } = this;
    const { messages } = input;
    const recorded = this.input.recorded ?? [];
    const windowStart = windowStartAt(recorded, call.index);
    const start = Math.max(this.firstKept, windowStart);
    const end = call.index;
    const tokensBefore = this.prompt(call);
    const forcePastPreviousCut = trigger === 'overflow';
    const minSummarizedTokens = tokensOverTrigger(tokensBefore, rules);
    const cut = findCutPoint(messages, this.current, { ...rules, forcePastPreviousCut, minSummarizedTokens }, { start, end, afterCompaction: this.previous !== null }, this.index.cutSites);
    if (cut.kind === 'none') {
      return cut.reason === 'cannot-get-under' ? { refused: 'would-thrash', trigger, callPosition: position, turn, tokensBefore, tokensAfter: null, summarizer: null } : null;
    }
    // The session as it stood before the call: bounded by `end`, not copied.
    const subject = { sessionName: input.sessionName, tokens: this.current.values, previous: this.previous, recorded, end, prefixHashes: this.hashes };
    const run: CompactionRun =
      input.read === 'lean'
        ? { reads: 'structure', subject: { ...subject, messages: input.messages }, strategy: input.strategy }
        : { reads: 'text', subject: { ...subject, messages: input.messages }, strategy: input.strategy };
    const outcome = await guardedCompaction(run, { kind: 'compact', cut, start, contextTokens: tokensBefore }, rules, {
      ...(this.input.count ? { count: this.input.count } : {}),
      ...(this.input.relevance === false ? { relevance: false } : {}),
      now: new Date(0),
      index: this.index,
      forcePastPreviousCut,
      measure: (state) => this.promptWith(call, this.applied(state, start, windowStart)),
    });
    if (outcome.kind !== 'compacted') {
      const spent = this.summarizerCall(outcome.state, cut.tokensToSummarize, tokensBefore);
      return { refused: outcome.kind, trigger, callPosition: position, turn, tokensBefore, tokensAfter: outcome.tokensAfter, summarizer: spent };
    }
    const { state } = outcome;
    const kept = outcome.plan.cut;
    const applied = this.applied(state, start, windowStart);
    const summarizer = this.summarizerCall(state, kept.tokensToSummarize, tokensBefore);
    this.prunedActive = applied.prunedActive;
    this.firstKept = kept.index;
    this.removed = applied.removed;
    this.summaryTokens = applied.summaryTokens;
    this.previous = { state, firstKeptIndex: kept.index };
    this.rewrote(this.stablePrefix);
    return {
      trigger,
      beforeCallIndex: call.index,
      callPosition: position,
      turn,
      firstKeptMessageId: state.first_kept_message_id,
      tokensBefore,
      tokensAfter: this.prompt(call),
      summaryTokens: this.summaryTokens,
      carriedUserTokens: applied.carried,
      summarizer,
      state,
    };
  }

  /** What the simulation would carry once `state` (a compaction of [start, its first kept message)) applies. */
  private applied(state: CompactionState, start: number, windowStart: number): Applied {
    const { messages, tokens, policy } = this.input;
    const cut = state.first_kept_index;
    const carried = policy.carryUserTokens > 0 ? this.carriedUserTokens(cut, policy.carryUserTokens) : 0;
    return {
      prunedActive: this.prunedActive - this.prunedSum(start, cut),
      // A summary replaces the span since the window start; prune placeholders replace only outputs.
      removed: state.pruned_outputs ? tokensSaved(messages, tokens, cut, state, this.input.count) : this.original.sum(windowStart, cut),
      summaryTokens: state.summary_tokens + carried,
      carried,
    };
  }

  private promptWith(call: CallAt, applied: Omit<Applied, 'carried'>): number {
    return Math.max(0, call.input - applied.removed + applied.summaryTokens - applied.prunedActive);
  }

  /**
   * The summarizer's own call, as the policy's agent makes it: the whole current prompt (served
   * by the cache), or the span and previous summary as text, or (custom) what the strategy
   * reports. An offline strategy reports nothing, so an agent's call is estimated from the span.
   */
  private summarizerCall(state: CompactionState, spanTokens: number, prompt: number): SummarizerCall | null {
    const mode = this.input.policy.summarizerInput;
    const reported = state.usage;
    const output = reported?.output_tokens ?? state.summary_tokens;
    if (mode === 'conversation') return { input: prompt, output, cached: true, estimated: !reported };
    if (reported) return { input: reported.input_tokens, output, cached: false, estimated: false };
    if (mode === 'strategy') return null;
    return { input: spanTokens + (this.previous ? this.summaryTokens : 0), output, cached: false, estimated: true };
  }

  /** Records the call as sent and hands back the rewrite marker it consumed. */
  takeUnchanged(): number | null {
    const unchanged = this.pendingUnchanged;
    this.pendingUnchanged = null;
    return unchanged;
  }
}

/** Replays the session, keeping each simulated compaction's state (what a sidecar written then would hold). */
export async function replaySession(request: ReplayInput): Promise<ReplayResult> {
  return (await simulate(request, new CompactionList())).report();
}

/**
 * Replays the session for a report: each compaction is kept without its state, as soon as it
 * happens (withoutStates gives the same report from replaySession). A long session is compacted
 * at nearly every call (95,706 times on a 1 GB Claude Code session), and holding every state to
 * the end took 70 MB.
 */
export async function replayReport(request: ReplayInput): Promise<ReplayReport> {
  return (await replayColumns(request)).report();
}

/**
 * Only the compactions a replay makes, with their states, in order (`audit --strategy`): its
 * calls, refusals and turns are never made into objects.
 */
export async function replayCompactions(request: ReplayInput): Promise<ReplayCompaction[]> {
  const store = new CompactionList();
  await simulate(request, store);
  return store.objects(0, store.length);
}

/**
 * replayReport with its calls and refusals left as columns until `report()`: a caller that
 * drops the session's messages first (commands/replay.ts) never holds them beside the objects.
 */
export function replayColumns(request: ReplayInput): Promise<ReplayColumns<ReplayEvent>> {
  return simulate(request, new CompactionColumns());
}

/** What every turn without such events is given: one empty list. */
const NONE: readonly never[] = Object.freeze([]);

/** A replay whose turns keep their compactions as its store gives them. */
type Simulated<Event extends ReplayEvent> = Omit<ReplayResult, 'turns'> & { readonly turns: readonly TurnWith<Event>[] };

/**
 * The replayed turns as the simulation keeps them: their numbers in columns, turn t's refusals
 * the positions [refusalsFrom[t], refusalsFrom[t + 1]) of the refusal columns and its
 * compactions likewise of the compaction store, and its other events by turn position, only
 * for the turns that have any.
 */
interface PackedTurns<Event extends ReplayEvent> {
  readonly sums: TurnColumns;
  readonly refusalsFrom: Int32Array;
  readonly compactionsFrom: Int32Array;
  readonly compactions: CompactionStore<Event>;
  readonly prunes: ReadonlyMap<number, readonly ReplayPrune[]>;
  readonly recorded: ReadonlyMap<number, readonly RecordedCompactionEffect[]>;
}

/** A replay with its simulated calls and refusals still in columns (columns.ts). */
export class ReplayColumns<Event extends ReplayEvent> {
  constructor(
    readonly policy: ReplayPolicy,
    readonly stablePrefix: number,
    private readonly calls: CallColumns,
    private readonly turns: PackedTurns<Event>,
    private readonly refusals: RefusalColumns,
  ) {}

  /**
   * The replay as objects, as reports read it (the ones the simulation kept before columns). A
   * turn's compactions are made each time they are read, from the columns: under a preset a long
   * session compacts at nearly every call (101,648 times on the 909 MB canonical one), and as
   * objects held all at once beside the report they were its largest part (about 140 bytes each);
   * the readers (costs, thrash, the text and the record) each take them a turn at a time.
   */
  report(): Simulated<Event> {
    const cursor = { summarizers: 0 };
    const { sums, refusalsFrom, compactionsFrom, compactions, prunes, recorded } = this.turns;
    const turns = new Array<TurnWith<Event>>(sums.length);
    for (let position = 0; position < sums.length; position++) {
      const from = refusalsFrom[position]!;
      const to = refusalsFrom[position + 1]!;
      const first = compactionsFrom[position]!;
      const end = compactionsFrom[position + 1]!;
      turns[position] = {
        // groupTurns numbers turns from 1, in order.
        turn: position + 1,
        ...sums.at(position),
        get compactions() {
          return end > first ? compactions.objects(first, end) : NONE;
        },
        refusals: to > from ? this.refusals.objects(from, to, cursor) : NONE,
        prunes: prunes.get(position) ?? NONE,
        recorded: recorded.get(position) ?? NONE,
      };
    }
    return { policy: this.policy, stablePrefix: this.stablePrefix, calls: this.calls.objects(), turns, totals: totalsOf(turns) };
  }
}

/**
 * The session's provider calls by turn, as the simulation walks them. Made from the calls and
 * turns as objects (about 100 bytes a call), which are garbage once this returns: the simulation
 * holds a call's message index, prompt and output (in `calls`, beside each call's simulated
 * prompt) and each turn's first message and first call.
 */
function callPlan(messages: readonly AnyMessage[], tokens: readonly number[], recorded: readonly RecordedCompaction[]) {
  const allCalls = providerCalls(messages, tokens, recorded);
  const turns = groupTurns(messages, allCalls);
  const effects = recordedCompactionEffects(messages, tokens, recorded, allCalls);
  const calls = new CallColumns(allCalls.length);
  const turnStarts = new Int32Array(turns.length);
  /** Turn t's calls are positions [firstCalls[t], firstCalls[t + 1]) of `calls`. */
  const firstCalls = new Int32Array(turns.length + 1);
  /** The agent's own compactions by turn position, for the turns that have any. */
  const recordedByTurn = new Map<number, readonly RecordedCompactionEffect[]>();
  turns.forEach((turn, position) => {
    turnStarts[position] = turn.startIndex;
    firstCalls[position] = calls.length;
    for (const call of turn.calls) calls.push({ index: call.index, turn: turn.turn, before: call.input, after: 0, output: call.output, unchanged: null });
    const inTurn = effectsInTurn(effects, turns, position);
    if (inTurn.length > 0) recordedByTurn.set(position, inTurn);
  });
  firstCalls[turns.length] = calls.length;
  return { calls, turnStarts, firstCalls, recordedByTurn, stablePrefix: stablePrefixTokens(allCalls, tokens) };
}

async function simulate<Event extends ReplayEvent>(request: ReplayInput, compactions: CompactionStore<Event>): Promise<ReplayColumns<Event>> {
  const policy = 'compaction' in request.policy ? request.policy : customPolicy(request.policy);
  const input = { ...request, policy };
  const { messages, tokens } = input;
  const { calls, turnStarts, firstCalls, recordedByTurn, stablePrefix } = callPlan(messages, tokens, input.recorded ?? []);
  const sim = new Simulation(input, stablePrefix);
  const refusals = new RefusalColumns();
  const turns: PackedTurns<Event> & { prunes: Map<number, readonly ReplayPrune[]> } = {
    sums: new TurnColumns(turnStarts.length),
    refusalsFrom: new Int32Array(turnStarts.length + 1),
    compactionsFrom: new Int32Array(turnStarts.length + 1),
    compactions,
    prunes: new Map(),
    recorded: recordedByTurn,
  };

  for (let turnPosition = 0; turnPosition < turnStarts.length; turnPosition++) {
    // groupTurns numbers turns from 1, in order.
    const turn = { turn: turnPosition + 1, startIndex: turnStarts[turnPosition]! };
    const first = firstCalls[turnPosition]!;
    const end = firstCalls[turnPosition + 1]!;
    turns.refusalsFrom[turnPosition] = refusals.length;
    turns.compactionsFrom[turnPosition] = compactions.length;
    const prunes: ReplayPrune[] = [];
    let inputBefore = 0;
    let inputAfter = 0;
    let outputTokens = 0;
    let baselineAfter = 0;
    for (let at = first; at < end; at++) {
      const position = at - first;
      const call = calls.call(at);
      const keep = (event: ReplayCompaction | ReplayRefusal | null) => {
        if (!event) return;
        if ('refused' in event) refusals.push(event);
        else compactions.push(event);
      };
      sim.followAgent(call);
      if (position === 0) {
        const pruned = sim.prune(turn, call);
        if (pruned) prunes.push(pruned);
      }
      if ((position === 0 || policy.check === 'every-call') && shouldCompact(sim.prompt(call), policy.compaction)) {
        keep(await sim.compact(call, at, turn.turn, policy.compaction, 'proactive'));
      }
      if (sim.prompt(call) > policy.compaction.contextLimit) {
        keep(await sim.compact(call, at, turn.turn, emergencyPolicy(policy.compaction), 'overflow'));
      }
      const sent = sim.prompt(call);
      if (position === 0) baselineAfter = sent;
      calls.sent(at, sent, sim.takeUnchanged());
      inputBefore += call.input;
      inputAfter += sent;
      outputTokens += call.output;
    }
    turns.sums.push({
      requests: end - first,
      baselineBefore: first < end ? calls.call(first).input : 0,
      baselineAfter,
      inputTokensBefore: inputBefore,
      inputTokensAfter: inputAfter,
      outputTokens,
    });
    if (prunes.length > 0) turns.prunes.set(turnPosition, prunes.slice());
  }
  turns.refusalsFrom[turnStarts.length] = refusals.length;
  turns.compactionsFrom[turnStarts.length] = compactions.length;
  return new ReplayColumns(policy, stablePrefix, calls, turns, refusals);
}

function totalsOf(turns: readonly TurnWith<ReplayEvent>[]): ReplayTotals {
  const totals = {
    requests: 0,
    inputTokensBefore: 0,
    inputTokensAfter: 0,
    outputTokens: 0,
    compactions: 0,
    noGain: 0,
    wouldThrash: 0,
    prunes: 0,
    tokensPruned: 0,
    summarizerInputTokens: 0,
    summarizerOutputTokens: 0,
    maxBaselineBefore: 0,
    maxBaselineAfter: 0,
  };
  for (const turn of turns) {
    totals.requests += turn.requests;
    totals.inputTokensBefore += turn.inputTokensBefore;
    totals.inputTokensAfter += turn.inputTokensAfter;
    totals.outputTokens += turn.outputTokens;
    totals.compactions += turn.compactions.length;
    for (const refusal of turn.refusals) totals[refusal.refused === 'no-gain' ? 'noGain' : 'wouldThrash']++;
    totals.prunes += turn.prunes.length;
    totals.maxBaselineBefore = Math.max(totals.maxBaselineBefore, turn.baselineBefore);
    totals.maxBaselineAfter = Math.max(totals.maxBaselineAfter, turn.baselineAfter);
    for (const prune of turn.prunes) totals.tokensPruned += prune.tokensSaved;
    for (const event of [...turn.compactions, ...turn.refusals]) {
      totals.summarizerInputTokens += event.summarizer?.input ?? 0;
      totals.summarizerOutputTokens += event.summarizer?.output ?? 0;
    }
  }
  const reduction = totals.inputTokensBefore > 0 ? 1 - totals.inputTokensAfter / totals.inputTokensBefore : 0;
  return { ...totals, reduction };
}
