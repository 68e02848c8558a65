/**
 * The simulation's per-call, per-refusal and per-compaction records held as typed-array columns
 * while replay runs, and made into objects (SimulatedCall, ReplayRefusal, ReplayEvent) only when
 * a report reads them. A long session has one simulated call a response and, under `custom`, more
 * refusals than calls (97,514 and 113,684 on the 909 MB canonical session), under a preset a
 * compaction at nearly every call: as objects, 72 to 210 bytes each and a slot in a list, held
 * beside the session's messages to the end of the simulation, replay's peak.
 *
 * Float64Array holds any number exactly, so the objects made again are the ones the simulation
 * would have kept.
 */
import type { Refusal } from '../compaction/compact.js';
import type { CompactionTrigger, ReplayCompaction, ReplayEvent, ReplayRefusal, SimulatedCall, SummarizerCall } from './records.js';

type Typed = Float64Array | Int32Array | Uint8Array;

/** Entries a chunk holds: small buffers, none of them copied or freed while the column grows. */
const CHUNK = 4096;

/**
 * A column of numbers that grows a fixed-size chunk at a time. A buffer doubled and copied on
 * growth frees the old one outside V8's heap, and not all of that is given back to the system.
 */
class GrowingColumn<T extends Typed> {
  private readonly chunks: T[] = [];
  length = 0;
  constructor(private readonly make: (size: number) => T) {}

  push(value: number): void {
    const offset = this.length % CHUNK;
    if (offset === 0) this.chunks.push(this.make(CHUNK));
    this.chunks[this.chunks.length - 1]![offset] = value;
    this.length++;
  }

  at(position: number): number {
    return this.chunks[Math.floor(position / CHUNK)]![position % CHUNK]!;
  }
}

/**
 * The simulated calls, one a provider call, in order: their count, messages, prompts as the
 * session sent them and outputs are known before the first is simulated (push), what the policy
 * sent once it is (sent).
 */
export class CallColumns {
  private readonly index: Int32Array;
  private readonly turn: Int32Array;
  private readonly before: Float64Array;
  private readonly after: Float64Array;
  private readonly output: Float64Array;
  private readonly unchanged: Float64Array;
  /** 1 where `unchanged` holds a number, 0 where the call was append-only (null). */
  private readonly rewritten: Uint8Array;
  length = 0;

  constructor(readonly capacity: number) {
    this.index = new Int32Array(capacity);
    this.turn = new Int32Array(capacity);
    this.before = new Float64Array(capacity);
    this.after = new Float64Array(capacity);
    this.output = new Float64Array(capacity);
    this.unchanged = new Float64Array(capacity);
    this.rewritten = new Uint8Array(capacity);
  }

  push(call: SimulatedCall): void {
    const at = this.length;
    if (at >= this.capacity) throw new Error('internal: more simulated calls than provider calls');
    this.index[at] = call.index;
    this.turn[at] = call.turn;
    this.before[at] = call.before;
    this.after[at] = call.after;
    this.output[at] = call.output;
    this.sent(at, call.after, call.unchanged);
    this.length++;
  }

  /** The provider call at `position` as the simulation reads it: its message, prompt as sent and output. */
  call(position: number): { readonly index: number; readonly input: number; readonly output: number } {
    return { index: this.index[position]!, input: this.before[position]!, output: this.output[position]! };
  }

  /** The call at `position` as the policy sent it, and the prompt tokens a rewrite left unchanged (null: append-only). */
  sent(position: number, after: number, unchanged: number | null): void {
    this.after[position] = after;
    this.unchanged[position] = unchanged ?? 0;
    this.rewritten[position] = unchanged === null ? 0 : 1;
  }

  at(position: number): SimulatedCall {
    return {
      index: this.index[position]!,
      turn: this.turn[position]!,
      before: this.before[position]!,
      after: this.after[position]!,
      output: this.output[position]!,
      unchanged: this.rewritten[position] === 1 ? this.unchanged[position]! : null,
    };
  }

  /** Every call as an object, in order (a list at its exact size). */
  objects(): SimulatedCall[] {
    const calls = new Array<SimulatedCall>(this.length);
    for (let position = 0; position < this.length; position++) calls[position] = this.at(position);
    return calls;
  }
}

/** Bits of a refusal's flags column. */
const WOULD_THRASH = 1;
const OVERFLOW = 2;
/** `tokensAfter` holds a number (else null: no cut was tried). */
const MEASURED = 4;
/** The refusal cost a summarizer call, kept in the summarizer columns (else null). */
const SUMMARIZED = 8;
const CACHED = 16;
const ESTIMATED = 32;

