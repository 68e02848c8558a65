/**
 * Where a cut may fall: the cut rules for one message, which messages sit inside a tool call's
 * pair, and the searches a cut makes over them (the latest valid cut before a point, the earliest
 * after one). One cut of a session scans for them (`scannedCutSites`); replay cuts the same
 * session at every simulated compaction, and scanning the span since the last cut each time made
 * it quadratic in the session's length, so a `CutSiteIndex` lists the valid cuts once a rule and
 * bisects them. Pure.
 */
import type { AnyMessage } from '../session/model.js';
import { hasToolRequests, isToolResultMessage } from '../session/model.js';
import type { CutRule } from './policy.js';

/**
 * A mark a message: 1 where a cut would separate a tool call from its result, else 0. A byte
 * each, where a list of booleans took 8 (1.6 MB held through a long session's replay).
 */
export type PairMarks = Readonly<Uint8Array>;

/**
 * For each index c, whether cutting at c would separate a tool request before c from its
 * result at c or later. The rules below assume results follow their request at once; real
 * transcripts also interleave (Codex runs calls in parallel, a provider-side tool sits between),
 * so every cut is checked against the actual pairs. A result answers the latest earlier request
 * with its id; requests without a result (interrupted calls) constrain nothing.
 */
export function insideToolPairs(messages: readonly AnyMessage[]): PairMarks {
  const depth = new Int32Array(messages.length + 1);
  const open = new Map<string, number>();
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_request') open.set(block.id, index);
      if (block.type !== 'tool_result') continue;
      const request = open.get(block.tool_request_id);
      if (request === undefined || request === index) continue;
      open.delete(block.tool_request_id);
      // Cuts in (request, result] separate the pair.
      depth[request + 1]!++;
      depth[index + 1]!--;
    }
  });
  const inside = new Uint8Array(messages.length);
  let level = 0;
  for (let i = 0; i < messages.length; i++) {
    level += depth[i]!;
    inside[i] = level > 0 ? 1 : 0;
  }
  return inside;
}

/** The cut rules for one message (tool pairs apart): a turn's start, or an assistant message without tool requests. */
export function isValidCutPoint(message: AnyMessage, rule: CutRule = 'conservative'): boolean {
  if (message.role === 'user') return !isToolResultMessage(message);
  if (message.role === 'assistant') return rule === 'tool-safe' || !hasToolRequests(message);
  return false;
}

/** The searches of one cut, under one rule. A valid cut is a valid cut point not inside a tool pair. */
export interface CutSites {
  /** Whether cutting at `index` separates a tool pair (insideToolPairs). */
  inside(index: number): boolean;
  /** Whether the message at `index` is a valid cut point under the rule, tool pairs apart (isValidCutPoint). */
  point(index: number): boolean;
  /** The latest valid cut in (after, at], or -1. */
  latest(after: number, at: number): number;
  /** The earliest valid cut in [from, end), or -1. */
  earliest(from: number, end: number): number;
}

/** CutSites by scanning the messages: each answer costs the distance it covers. */
export function scannedCutSites(messages: readonly AnyMessage[], rule: CutRule, inside: PairMarks = insideToolPairs(messages)): CutSites {
  const valid = (index: number) => isValidCutPoint(messages[index]!, rule) && inside[index] !== 1;
  return {
    inside: (index) => inside[index] === 1,
    point: (index) => isValidCutPoint(messages[index]!, rule),
    latest(after, at) {
      for (let index = Math.min(at, messages.length - 1); index > Math.max(after, -1); index--) if (valid(index)) return index;
      return -1;
    },
    earliest(from, end) {
      for (let index = Math.max(from, 0); index < Math.min(end, messages.length); index++) if (valid(index)) return index;
      return -1;
    },
  };
}

/** The index of the first of `sorted`'s values at or above `value` (its length when there is none). */
function firstAtOrAbove(sorted: Int32Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * CutSites of one session for every cut made in it: per rule, the valid cuts in order, made on
 * the rule's first use and searched by bisection (4 bytes a valid cut, beside the pairs' byte a
 * message).
 */
export class CutSiteIndex {
  private readonly pairs: PairMarks;
  private readonly rules = new Map<CutRule, CutSites>();

  constructor(private readonly messages: readonly AnyMessage[]) {
    this.pairs = insideToolPairs(messages);
  }

  /** The sites under `rule`. */
  forRule(rule: CutRule): CutSites {
    let sites = this.rules.get(rule);
    if (sites === undefined) {
      sites = this.build(rule);
      this.rules.set(rule, sites);
    }
    return sites;
  }

  private build(rule: CutRule): CutSites {
    const { messages, pairs } = this;
    const found = new Int32Array(messages.length);
    let count = 0;
    for (let index = 0; index < messages.length; index++) {
      if (pairs[index] === 0 && isValidCutPoint(messages[index]!, rule)) found[count++] = index;
    }
    const cuts = found.slice(0, count);
    return {
      inside: (index) => pairs[index] === 1,
      point: (index) => isValidCutPoint(messages[index]!, rule),
      latest(after, at) {
        const next = firstAtOrAbove(cuts, at + 1);
        const found = next > 0 ? cuts[next - 1]! : -1;
        return found > after ? found : -1;
      },
      earliest(from, end) {
        const next = firstAtOrAbove(cuts, from);
        const found = next < cuts.length ? cuts[next]! : -1;
        return found >= 0 && found < end ? found : -1;
      },
    };
  }
}
