/**
 * Flags shared by every command, normalized and validated in one place; the settings that may
 * also come from COMPACTOR_* variables and the config file are resolved here (runSettings), from
 * the one table in config/settings.ts.
 */
import type { Argv } from 'yargs';
import type { CompactionPolicy, CutRule } from '../compaction/policy.js';
import { DEFAULT_CONTEXT_LIMIT, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_POLICY, DEFAULT_RESERVE_TOKENS, MIN_GAIN_PERCENT, triggerCeiling } from '../compaction/policy.js';
import type { Refusal } from '../compaction/compact.js';
import type { Amount, SettingsKey } from '../config/settings.js';
import { flagName, flagOption, settingsOf } from '../config/settings.js';
import type { SettingsSources } from '../config/sources.js';
import { loadSettingsSources, pick } from '../config/sources.js';
import { UsageError } from '../errors.js';
import { FORMAT_NAMES } from '../formats/index.js';
import { STDIN } from '../formats/input-source.js';
import { formatTokens } from '../report/format.js';
import type { StrategyName } from '../strategies/names.js';
import type { TokenizerName } from '../tokens/tokenizers.js';
import type { Jobs } from '../pipeline/sessions.js';
import type { StrategyOptions } from '../strategies/index.js';

export interface CommonArgs {
  inputs: string[];
  format: string;
  json: boolean;
  strict: boolean;
  jobs: string;
  shard?: string;
  /** Only the flag: COMPACTOR_TOKENIZER and the config file may also set it (RunSettings.tokenizer). */
  tokenizer?: TokenizerName;
}

/** `--strict`, on every command: any warning fails its session (exit 1). README "Bad input". */
export const STRICT_OPTION = {
  describe: 'treat warnings (skipped lines, repaired ids or numbers, stale sidecars…) as failures',
  type: 'boolean',
  default: false,
} as const;

export interface PolicyArgs {
  /** The config file (README "Configuration"); policy and summarizer settings alike. */
  config?: string;
  /** Undefined unless given: the window the session ran with is the default (README). */
  'context-limit'?: number;
  /** Tokens, or `N%` of the window. */
  reserve?: string;
  'keep-recent'?: string;
  'trigger-percent'?: number;
  force: boolean;
  'cut-rule'?: CutRule;
}

/**
 * The sessions a command reads: `[inputs..]` in its command string, so that names after `--`
 * (`compact -- --odd.jsonl`) count too; at least one is required.
 */
export function withInputs<T>(yargs: Argv<T>) {
  return yargs
    .positional('inputs', { describe: 'session files, directories or globs; - reads one session from stdin', type: 'string', array: true })
    .middleware(takeNamesAfterDoubleDash('inputs'), true)
    .check((args) => {
      if ((args['inputs'] as string[] | undefined)?.length) return true;
      throw new UsageError('name at least one session file, directory or glob (or - for stdin)');
    })
    .option('format', { describe: 'session format', choices: FORMAT_NAMES as string[], default: 'auto' })
    .option('json', { describe: 'print NDJSON, one object per session', type: 'boolean', default: false })
    .option('strict', STRICT_OPTION)
    .option('tokenizer', flagOption('tokenizer'))
    .option('jobs', { describe: 'threads for many sessions: a number, or auto (one per core when it pays)', type: 'string', default: 'auto' })
    .option('shard', { describe: 'take only shard K of N of the sessions (K/N, 1-based), or auto (README "Sharding")', type: 'string' });
}

/**
 * yargs leaves what follows `--` out of the positionals (it lands in `--` with `populate--`):
 * those names are sessions too, however they look (`--help.jsonl`, `-x.jsonl`, `-`).
 */
export function takeNamesAfterDoubleDash(key: string) {
  return (args: Record<string, unknown>): void => {
    const rest = (args['--'] as unknown[] | undefined)?.map(String) ?? [];
    delete args['--'];
    if (rest.length === 0) return;
    const given = args[key];
    args[key] = Array.isArray(given) ? [...given.map(String), ...rest] : given === undefined ? (rest.length === 1 ? rest[0] : rest) : [String(given), ...rest];
  };
}

/** Keys that hold a list by design; any other flag given twice keeps its last value. */
const LIST_KEYS = new Set(['_', '--', '$0', 'inputs']);
/** Flags of one command that add up when repeated (`audit --strategy extract --strategy truncate`). */
const COMMAND_LIST_KEYS: Readonly<Record<string, readonly string[]>> = { audit: ['strategy'] };

/** The value a flag was last given in `tokens` (`--name value` or `--name=value`), if it was. */
function givenValue(tokens: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--') break;
    if (token === `--${name}`) value = tokens[i + 1];
    else if (token.startsWith(`--${name}=`)) value = token.slice(name.length + 3);
  }
  return value;
}

/**
 * What yargs parsed, normalized before it validates: a flag given twice keeps its last value
 * (`--reserve 5 --reserve 6` is 6, as yargs users expect; yargs itself makes an array of them),
 * and a number flag given something else names the flag and what it got (yargs makes it NaN).
 */
