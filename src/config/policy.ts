/**
 * The compaction policy's settings, from the settings table (settings.ts): resolved once per run
 * from every source (flags > COMPACTOR_* variables > config file > the table's defaults) into
 * plain data that crosses to worker threads as it is, then made a CompactionPolicy at each
 * session's window (policyFor), and echoed by `--json` under the table's names (policyJson).
 * Pure but for sessionPolicy, which asks pricing/ for a session's window (the catalog); reading
 * the sources is sources.ts's, what a policy does is compaction/policy.ts's.
 */
import type { CompactionPolicy } from '../compaction/policy.js';
import { DEFAULT_CONTEXT_LIMIT } from '../compaction/policy.js';
import type { ContextWindow } from '../pricing/window.js';
import { sessionWindow } from '../pricing/window.js';
import type { AnyMessage, Session } from '../session/model.js';
import type { Amount, GroupKey, ResolvedValue, SettingsLayer, SourcedKey } from './settings.js';
import { defaultOf, echoOf, settingsOf, SOURCED_KEYS, yieldsTo } from './settings.js';
import type { SettingsSources } from './sources.js';
import { pick } from './sources.js';

export type PolicyKey = GroupKey<'policy'>;
export const POLICY_KEYS = settingsOf('policy');

/** The policy settings of a run, by the table's names; sizes may still be shares of the window. */
export type PolicyValues = { readonly [K in PolicyKey]: ResolvedValue<K> };

/** Every policy setting at its default. */
export const DEFAULT_POLICY_VALUES = Object.fromEntries(POLICY_KEYS.map((key) => [key, defaultOf(key)])) as PolicyValues;

/** The flag-only policy settings (`--force`, `--allow-no-gain`), as their flags gave them. */
export type FlagOnlyPolicy = { readonly [K in Exclude<PolicyKey, SourcedKey>]?: boolean };

/**
 * The policy settings from every source. A setting that yields to another is one choice with
 * it (reserve and trigger_percent: the trigger): the first source that sets either decides, the
 * other winning within it, so a `--reserve` is not overridden by a `trigger_percent` in the file.
 */
export function resolvePolicy(sources: SettingsSources, flagOnly: FlagOnlyPolicy): PolicyValues {
  const values: Record<string, unknown> = {};
  const sourced = (key: PolicyKey): key is Extract<PolicyKey, SourcedKey> => (SOURCED_KEYS as readonly string[]).includes(key);
  for (const key of POLICY_KEYS) values[key] = (sourced(key) ? pick(sources, key) : flagOnly[key as keyof FlagOnlyPolicy]) ?? defaultOf(key);
  const layers: readonly SettingsLayer[] = [sources.flags, sources.env, sources.file];
  for (const key of POLICY_KEYS) {
    const over = yieldsTo(key) as PolicyKey | undefined;
    if (!over || !sourced(key) || !sourced(over)) continue;
    const deciding = layers.find((layer) => layer[key] !== undefined || layer[over] !== undefined);
    values[over] = deciding?.[over] ?? defaultOf(over);
    values[key] = (deciding?.[over] === undefined ? deciding?.[key] : undefined) ?? defaultOf(key);
  }
  return values as PolicyValues;
}

/** Tokens of an amount in a window: a share is rounded down. */
export function amountIn(amount: Amount, window: number): number {
  return 'tokens' in amount ? amount.tokens : Math.floor((window * amount.percent) / 100);
}

/** The policy for one session: `window` is the one it ran with (pricing/window.ts), unless the settings fix it. */
export function policyFor(values: PolicyValues, window = DEFAULT_CONTEXT_LIMIT): CompactionPolicy {
  const contextLimit = values.context_limit ?? window;
  return {
    contextLimit,
    keepRecentTokens: amountIn(values.keep_recent, contextLimit),
    force: values.force,
    cutRule: values.cut_rule,
    ...(values.allow_no_gain ? { allowNoGain: true } : {}),
    trigger:
      values.trigger_percent !== null
        ? { kind: 'percent', percent: values.trigger_percent }
        : { kind: 'reserve', tokens: amountIn(values.reserve, contextLimit) },
  };
}

/**
 * The policy a session is planned with: the settings, taken at each session's own window
 * (pricing/window.ts) unless they name one; or one policy at one window for every session.
 */
export type PolicyChoice =
  | { readonly kind: 'settings'; readonly values: PolicyValues }
  | { readonly kind: 'fixed'; readonly policy: CompactionPolicy; readonly window: ContextWindow };

/** The policy for a session once it is read, and the window it was taken at. */
export async function sessionPolicy(choice: PolicyChoice, session: Session<AnyMessage>): Promise<{ readonly policy: CompactionPolicy; readonly window: ContextWindow }> {
  if (choice.kind === 'fixed') return { policy: choice.policy, window: choice.window };
  const window = await sessionWindow(session, { flag: choice.values.context_limit ?? undefined });
  return { policy: policyFor(choice.values, window.tokens), window };
}

/**
 * The policy as `--json` reports it: each policy setting in force under its echo name, in the
 * table's order, a setting that yields to another in that one's place (the trigger once, as
 * reserve_tokens or trigger_percent); then `allow_thrash`, which no setting gives (only replay's
 * presets turn that guard off).
 */
export function policyJson(policy: CompactionPolicy): Record<string, unknown> {
  const echoed = (key: PolicyKey) => {
    const echo = echoOf(key);
    const value = echo?.of(policy);
    return echo && value !== undefined ? [[echo.name, value] as const] : [];
  };
  const fields = POLICY_KEYS.filter((key) => !yieldsTo(key)).flatMap((key) => [
    ...echoed(key),
    ...POLICY_KEYS.filter((other) => yieldsTo(other) === key).flatMap(echoed),
  ]);
  return { ...Object.fromEntries(fields), allow_thrash: policy.allowThrash ?? false };
}