/** The flags of an event (a refusal, a compaction) for its trigger and its summarizer's call. */
function eventFlags(trigger: CompactionTrigger, summarizer: SummarizerCall | null): number {
  const triggered = trigger === 'overflow' ? OVERFLOW : 0;
  return summarizer === null ? triggered : triggered | SUMMARIZED | (summarizer.cached ? CACHED : 0) | (summarizer.estimated ? ESTIMATED : 0);
}

const triggerOf = (flags: number): CompactionTrigger => (flags & OVERFLOW ? 'overflow' : 'proactive');

/** The summarizer's call of an event whose `flags` have SUMMARIZED, with its tokens. */
function summarizerCall(flags: number, input: number, output: number): SummarizerCall {
  return { input, output, cached: (flags & CACHED) !== 0, estimated: (flags & ESTIMATED) !== 0 };
}

/**
 * The refusals of a whole replay, in the order they happened (so each turn's are a range of
 * positions). A summarizer's call is kept only for the refusals that made one, in their order.
 */
export class RefusalColumns {
  private readonly flags = new GrowingColumn((size) => new Uint8Array(size));
  private readonly callPosition = new GrowingColumn((size) => new Int32Array(size));
  private readonly turn = new GrowingColumn((size) => new Int32Array(size));
  private readonly tokensBefore = new GrowingColumn((size) => new Float64Array(size));
  private readonly tokensAfter = new GrowingColumn((size) => new Float64Array(size));
  private readonly summarizerInput = new GrowingColumn((size) => new Float64Array(size));
  private readonly summarizerOutput = new GrowingColumn((size) => new Float64Array(size));

  get length(): number {
    return this.flags.length;
  }

  push(refusal: ReplayRefusal): void {
    const { summarizer, tokensAfter } = refusal;
    let flags = eventFlags(refusal.trigger, summarizer) | (refusal.refused === 'would-thrash' ? WOULD_THRASH : 0);
    if (tokensAfter !== null) flags |= MEASURED;
    if (summarizer !== null) {
      this.summarizerInput.push(summarizer.input);
      this.summarizerOutput.push(summarizer.output);
    }
    this.flags.push(flags);
    this.callPosition.push(refusal.callPosition);
    this.turn.push(refusal.turn);
    this.tokensBefore.push(refusal.tokensBefore);
    this.tokensAfter.push(tokensAfter ?? 0);
  }

  /**
   * The refusals at positions [from, to) as objects, the keys in the order the simulation gives
   * them; `summarizers` is the position in the summarizer columns of the first one's call (a
   * cursor the caller advances, walking the ranges in order).
   */
  objects(from: number, to: number, cursor: { summarizers: number }): ReplayRefusal[] {
    const refusals = new Array<ReplayRefusal>(to - from);
    for (let position = from; position < to; position++) {
      const flags = this.flags.at(position);
      let summarizer: SummarizerCall | null = null;
      if (flags & SUMMARIZED) {
        const at = cursor.summarizers++;
        summarizer = summarizerCall(flags, this.summarizerInput.at(at), this.summarizerOutput.at(at));
      }
      const refused: Refusal = flags & WOULD_THRASH ? 'would-thrash' : 'no-gain';
      refusals[position - from] = {
        refused,
        trigger: triggerOf(flags),
        callPosition: this.callPosition.at(position),
        turn: this.turn.at(position),
        tokensBefore: this.tokensBefore.at(position),
        tokensAfter: flags & MEASURED ? this.tokensAfter.at(position) : null,
        summarizer,
      };
    }
    return refusals;
  }
}

/**
 * Where the simulation keeps its compactions, in the order they happened (so each turn's are a
 * range of positions), given back as `Event`s.
 */
export interface CompactionStore<Event extends ReplayEvent> {
  readonly length: number;
  push(compaction: ReplayCompaction): void;
  /** The compactions at positions [from, to), as a new list. */
  objects(from: number, to: number): Event[];
}

/** Compactions kept whole, states included (replaySession: what a sidecar written then would hold). */
export class CompactionList implements CompactionStore<ReplayCompaction> {
  private readonly list: ReplayCompaction[] = [];

  get length(): number {
    return this.list.length;
  }

  push(compaction: ReplayCompaction): void {
    this.list.push(compaction);
  }

  objects(from: number, to: number): ReplayCompaction[] {
    return this.list.slice(from, to);
  }
}

/**
 * Compactions as reports show them (without their states), as columns: the presets compact at
 * nearly every call of a long session (101,648 times on the 909 MB canonical one), and as objects
 * (an event, its summarizer call and their property stores) each took about 210 bytes to the end
 * of the simulation; here 69 and a shared id. Every compaction's summarizer call has a row (0s
 * when it made none).
 */