export function normalizeArgs(tokens: readonly string[]) {
  return (args: Record<string, unknown>): void => {
    restoreStdin(tokens, args);
    const lists = COMMAND_LIST_KEYS[String((args['_'] as unknown[] | undefined)?.[0])] ?? [];
    for (const [key, value] of Object.entries(args)) {
      if (!LIST_KEYS.has(key) && !lists.includes(key) && Array.isArray(value)) args[key] = value.at(-1);
    }
    for (const [key, value] of Object.entries(args)) {
      // yargs also sets the camelCase twin of every dashed flag: the dashed one is what was typed.
      if (typeof value !== 'number' || !Number.isNaN(value) || /[A-Z]/.test(key)) continue;
      const given = givenValue(tokens, key);
      throw new UsageError(`--${key} must be a number, got ${given === undefined ? 'nothing' : JSON.stringify(given)}`);
    }
  };
}

/**
 * yargs drops a bare `-` from the positionals (`compactor inspect -`); it names stdin, so it is
 * put back among the sessions, unless a flag took it as its value.
 */
function restoreStdin(tokens: readonly string[], args: Record<string, unknown>): void {
  const end = tokens.indexOf('--');
  if (!(end < 0 ? tokens : tokens.slice(0, end)).includes(STDIN)) return;
  const key = (args['_'] as unknown[] | undefined)?.[0] === 'context' ? 'session' : 'inputs';
  const given = args[key];
  const names = given === undefined ? [] : Array.isArray(given) ? given.map(String) : [String(given)];
  if (names.includes(STDIN) || Object.entries(args).some(([name, value]) => name !== key && value === STDIN)) return;
  args[key] = key === 'session' && names.length === 0 ? STDIN : [...names, STDIN];
}

/**
 * yargs's messages for a value outside a flag's choices (`Invalid values:` and one line per flag)
 * as one line per flag that names it and the choices; any other message as it is.
 */
export function usageMessage(message: string): string {
  if (!message.startsWith('Invalid values:')) return message;
  const flags = [...message.matchAll(/Argument: (\S+), Given: (.*?), Choices: (.*)$/gm)].map(([, flag, given, choices]) => {
    const names = choices!.split(', ').map((choice) => choice.replace(/^"(.*)"$/, '$1'));
    return `--${flag} must be one of ${names.join(', ')}, got ${given}`;
  });
  return flags.length > 0 ? flags.join('; ') : message;
}

export function jobsFromArgs(args: Pick<CommonArgs, 'jobs'>): Jobs {
  if (args.jobs === 'auto') return 'auto';
  const jobs = Number(args.jobs);
  if (!/^\d+$/.test(args.jobs) || jobs < 1) throw new UsageError(`--jobs must be auto or a whole number >= 1, got ${JSON.stringify(args.jobs)}`);
  return jobs;
}

export interface SummaryBudgetArgs {
  'max-summary-tokens'?: number;
}

export function withSummaryBudget<T>(yargs: Argv<T>) {
  return yargs.option('max-summary-tokens', { describe: 'size budget of a summary, in tokens (extract: 12,000)', type: 'number' });
}

/**
 * The policy flags, derived from the settings table (config/settings.ts): no yargs defaults, so an
 * unset flag falls through to COMPACTOR_* variables and the config file. `--force` is a flag only.
 */
export function withPolicy<T>(yargs: Argv<T>) {
  return yargs
    .option('config', { describe: 'config file [default: $XDG_CONFIG_HOME/session-compactor/config.json]', type: 'string' })
    .option('context-limit', flagOption('context_limit'))
    .option('reserve', flagOption('reserve'))
    .option('keep-recent', flagOption('keep_recent'))
    .option('trigger-percent', flagOption('trigger_percent'))
    .option('force', { describe: 'compact even under the threshold, from the earliest valid cut when the keep budget gives none', type: 'boolean', default: false })
    .option('cut-rule', flagOption('cut_rule'));
}

/** `--allow-no-gain`, on the commands that run compactions (compact, replay). */
export function withAllowNoGain<T>(yargs: Argv<T>) {
  return yargs.option('allow-no-gain', {
    describe: `keep a compaction that takes less than ${MIN_GAIN_PERCENT}% of the context off (by default it is skipped as no-gain)`,
    type: 'boolean',
    default: false,
  });
}

export function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || !Number.isInteger(value) || value < min) {
    throw new UsageError(`--${name} must be a whole number >= ${min}, got ${String(value)}`);
  }
  return value;
}

/**
 * The policy settings of a run, from every source (plain data: it crosses to worker threads).
 * Sizes may be shares of the window, which is each session's own: policyFor resolves them.
 */
export interface PolicySettings {
  /** --context-limit / COMPACTOR_CONTEXT_LIMIT / context_limit; null: the window the session ran with. */
  readonly contextLimit: number | null;
  readonly trigger: { readonly kind: 'reserve'; readonly reserve: Amount } | { readonly kind: 'percent'; readonly percent: number };
  readonly keepRecent: Amount;
  readonly cutRule: CutRule;
  readonly force: boolean;
  readonly allowNoGain: boolean;
}

