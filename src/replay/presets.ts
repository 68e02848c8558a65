/**
 * Replay policies: the compaction rules of peer agents, from their documented defaults, so one
 * replay can compare them side by side. Each preset is a partial set of our policy settings, by
 * the settings table's names (config/settings.ts), plus what our settings have no word for (when
 * the agent checks, what it carries, prunes and sends). Pure data; README "Policy presets" gives
 * each source. What a policy does to a session is left to src/replay/simulate.ts.
 */
import type { CompactionPolicy } from '../compaction/policy.js';
import type { PolicyValues } from '../config/policy.js';
import { DEFAULT_POLICY_VALUES, policyFor } from '../config/policy.js';
import type { FixedPlaceholderPrune } from '../compaction/prune.js';
import { OPENCODE_PRUNE } from '../compaction/prune.js';

/**
 * When the agent checks its context: before each user turn (pi, opal, coop), or before
 * every model call, mid-turn included (Codex, Claude Code, opencode).
 */
export type CheckPoint = 'turn-start' | 'every-call';

export interface ReplayPolicy {
  readonly name: string;
  readonly compaction: CompactionPolicy;
  readonly check: CheckPoint;
  /** Codex carries the user's own recent messages into the new history, up to this many tokens. */
  readonly carryUserTokens: number;
  /** opencode prunes old tool outputs at the end of every turn; null elsewhere. */
  readonly prune: FixedPlaceholderPrune | null;
  /**
   * The summarizer call the agent makes: `conversation` sends the conversation itself plus an
   * instruction (Codex, Claude Code, opencode), so the provider's cache serves the prompt;
   * `serialized` sends the span as text (pi, opal, coop), which no cache holds;
   * `strategy` (custom) is whatever --strategy reports, and nothing for an offline one.
   */
  readonly summarizerInput: 'conversation' | 'serialized' | 'strategy';
}

export const PRESET_NAMES = ['pi', 'codex', 'claude-code', 'opencode', 'opal', 'coop'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** The policy built from --reserve, --keep-recent, --trigger-percent, --cut-rule and --force. */
export const CUSTOM_POLICY_NAME = 'custom';

/** A preset's rule: the settings it gives (the table's defaults for the rest), and how the agent behaves besides. */
type PresetRules = Partial<Pick<PolicyValues, 'keep_recent' | 'reserve' | 'trigger_percent' | 'cut_rule'>> & Partial<Omit<ReplayPolicy, 'name' | 'compaction'>>;

function preset(name: PresetName, contextLimit: number, rules: PresetRules): ReplayPolicy {
  const { check, carryUserTokens, prune, summarizerInput, ...settings } = rules;
  // The agents write every compaction their rule asks for, paying or not: our guards are off.
  const values: PolicyValues = { ...DEFAULT_POLICY_VALUES, ...settings, force: false, allow_no_gain: true };
  return {
    name,
    compaction: { ...policyFor(values, contextLimit), allowThrash: true },
    check: check ?? 'turn-start',
    carryUserTokens: carryUserTokens ?? 0,
    prune: prune ?? null,
    summarizerInput: summarizerInput ?? 'serialized',
  };
}

/** Codex, Claude Code and opencode summarize everything, check before every call, and send the conversation itself. */
const SUMMARIZE_EVERYTHING = { keep_recent: { tokens: 0 }, cut_rule: 'tool-safe', check: 'every-call', summarizerInput: 'conversation' } as const;

/** A named preset for a model with this context window. */
export function presetPolicy(name: PresetName, contextLimit: number): ReplayPolicy {
  switch (name) {
    case 'pi':
      // DEFAULT_COMPACTION_SETTINGS: reserveTokens 16384, keepRecentTokens 20000; cuts anywhere but a tool result.
      return preset(name, contextLimit, { reserve: { tokens: 16_384 }, keep_recent: { tokens: 20_000 }, cut_rule: 'tool-safe' });
    case 'codex':
      // Auto-compacts at 90% of the window, mid-turn too; the new history is the summary plus the
      // user's recent messages (up to 20,000 tokens), nothing else verbatim.
      return preset(name, contextLimit, { ...SUMMARIZE_EVERYTHING, trigger_percent: 90, carryUserTokens: 20_000 });
    case 'claude-code':
      // Auto-compact leaves about 33,000 tokens of the window free and summarizes the whole conversation.
      return preset(name, contextLimit, { ...SUMMARIZE_EVERYTHING, reserve: { tokens: 33_000 } });
    case 'opencode':
      // Overflow when the prompt passes the window minus the output reserve (at most 32,000);
      // prunes old tool outputs after every turn; the summary replaces everything before it.
      return preset(name, contextLimit, { ...SUMMARIZE_EVERYTHING, reserve: { tokens: 32_000 }, prune: OPENCODE_PRUNE });
    case 'opal':
      // At 80% of the window, keep window / 4 (rounded down), cut at turn boundaries.
      return preset(name, contextLimit, { trigger_percent: 80, keep_recent: { percent: 25 }, cut_rule: 'conservative' });
    case 'coop':
      // Reserve 30,000, keep 20,000: our own defaults.
      return preset(name, contextLimit, { reserve: { tokens: 30_000 }, keep_recent: { tokens: 20_000 }, cut_rule: 'conservative' });
  }
}

/** The flag-built policy as a replay policy (checked at turn starts, like coop). */
export function customPolicy(compaction: CompactionPolicy): ReplayPolicy {
  return { name: CUSTOM_POLICY_NAME, compaction, check: 'turn-start', carryUserTokens: 0, prune: null, summarizerInput: 'strategy' };
}

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}
