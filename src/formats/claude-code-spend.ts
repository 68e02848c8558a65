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
import * as z from 'zod';
import type { OffContextCall, SpendCause } from '../session/model.js';
import type { AnthropicUsage } from './anthropic-content.js';
import { anthropicUsage, anthropicUsageSchema } from './anthropic-content.js';
import type { CallKeys } from './claude-code-call-keys.js';
import { callKeyOf, nonZeroUsage } from './convert.js';
import { grown } from './grown.js';

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

/** Whether a later line's usage replaces the one kept, whose output count is `keptOutput` (0 without usage). */
function replacesUsage(keptOutput: number, next: BilledLine): boolean {
  return !!next.usage && (next.final || (next.usage.output_tokens ?? 0) >= keptOutput);
}

/**
 * A later line of the same response: its usage replaces the one kept unless that one is final
 * (the final output count wins over partial ones, a larger partial over a smaller one).
 */
export function mergeUsage(kept: ResponseUsage, next: BilledLine): void {
  if (kept.final) return;
  if (replacesUsage(kept.usage?.output_tokens ?? 0, next)) kept.usage = next.usage;
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

const SIDECHAIN = 1;
const FINAL = 2;
const COPIED = 4;
const USAGE = 8;
const ONE_HOUR = 16;
/** The call has a response key (else its key is its file and line). */
const RESPONSE = 32;

/** The counts kept of a call's usage: what `anthropicUsage` gives (the one-hour part 0 when it gives none). */
const INPUT = 0;
const OUTPUT = 1;
const CACHE_READ = 2;
const CACHE_WRITE = 3;
const CACHE_WRITE_1H = 4;
const COUNTS = 5;

/** Room made first (doubled as needed): small, since an archive holds many small sessions, each read with columns of its own. */
const FIRST_CAPACITY = 64;

/**
 * Every billed call met while reading a session and its subagents, once each (by its number in
 * the read's CallKeys), in the order first met. A call is a slot in columns, not an object: a
 * 1 GB session has about 50,000, each an object, its usage as a second one and an entry in a map
 * of its own (about 200 bytes); here about 70 bytes (the usage as the five numbers
 * `anthropicUsage` reads, which give the same Usage back; the model by its number in a list).
 */
export class SessionSpend {
  private count = 0;
  /** Each call's slot + 1 by its key's number (0: none yet). */
  private slotOfKey = new Int32Array(FIRST_CAPACITY);
  private keyAt = new Int32Array(FIRST_CAPACITY);
  private lineAt = new Int32Array(FIRST_CAPACITY);
  /** The call's file and cause, by its place in `sites`. */
  private siteAt = new Int32Array(FIRST_CAPACITY);
  private flagsAt = new Uint8Array(FIRST_CAPACITY);
  /** The model by its place in `models`, or -1 for none. */
  private modelAt = new Int32Array(FIRST_CAPACITY);
  private counts = new Float64Array(COUNTS * FIRST_CAPACITY);
  private readonly timestamps: (string | null)[] = [];
  private readonly sites: { readonly file: string; readonly cause: SpendCause | null }[] = [];
  private readonly models: string[] = [];
  private readonly modelIds = new Map<string, number>();

  constructor(private readonly keys: CallKeys) {}

  add(billed: BilledLine, site: CallSite): void {
    const key = this.keys.add(callKey(billed.responseKey, site.file, site.line));
    if (key >= this.slotOfKey.length) this.slotOfKey = grown(this.slotOfKey, Math.max(2 * this.slotOfKey.length, key + 1));
    const known = this.slotOfKey[key]! - 1;
    if (known >= 0) this.merge(known, billed);
    else this.slotOfKey[key] = this.newCall(key, billed, site) + 1;
  }

  private newCall(key: number, billed: BilledLine, site: CallSite): number {
    const slot = this.count++;
    if (slot === this.keyAt.length) {
      const length = 2 * slot;
      this.keyAt = grown(this.keyAt, length);
      this.lineAt = grown(this.lineAt, length);
      this.siteAt = grown(this.siteAt, length);
      this.flagsAt = grown(this.flagsAt, length);
      this.modelAt = grown(this.modelAt, length);
      this.counts = grown(this.counts, COUNTS * length);
    }
    this.keyAt[slot] = key;
    this.lineAt[slot] = site.line;
    this.siteAt[slot] = this.siteOf(site);
    this.flagsAt[slot] = (site.sidechain ? SIDECHAIN : 0) | (billed.final ? FINAL : 0) | (billed.copiedFrom !== null ? COPIED : 0) | (billed.responseKey !== null ? RESPONSE : 0);
    this.modelAt[slot] = this.modelOf(billed.model);
    this.timestamps.push(billed.timestamp);
    if (billed.usage) this.setUsage(slot, billed.usage);
    return slot;
  }

  /** A later line of the call: mergeUsage's rule, on the columns. */
  private merge(slot: number, billed: BilledLine): void {
    const flags = this.flagsAt[slot]!;
    if ((flags & FINAL) !== 0) return;
    if (replacesUsage((flags & USAGE) !== 0 ? this.counts[COUNTS * slot + OUTPUT]! : 0, billed)) this.setUsage(slot, billed.usage!);
    this.flagsAt[slot] = billed.final ? this.flagsAt[slot]! | FINAL : this.flagsAt[slot]! & ~FINAL;
    if (this.modelAt[slot] === -1) this.modelAt[slot] = this.modelOf(billed.model);
  }

  private setUsage(slot: number, usage: AnthropicUsage): void {
    const { input, output, cacheRead, cacheWrite, cacheWrite1h } = anthropicUsage(usage);
    const at = COUNTS * slot;
    this.counts[at + INPUT] = input;
    this.counts[at + OUTPUT] = output;
    this.counts[at + CACHE_READ] = cacheRead;
    this.counts[at + CACHE_WRITE] = cacheWrite;
    this.counts[at + CACHE_WRITE_1H] = cacheWrite1h ?? 0;
    this.flagsAt[slot] = ((this.flagsAt[slot]! | USAGE) & ~ONE_HOUR) | (cacheWrite1h !== undefined ? ONE_HOUR : 0);
  }

  /** The usage a call keeps, as the line would have given it: the four counts and the one-hour part. */
  private keptUsage(slot: number): AnthropicUsage {
    const at = COUNTS * slot;
    const counts = {
      input_tokens: this.counts[at + INPUT]!,
      output_tokens: this.counts[at + OUTPUT]!,
      cache_read_input_tokens: this.counts[at + CACHE_READ]!,
      cache_creation_input_tokens: this.counts[at + CACHE_WRITE]!,
    };
    return (this.flagsAt[slot]! & ONE_HOUR) === 0 ? counts : { ...counts, cache_creation: { ephemeral_1h_input_tokens: this.counts[at + CACHE_WRITE_1H]! } };
  }

  private siteOf({ file, cause }: CallSite): number {
    const last = this.sites.length - 1;
    if (last >= 0 && this.sites[last]!.file === file && this.sites[last]!.cause === cause) return last;
    return this.sites.push({ file, cause }) - 1;
  }

  private modelOf(model: string | null): number {
    if (model === null) return -1;
    let id = this.modelIds.get(model);
    if (id === undefined) {
      id = this.models.push(model) - 1;
      this.modelIds.set(model, id);
    }
    return id;
  }

  /**
   * The calls that are not messages of the context (`inContext`, by their key's number), with
   * their cause: a subagent transcript's own, else `ownCause` of the line's side in the session's
   * file. Copies of another session's calls are left out: that session was billed for them.
   */
  offContext(inContext: (key: number) => boolean, ownCause: (sidechain: boolean) => SpendCause): OffContextCall[] {
    const off: OffContextCall[] = [];
    for (let slot = 0; slot < this.count; slot++) {
      const flags = this.flagsAt[slot]!;
      const key = this.keyAt[slot]!;
      if (inContext(key) || (flags & USAGE) === 0 || (flags & COPIED) !== 0) continue;
      const usage = nonZeroUsage(anthropicUsage(this.keptUsage(slot)));
      if (!usage) continue;
      const { file, cause } = this.sites[this.siteAt[slot]!]!;
      const modelId = this.modelAt[slot]!;
      const model = modelId < 0 ? null : this.models[modelId]!;
      const timestamp = this.timestamps[slot]!;
      off.push({
        cause: cause ?? ownCause((flags & SIDECHAIN) !== 0),
        usage,
        file,
        line: this.lineAt[slot]!,
        ...(model ? { model } : {}),
        ...(timestamp ? { timestamp } : {}),
        ...((flags & RESPONSE) !== 0 ? { callKey: callKeyOf(this.keys.key(key), timestamp) } : {}),
      });
    }
    return off;
  }
}