/**
 * Reserve and trigger percent are one choice, the trigger: the first source (flags, variables,
 * file) that sets either decides, the percent winning within it, so a `--reserve` is not
 * overridden by a `trigger_percent` in the config file.
 */
function triggerFrom(sources: SettingsSources): PolicySettings['trigger'] {
  for (const layer of [sources.flags, sources.env, sources.file]) {
    if (layer.trigger_percent !== undefined) return { kind: 'percent', percent: layer.trigger_percent };
    if (layer.reserve !== undefined) return { kind: 'reserve', reserve: layer.reserve };
  }
  return { kind: 'reserve', reserve: { tokens: DEFAULT_RESERVE_TOKENS } };
}

export function policySettings(sources: SettingsSources, flags: { readonly force?: boolean; readonly allowNoGain?: boolean } = {}): PolicySettings {
  return {
    contextLimit: pick(sources, 'context_limit') ?? null,
    trigger: triggerFrom(sources),
    keepRecent: pick(sources, 'keep_recent') ?? { tokens: DEFAULT_KEEP_RECENT_TOKENS },
    cutRule: pick(sources, 'cut_rule') ?? DEFAULT_POLICY.cutRule,
    force: flags.force ?? false,
    allowNoGain: flags.allowNoGain ?? false,
  };
}

/** Tokens of an amount in a window: a share is rounded down. */
export function amountIn(amount: Amount, window: number): number {
  return 'tokens' in amount ? amount.tokens : Math.floor((window * amount.percent) / 100);
}

/** The policy for one session: `window` is the one it ran with (pricing/window.ts), unless the settings fix it. */
export function policyFor(settings: PolicySettings, window = DEFAULT_CONTEXT_LIMIT): CompactionPolicy {
  const contextLimit = settings.contextLimit ?? window;
  const { trigger } = settings;
  return {
    contextLimit,
    keepRecentTokens: amountIn(settings.keepRecent, contextLimit),
    force: settings.force,
    cutRule: settings.cutRule,
    ...(settings.allowNoGain ? { allowNoGain: true } : {}),
    trigger: trigger.kind === 'percent' ? trigger : { kind: 'reserve', tokens: amountIn(trigger.reserve, contextLimit) },
  };
}

/** Which of the table's settings a command reads from its own flags. */
export interface SettingsScope {
  /** The command's --strategy is the strategy setting (compact, replay; audit's lists strategies to compare). */
  readonly strategy?: boolean;
  /** The command has the summarizer flags, and this one names its model (replay: --summarizer-model). */
  readonly summarizerModelFlag?: 'model' | 'summarizer-model';
}

/** Every setting a run reads, resolved once: flags > COMPACTOR_* variables > config file > defaults. */
export interface RunSettings {
  readonly sources: SettingsSources;
  readonly policy: PolicySettings;
  readonly tokenizer: TokenizerName;
  /** Undefined when no source sets it: each command has its own default. */
  readonly strategy: StrategyName | undefined;
}

/**
 * Reads and validates every setting up front, before any session is read: a bad flag is a usage
 * error (exit 2), a bad variable or config value one line naming it (exit 1).
 */
export async function runSettings(args: CommonArgs & PolicyArgs & { readonly 'allow-no-gain'?: boolean }, scope: SettingsScope = {}): Promise<RunSettings> {
  const modelFlag = scope.summarizerModelFlag;
  const flagOf = (key: SettingsKey) => (key === 'model' && modelFlag ? modelFlag : flagName(key));
  const keys = [...settingsOf('policy').filter((key) => key !== 'strategy' || scope.strategy), ...(modelFlag ? settingsOf('summarizer') : [])];
  const given = args as unknown as Readonly<Record<string, unknown>>;
  const flags = Object.fromEntries(keys.map((key) => [key, given[flagOf(key)]]));
  const sources = await loadSettingsSources(flags, args.config, process.env, flagOf);
  const allowNoGain = args['allow-no-gain'] === true;
  return {
    sources,
    policy: policySettings(sources, { force: args.force, allowNoGain }),
    tokenizer: pick(sources, 'tokenizer') ?? 'heuristic',
    strategy: scope.strategy ? pick(sources, 'strategy') : undefined,
  };
}

export function strategyOptionsFromArgs(args: SummaryBudgetArgs): StrategyOptions {
  const max = args['max-summary-tokens'];
  return max === undefined ? {} : { maxSummaryTokens: wholeNumber('max-summary-tokens', max, 1) };
}

/**
 * Why a compaction was not written, for compact's and estimate's records: it would not pay, or
 * no valid cut brings the context under the trigger. `after` is null when no cut was tried.
 */
export function refusalReason(kind: Refusal, before: number, after: number | null, policy: CompactionPolicy): string {
  const sizes = after === null ? `${formatTokens(before)} tokens` : `${formatTokens(before)} -> ${formatTokens(after)} tokens`;
  if (kind === 'no-gain') return `${sizes}: the compaction would not pay, taking less than ${MIN_GAIN_PERCENT}% of the context off (--allow-no-gain writes it)`;
  return `${sizes}: no valid cut brings the context under the trigger (${formatTokens(triggerCeiling(policy) ?? 0)} tokens)`;
}

