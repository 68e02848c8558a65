/**
 * What a Claude Code session was billed for: one call per API response, deduplicated the way the
 * provider billed it, across the session's file and its subagents' transcripts. A response is
 * written as several lines sharing `message.id` + `requestId`; input and cache figures repeat on
 * each, the output count is final on the line with a `stop_reason` (else the largest partial
 * wins). `<synthetic>` lines are written by Claude Code itself and are no call.
 *
 * Which responses are the session's context is claude-code.ts's (the parent chain); this file
 * keeps the others as off-context calls with their cause. A line Claude Code copied from another
 * session when it branched the conversation (`forkedFrom`) was billed there: never spend here. Finding and reading the subagent
 * files is claude-code-subagents.ts's.
 */
import { z } from '../lazy-zod.js';
import type { OffContextCall, SpendCause } from '../session/model.js';
import type { AnthropicUsage } from './anthropic-content.js';
import { anthropicUsage, anthropicUsageSchema } from './anthropic-content.js';
import { callKeyOf, nonZeroUsage } from './convert.js';

export const SYNTHETIC_MODEL = '<synthetic>';

/** One assistant line's part of a billed call. */
export interface BilledLine {
  /** `message.id` + `requestId`; null when the line has no `message.id` (then it is a call of its own). */
  readonly responseKey: string | null;
  readonly usage: AnthropicUsage | null;
  /** The line with the response's `stop_reason`: its output count is the final one. */
  readonly final: boolean;
  readonly model: string | null;
  readonly timestamp: string | null;
  /** The session a branched conversation's line was copied from (`forkedFrom.sessionId`), else null. */
  readonly copiedFrom: string | null;
}

/** The key that names one response: its `message.id` and the request that produced it. */
export function responseKeyOf(messageId: string | null | undefined, requestId: string | null | undefined): string | null {
  return messageId ? `${messageId}\u0000${requestId ?? ''}` : null;
}

/** The key of a call: its response's, or the line's own for a line without `message.id`. */
export function callKey(responseKey: string | null, file: string, line: number): string {
  return responseKey ?? `${file}\u0000${line}`;
}

/** What is kept of a response's usage while its lines are read. */
export interface ResponseUsage {
  usage: AnthropicUsage | null;
  final: boolean;
  model: string | null;
}

/**
 * A later line of the same response: its usage replaces the one kept unless that one is final
 * (the final output count wins over partial ones, a larger partial over a smaller one).
 */
export function mergeUsage(kept: ResponseUsage, next: BilledLine): void {
  if (kept.final) return;
  if (next.usage && (next.final || (next.usage.output_tokens ?? 0) >= (kept.usage?.output_tokens ?? 0))) kept.usage = next.usage;
  kept.final = next.final;
  kept.model ??= next.model;
}

/** `forkedFrom` on the lines Claude Code copies into a branched conversation. */
export const forkedFromSchema = z.looseObject({ sessionId: z.string().min(1) }).nullish().catch(null);

const billedSchema = z.looseObject({
  requestId: z.string().nullish(),
  timestamp: z.string().nullish(),
  forkedFrom: forkedFromSchema,
  message: z.looseObject({
    id: z.string().nullish(),
    model: z.string().nullish(),
    stop_reason: z.string().nullish(),
    usage: anthropicUsageSchema.nullish(),
  }),
});

/**
 * The billing fields of an assistant line read without its content (sidechain lines, subagent
 * transcripts); null for other lines, a `<synthetic>` line or one whose billing fields do not parse.
 */
export function billedRecord(record: Record<string, unknown>): BilledLine | null {
  if (record['type'] !== 'assistant') return null;
  const parsed = billedSchema.safeParse(record);
  if (!parsed.success) return null;
  const { message } = parsed.data;
  if (message.model === SYNTHETIC_MODEL) return null;
  return {
    responseKey: responseKeyOf(message.id, parsed.data.requestId),
    usage: message.usage ?? null,
    final: message.stop_reason !== null && message.stop_reason !== undefined,
    model: message.model ?? null,
    timestamp: parsed.data.timestamp ?? null,
    copiedFrom: parsed.data.forkedFrom?.sessionId ?? null,
  };
}

/** Where a call was first seen, and why it would be off the context. */
export interface CallSite {
  readonly file: string;
  readonly line: number;
  /** A subagent transcript's cause; null for the session's own file (decided by its chain). */
  readonly cause: SpendCause | null;
  readonly sidechain: boolean;
}

/** A call kept until the end of the file: its site's fields in it (one object a call, not two). */
interface Call extends ResponseUsage, CallSite {
  readonly timestamp: string | null;
  readonly responseKey: string | null;
  readonly copied: boolean;
}

/**
 * A line's usage as a call keeps it to the end of the file: the four counts and the one-hour
 * part, all `anthropicUsage` reads (it gives the same Usage back). The parsed object also holds
 * the 5m/1h split as a second object, `service_tier` and whatever else the line carries: about
 * 100 bytes more a call, for every call of a long session.
 */
function keptUsage(usage: AnthropicUsage): AnthropicUsage {
  const { input, output, cacheRead, cacheWrite, cacheWrite1h } = anthropicUsage(usage);
  const counts = { input_tokens: input, output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite };
  return cacheWrite1h === undefined ? counts : { ...counts, cache_creation: { ephemeral_1h_input_tokens: cacheWrite1h } };
}

/** Every billed call met while reading a session and its subagents, once each. */
export class SessionSpend {
  private readonly calls = new Map<string, Call>();

  add(billed: BilledLine, site: CallSite): void {
    const key = callKey(billed.responseKey, site.file, site.line);
    const known = this.calls.get(key);
    if (known) {
      mergeUsage(known, billed);
      if (known.usage === billed.usage && billed.usage) known.usage = keptUsage(billed.usage);
    } else {
      this.calls.set(key, {
        file: site.file,
        line: site.line,
        cause: site.cause,
        sidechain: site.sidechain,
        usage: billed.usage && keptUsage(billed.usage),
        final: billed.final,
        model: billed.model,
        timestamp: billed.timestamp,
        responseKey: billed.responseKey,
        copied: billed.copiedFrom !== null,
      });
    }
  }

  /**
   * The calls that are not messages of the context (`inContext`, by callKey), with their cause:
   * a subagent transcript's own, else `ownCause` of the line's side in the session's file. Copies
   * of another session's calls are left out: that session was billed for them.
   */
  offContext(inContext: ReadonlySet<string>, ownCause: (sidechain: boolean) => SpendCause): OffContextCall[] {
    const off: OffContextCall[] = [];
    for (const [key, call] of this.calls) {
      if (inContext.has(key) || !call.usage || call.copied) continue;
      const usage = nonZeroUsage(anthropicUsage(call.usage));
      if (!usage) continue;
      const { file, line, cause, sidechain } = call;
      off.push({
        cause: cause ?? ownCause(sidechain),
        usage,
        file,
        line,
        ...(call.model ? { model: call.model } : {}),
        ...(call.timestamp ? { timestamp: call.timestamp } : {}),
        ...(call.responseKey !== null ? { callKey: callKeyOf(call.responseKey, call.timestamp) } : {}),
      });
    }
    return off;
  }
}