export class CompactionColumns implements CompactionStore<ReplayEvent> {
  private readonly flags = new GrowingColumn((size) => new Uint8Array(size));
  private readonly beforeCallIndex = new GrowingColumn((size) => new Int32Array(size));
  private readonly callPosition = new GrowingColumn((size) => new Int32Array(size));
  private readonly turn = new GrowingColumn((size) => new Int32Array(size));
  /** The first kept messages' ids, the strings the messages held. */
  private readonly firstKeptMessageId: string[] = [];
  private readonly tokensBefore = new GrowingColumn((size) => new Float64Array(size));
  private readonly tokensAfter = new GrowingColumn((size) => new Float64Array(size));
  private readonly summaryTokens = new GrowingColumn((size) => new Float64Array(size));
  private readonly carriedUserTokens = new GrowingColumn((size) => new Float64Array(size));
  private readonly summarizerInput = new GrowingColumn((size) => new Float64Array(size));
  private readonly summarizerOutput = new GrowingColumn((size) => new Float64Array(size));

  get length(): number {
    return this.flags.length;
  }

  push(compaction: ReplayCompaction): void {
    const { summarizer } = compaction;
    this.flags.push(eventFlags(compaction.trigger, summarizer));
    this.beforeCallIndex.push(compaction.beforeCallIndex);
    this.callPosition.push(compaction.callPosition);
    this.turn.push(compaction.turn);
    this.firstKeptMessageId.push(compaction.firstKeptMessageId);
    this.tokensBefore.push(compaction.tokensBefore);
    this.tokensAfter.push(compaction.tokensAfter);
    this.summaryTokens.push(compaction.summaryTokens);
    this.carriedUserTokens.push(compaction.carriedUserTokens);
    this.summarizerInput.push(summarizer?.input ?? 0);
    this.summarizerOutput.push(summarizer?.output ?? 0);
  }

  /** The compactions at positions [from, to) as events, the keys in the order the simulation gives them. */
  objects(from: number, to: number): ReplayEvent[] {
    const events = new Array<ReplayEvent>(to - from);
    for (let position = from; position < to; position++) {
      const flags = this.flags.at(position);
      const summarizer = flags & SUMMARIZED ? summarizerCall(flags, this.summarizerInput.at(position), this.summarizerOutput.at(position)) : null;
      events[position - from] = {
        trigger: triggerOf(flags),
        beforeCallIndex: this.beforeCallIndex.at(position),
        callPosition: this.callPosition.at(position),
        turn: this.turn.at(position),
        firstKeptMessageId: this.firstKeptMessageId[position]!,
        tokensBefore: this.tokensBefore.at(position),
        tokensAfter: this.tokensAfter.at(position),
        summaryTokens: this.summaryTokens.at(position),
        carriedUserTokens: this.carriedUserTokens.at(position),
        summarizer,
      };
    }
    return events;
  }
}

/** A turn's numbers as the simulation adds them up. */
export interface TurnSums {
  readonly requests: number;
  readonly baselineBefore: number;
  readonly baselineAfter: number;
  readonly inputTokensBefore: number;
  readonly inputTokensAfter: number;
  readonly outputTokens: number;
}

/**
 * The replayed turns' numbers, one row a turn (their count is known before the first is
 * simulated); their lists of events are kept by the caller, most of them empty.
 */
export class TurnColumns {
  private readonly requests: Int32Array;
  private readonly baselineBefore: Float64Array;
  private readonly baselineAfter: Float64Array;
  private readonly inputTokensBefore: Float64Array;
  private readonly inputTokensAfter: Float64Array;
  private readonly outputTokens: Float64Array;
  length = 0;

  constructor(readonly capacity: number) {
    this.requests = new Int32Array(capacity);
    this.baselineBefore = new Float64Array(capacity);
    this.baselineAfter = new Float64Array(capacity);
    this.inputTokensBefore = new Float64Array(capacity);
    this.inputTokensAfter = new Float64Array(capacity);
    this.outputTokens = new Float64Array(capacity);
  }

  push(turn: TurnSums): void {
    const at = this.length;
    if (at >= this.capacity) throw new Error('internal: more replayed turns than turns');
    this.requests[at] = turn.requests;
    this.baselineBefore[at] = turn.baselineBefore;
    this.baselineAfter[at] = turn.baselineAfter;
    this.inputTokensBefore[at] = turn.inputTokensBefore;
    this.inputTokensAfter[at] = turn.inputTokensAfter;
    this.outputTokens[at] = turn.outputTokens;
    this.length++;
  }

  at(position: number): TurnSums {
    return {
      requests: this.requests[position]!,
      baselineBefore: this.baselineBefore[position]!,
      baselineAfter: this.baselineAfter[position]!,
      inputTokensBefore: this.inputTokensBefore[position]!,
      inputTokensAfter: this.inputTokensAfter[position]!,
      outputTokens: this.outputTokens[position]!,
    };
  }
}
