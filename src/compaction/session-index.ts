/**
 * Lookups over one session that every compaction of it needs, each built on first use and then
 * shared. Replay compacts the same session hundreds of times, once per simulated compaction, and
 * rescanning the session from its first message each time made replay quadratic in its length;
 * with these a compaction costs its window, not the session. Pure (it only caches).
 *
 * Each lookup answers exactly what the direct function named in its comment computes, for any
 * `end`: the session as it stood before message `end`, without copying that prefix.
 * test/session-index.test.ts checks each against its direct function on random sessions.
 */
import type { AnyMessage, Message, RecordedCompaction, ToolRequestBlock } from '../session/model.js';
import type { ContextLookups } from '../tokens/estimate.js';
import { estimateContextTokens, reportsPrompt } from '../tokens/estimate.js';
import { RangeSums } from '../tokens/range-sums.js';
import type { ViewRepair } from '../session/view-repair.js';
import { planViewRepair } from '../session/view-repair.js';
import { CutSiteIndex } from './cut-sites.js';

/**
 * Where the calls with one id are: the index of the message holding it, or (an id used again,
 * rare) each such index in session order. A number, not an object and a list for every id: on a
 * long session's replay those were about 100 bytes a call (8 MB over 79,862 calls).
 */
type RequestsAt = number | number[];

/** The last tool request with `id` in a message's content. */
function lastRequestIn(message: AnyMessage, id: string): ToolRequestBlock | undefined {
  let found: ToolRequestBlock | undefined;
  for (const block of message.content) if (block.type === 'tool_request' && block.id === id) found = block;
  return found;
}

/**
 * Over full messages, or slim ones (a lean read's, or a second read's mix: compaction/compact.ts
 * RunnableSubject): every lookup reads structure only. The prefix hashes a state stores are the
 * read's, or session/hash.ts prefixHasher's over full messages.
 */
export class SessionIndex<M extends AnyMessage = Message> {
  private sites: CutSiteIndex | null = null;
  private requests: Map<string, RequestsAt> | null = null;
  private lastReportedBefore: Int32Array | null = null;
  private repair: ViewRepair | null = null;
  private readonly lookups: ContextLookups;

  /** `tokens`: the estimates the compaction reads (a live RangeSums: replay's pruning updates it). */
  constructor(
    readonly messages: readonly M[],
    readonly tokens: RangeSums,
  ) {
    this.lookups = { sum: (from, to) => tokens.sum(from, to), lastReported: (end) => this.lastReported(end) };
  }

  /** Where a cut may fall (cut-sites.ts), for every cut made in the session. */
  get cutSites(): CutSiteIndex {
    return (this.sites ??= new CutSiteIndex(this.messages));
  }

  /** planViewRepair(messages, from): replay asks for each compaction, and `from` changes only at the agent's own compactions. */
  viewRepair(from: number): ViewRepair {
    if (this.repair?.from !== from) this.repair = planViewRepair(this.messages, from);
    return this.repair;
  }

  /** toolRequestsById(messages.slice(0, end)).get(id): the latest call with that id before `end`. */
  requestBefore(id: string, end: number): ToolRequestBlock | undefined {
    const at = this.requestsById().get(id);
    if (at === undefined) return undefined;
    // Ids are unique in nearly every session: one index.
    if (typeof at === 'number') return at < end ? lastRequestIn(this.messages[at]!, id) : undefined;
    for (let k = at.length - 1; k >= 0; k--) if (at[k]! < end) return lastRequestIn(this.messages[at[k]!]!, id);
    return undefined;
  }

  /** estimateContextTokens(messages.slice(0, end), tokens, end, compactions). */
  contextTokens(end: number, compactions: readonly RecordedCompaction[] = []): number {
    return estimateContextTokens(this.messages, this.tokens.values, end, compactions, this.lookups);
  }

  private requestsById(): Map<string, RequestsAt> {
    if (this.requests) return this.requests;
    const requests = new Map<string, RequestsAt>();
    this.messages.forEach((message, index) => {
      for (const block of message.content) {
        if (block.type !== 'tool_request') continue;
        const at = requests.get(block.id);
        if (at === undefined) requests.set(block.id, index);
        else if (typeof at === 'number') {
          if (at !== index) requests.set(block.id, [at, index]);
        } else if (at[at.length - 1] !== index) at.push(index);
      }
    });
    return (this.requests = requests);
  }

  private lastReported(end: number): number {
    if (!this.lastReportedBefore) {
      const before = new Int32Array(this.messages.length + 1);
      let last = -1;
      for (let i = 0; i < this.messages.length; i++) {
        before[i] = last;
        if (reportsPrompt(this.messages[i])) last = i;
      }
      before[this.messages.length] = last;
      this.lastReportedBefore = before;
    }
    return this.lastReportedBefore[Math.min(end, this.messages.length)]!;
  }
}
