/**
 * When to compact and how much to keep. Pure; every default lives in DEFAULT_POLICY.
 */

/** Trigger either at a reserve below the limit (the `coop` rule) or at a share of it (the `opal` rule). */
export type Trigger = { readonly kind: 'reserve'; readonly tokens: number } | { readonly kind: 'percent'; readonly percent: number };

/**
 * Which messages may start the kept part. `conservative`: user messages that start a
 * turn and assistant messages without tool requests. `tool-safe` (pi's): any message
 * but a tool result, which still never separates a call from its result (the call is kept too).
 */
export type CutRule = 'conservative' | 'tool-safe';
export const CUT_RULES: readonly CutRule[] = ['conservative', 'tool-safe'];

export interface CompactionPolicy {
  readonly contextLimit: number;
  readonly trigger: Trigger;
  /** Recent tokens kept verbatim. */
  readonly keepRecentTokens: number;
  /** Compact even under the trigger, taking the earliest valid cut when the keep budget gives none. */
  readonly force: boolean;
  readonly cutRule: CutRule;
  /**
   * Write a compaction that does not pay (compactionPays: it takes less than MIN_GAIN_PERCENT of
   * the context off). Unset: it is skipped (`no-gain`). `--allow-no-gain` sets it, and the replay presets, which replay other agents as
   * they behave.
   */
  readonly allowNoGain?: boolean;
  /**
   * Write a compaction that leaves the context over the trigger, so the next check compacts again.
   * Unset: a later cut is taken, or none (`would-thrash`). Only the replay presets set it.
   */
  readonly allowThrash?: boolean;
}

/** An unknown model gets a 128k window; reserve and keep are the `coop` preset's. */
export const DEFAULT_CONTEXT_LIMIT = 128_000;
export const DEFAULT_RESERVE_TOKENS = 30_000;
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000;
/** Split-turn prefixes shorter than this are summarized with the history (the split-turn rule). */
export const MIN_TURN_PREFIX_MESSAGES = 5;
/** Force with no valid cut keeps this many messages (the force fallback). */
export const FORCE_KEEP_MESSAGES = 2;
/** Overflow recovery (the emergency compaction) keeps limit / 5. */
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

/**
 * A compaction pays when it takes at least this share of the context off: below it, what the
 * summary loses and the prompt cache it rewrites are not worth the room it frees.
 */
export const MIN_GAIN_PERCENT = 1;

/** Does a compaction from `before` to `after` tokens pay (MIN_GAIN_PERCENT)? */
export function compactionPays(before: number, after: number): boolean {
  return after < before && before - after >= (before * MIN_GAIN_PERCENT) / 100;
}

/** The largest context that does not trigger a compaction; null when every context does (a reserve at or above the limit). */
export function triggerCeiling(policy: CompactionPolicy): number | null {
  const { contextLimit, trigger } = policy;
  if (trigger.kind === 'percent') return Math.max(0, triggerThreshold(policy) - 1);
  return trigger.tokens >= contextLimit ? null : triggerThreshold(policy);
}

/**
 * Tokens a compaction of a context this size must take off to get under the trigger: 0 when it
 * is already under, when every context triggers, or when the policy allows thrash.
 */
export function tokensOverTrigger(contextTokens: number, policy: CompactionPolicy): number {
  const ceiling = policy.allowThrash ? null : triggerCeiling(policy);
  return ceiling === null ? 0 : Math.max(0, contextTokens - ceiling);
}

/**
 * The policy used when a provider call would overflow the window: keep limit / 5, forced, and
 * what must be reached is the window itself rather than the trigger.
 */
export function emergencyPolicy(policy: CompactionPolicy): CompactionPolicy {
  return {
    ...policy,
    keepRecentTokens: Math.floor(policy.contextLimit / EMERGENCY_KEEP_DIVISOR),
    force: true,
    trigger: { kind: 'reserve', tokens: 0 },
  };
}
