/**
 * When to compact and how much to keep. Pure; every default lives in DEFAULT_POLICY.
 */

/** Trigger either at a reserve below the limit (seeds 002, 004) or at a share of it (seed 000). */
export type Trigger = { readonly kind: 'reserve'; readonly tokens: number } | { readonly kind: 'percent'; readonly percent: number };

/**
 * Which messages may start the kept part. `conservative` is seed 004: user messages that start a
 * turn and assistant messages without tool requests. `tool-safe` is seed 002 and pi: any message
 * but a tool result, which still never separates a call from its result (the call is kept too).
 */
export type CutRule = 'conservative' | 'tool-safe';
export const CUT_RULES: readonly CutRule[] = ['conservative', 'tool-safe'];

export interface CompactionPolicy {
  readonly contextLimit: number;
  readonly trigger: Trigger;
  /** Recent tokens kept verbatim. */
  readonly keepRecentTokens: number;
  /** Compact even under the trigger, and fall back to "all but the last 2" when no cut is valid. */
  readonly force: boolean;
  readonly cutRule: CutRule;
}

/** Seed 000 falls back to a 128k window for unknown models; seed 004 gives reserve and keep. */
export const DEFAULT_CONTEXT_LIMIT = 128_000;
export const DEFAULT_RESERVE_TOKENS = 30_000;
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000;
/** Split-turn prefixes shorter than this are summarized with the history (seed 000). */
export const MIN_TURN_PREFIX_MESSAGES = 5;
/** Force with no valid cut keeps this many messages (seed 000). */
export const FORCE_KEEP_MESSAGES = 2;
/** Overflow recovery keeps limit / 5 (seed 000). */
export const EMERGENCY_KEEP_DIVISOR = 5;

export const DEFAULT_POLICY: CompactionPolicy = {
  contextLimit: DEFAULT_CONTEXT_LIMIT,
  trigger: { kind: 'reserve', tokens: DEFAULT_RESERVE_TOKENS },
  keepRecentTokens: DEFAULT_KEEP_RECENT_TOKENS,
  force: false,
  cutRule: 'conservative',
};

/** The context size at which compaction starts. A reserve at or above the limit means 0: always. */
export function triggerThreshold(policy: CompactionPolicy): number {
  const { contextLimit, trigger } = policy;
  if (trigger.kind === 'percent') return Math.ceil((contextLimit * trigger.percent) / 100);
  return Math.max(0, contextLimit - trigger.tokens);
}

/** Should a context of this size be compacted? */
export function shouldCompact(contextTokens: number, policy: CompactionPolicy): boolean {
  if (policy.force) return true;
  const { trigger } = policy;
  if (trigger.kind === 'percent') return contextTokens >= triggerThreshold(policy);
  if (trigger.tokens >= policy.contextLimit) return true;
  return contextTokens > triggerThreshold(policy);
}

/** The policy used when a provider call would overflow the window (seed 000). */
export function emergencyPolicy(policy: CompactionPolicy): CompactionPolicy {
  return { ...policy, keepRecentTokens: Math.floor(policy.contextLimit / EMERGENCY_KEEP_DIVISOR), force: true };
}
