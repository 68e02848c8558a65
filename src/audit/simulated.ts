/**
 * The audits of the compactions a replay simulated (`audit --strategy`), taken as the session is
 * read a second time, so that no read holds the session's text: the same figures as
 * compactions.ts `auditReplay` over the full messages. A compaction's facts are those of the
 * messages before its cut, a prefix of the facts the lean read gathered one message at a time
 * (FactPrefixes); its view is decided on the skeletons of the messages the provider had seen
 * then (read/skeleton.ts), and only the messages that view shows are held, in full, until the
 * read has passed the call it happened before. Pure.
 */
import type { Fact } from '../compaction/facts.js';
import { errorSource, FactCollector } from '../compaction/facts.js';
import { CountColumn } from '../growth/count-column.js';
import type { ToolRequestBlock } from '../session/model.js';
import { cutView } from '../compaction/provider-view.js';
import type { Skeleton } from '../read/skeleton.js';
import type { ReplayCompaction } from '../replay/simulate.js';
import type { Message } from '../session/model.js';
import { applyViewRepair, planViewRepair } from '../session/view-repair.js';
import type { AuditedCompaction } from './audited.js';
import { measureRetention } from './fidelity.js';

/** What a simulated compaction's audit reads of it: not its state's lazy fields. */
export type SimulatedCompaction = Pick<ReplayCompaction, 'beforeCallIndex' | 'tokensBefore' | 'tokensAfter' | 'summaryTokens' | 'state'>;

/** One strategy's replay, its compactions in the order it made them. */
export interface SimulatedRun {
  readonly strategy: string;
  readonly compactions: readonly SimulatedCompaction[];
}

/**
 * Facts gathered one message at a time (facts.ts FactCollector: in order, first occurrence only),
 * with how many the messages before each one hold: the facts of any prefix of the messages, for
 * cuts decided after the read. Each compaction's facts are those before its cut.
 */
export class FactPrefixes {
  private readonly counts = new CountColumn();

  constructor(private readonly collector: FactCollector) {}

  add(message: Message): void {
    this.counts.push(this.collector.facts.length);
    this.collector.add(message);
  }

  /** The facts of the messages before `index` (all of them past the last message added). */
  upTo(index: number): readonly Fact[] {
    const { facts } = this.collector;
    return facts.slice(0, this.counts.at(index) ?? facts.length);
  }
}

/**
 * The facts of `messages` gathered in one pass, each result read with the calls met before it;
 * null when that is not the call the last call of its id in every prefix gives (an id twice, or a
 * call after a result it would answer): each compaction then collects its own (auditCompaction).
 */
export function prefixFacts(messages: readonly Message[]): FactPrefixes | null {
  const calls = new Map<string, ToolRequestBlock>();
  const answeredFirst = new Set<string>();
  const prefixes = new FactPrefixes(
    new FactCollector((result) => {
      const call = calls.get(result.tool_request_id);
      if (!call) answeredFirst.add(result.tool_request_id);
      return errorSource(result, call);
    }),
  );
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type !== 'tool_request') continue;
      if (calls.has(block.id) || answeredFirst.has(block.id)) return null;
      calls.set(block.id, block);
    }
    prefixes.add(message);
  }
  return prefixes;
}

export interface SimulatedAuditStream {
  /** The session's message at `index` (in order, from 0), in full. */
  push(message: Message, index: number): void;
  /** The audits, strategy by strategy, as auditReplay gives them. */
  finish(): AuditedCompaction[];
  /** How many full messages it holds now (each strategy's own count added up). */
  readonly holding: number;
  /** How many of the session's messages it needs: those before the last call a compaction happened before. */
  readonly lastNeeded: number;
}

/** Where one compaction's view starts in the session: the first message with the state's first kept id (cutView). */
function viewStart(skeletons: readonly Skeleton[], compaction: SimulatedCompaction): number {
  const id = compaction.state.first_kept_message_id;
  const end = compaction.beforeCallIndex;
  for (let index = 0; index < end && index < skeletons.length; index++) if (skeletons[index]!.id === id) return index;
  // Not among the messages seen: cutView fails on it, as auditReplay would.
  return end;
}

function runStream(run: SimulatedRun, skeletons: readonly Skeleton[], facts: FactPrefixes) {
  const { compactions } = run;
  const starts = compactions.map((compaction) => viewStart(skeletons, compaction));
  // The lowest start of the compactions from each on: what must still be held.
  const lowest = new Int32Array(compactions.length + 1).fill(skeletons.length);
  for (let n = compactions.length - 1; n >= 0; n--) lowest[n] = Math.min(lowest[n + 1]!, starts[n]!);
  const held = new Map<number, Message>();
  let dropped = 0;
  let next = 0;
  const audits: AuditedCompaction[] = [];

  const audit = (n: number) => {
    const compaction = compactions[n]!;
    const end = compaction.beforeCallIndex;
    const seen = skeletons.slice(0, end);
    const cut = cutView(seen, compaction.state, planViewRepair(seen));
    if (!cut) throw new Error('audit: a simulated prune has no cut view');
    const shown: Message[] = [];
    for (let index = cut.from; index < seen.length; index++) shown.push(held.get(index)!);
    const firstKept = compaction.state.first_kept_index;
    audits.push({
      source: 'simulated',
      strategy: run.strategy,
      number: n + 1,
      firstKeptIndex: firstKept,
      endIndex: end,
      tokensBefore: compaction.tokensBefore,
      tokensAfter: compaction.tokensAfter,
      summaryTokens: compaction.summaryTokens,
      firstKeptMessageId: seen[firstKept]?.id ?? null,
      report: measureRetention(facts.upTo(Math.min(firstKept, seen.length)), [...cut.summary, ...applyViewRepair(shown, cut.from, cut.repair)]),
    });
  };
  const auditUpTo = (count: number) => {
    while (next < compactions.length && compactions[next]!.beforeCallIndex <= count) audit(next++);
    for (; dropped < lowest[next]!; dropped++) held.delete(dropped);
  };

  return {
    push(message: Message, index: number) {
      if (index >= lowest[next]!) held.set(index, message);
      auditUpTo(index + 1);
    },
    finish() {
      auditUpTo(Infinity);
      return audits;
    },
    get holding() {
      return held.size;
    },
  };
}

/**
 * The audits of every run's compactions over a second read of the session. `skeletons` are the
 * session's, `facts` those the lean read gathered (each result read with the calls met so far:
 * the caller checked that this is the call the messages before each compaction give it).
 */
export function simulatedAuditStream(runs: readonly SimulatedRun[], skeletons: readonly Skeleton[], facts: FactPrefixes): SimulatedAuditStream {
  const streams = runs.map((run) => runStream(run, skeletons, facts));
  return {
    push(message, index) {
      for (const stream of streams) stream.push(message, index);
    },
    finish: () => streams.flatMap((stream) => stream.finish()),
    get holding() {
      return streams.reduce((total, stream) => total + stream.holding, 0);
    },
    lastNeeded: runs.reduce((most, run) => run.compactions.reduce((inRun, compaction) => Math.max(inRun, compaction.beforeCallIndex), most), 0),
  };
}
