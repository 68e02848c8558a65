/**
 * Flags shared by every command, normalized and validated in one place; the settings that may
 * also come from COMPACTOR_* variables and the config file are resolved here (runSettings), from
 * the one table in config/settings.ts.
 */
import type { Argv } from 'yargs';
import type { PolicyValues } from '../config/policy.js';
import { resolvePolicy } from '../config/policy.js';
import type { SettingArgs, SettingsCommand, SettingsKey } from '../config/settings.js';
import { defaultOf, flagName, flagOption, renamedFlag, settingsOf, SOURCED_KEYS, takesSetting } from '../config/settings.js';
import { logMessage } from '../pipeline/log.js';
import type { SettingsSources } from '../config/sources.js';
import { loadSettingsSources, pick } from '../config/sources.js';
import { UsageError } from '../errors.js';
import { FORMAT_NAMES } from '../formats/index.js';
import { STDIN } from '../formats/json/input-source.js';
import { stdinIsPiped } from '../pipeline/inputs.js';
import type { StrategyName } from '../strategies/names.js';
import type { TokenizerName } from '../tokens/tokenizers.js';
import type { Jobs } from '../pipeline/sessions.js';
import { parseJobs } from '../pipeline/sessions.js';
import type { StrategyOptions } from '../strategies/index.js';

/** The flags of withInputs; `--tokenizer` is the settings table's. */
export type CommonArgs = {
  inputs: string[];
  format: string;
  json: boolean;
  strict: boolean;
  jobs: string;
  shard?: string;
} & SettingArgs<'tokenizer' | 'agent' | 'since' | 'until' | 'timezone' | 'project', SettingsCommand>;

/** `--strict`, on every command: any warning fails its session (exit 1). README "Bad input". */
export const STRICT_OPTION = {
  describe: 'treat warnings (skipped lines, repaired ids or numbers, stale sidecars…) as failures',
  type: 'boolean',
  default: false,
} as const;

/** The policy block of flags, in the order --help shows them; each is the settings table's. */
const POLICY_FLAGS = ['config', 'context_limit', 'reserve', 'keep_recent', 'trigger_percent', 'force', 'cut_rule'] as const satisfies readonly SettingsKey[];

export type PolicyArgs = SettingArgs<(typeof POLICY_FLAGS)[number], SettingsCommand>;

/** A setting's flag on a command, as yargs' `.option(name, declaration)` takes it: `.option(...settingFlag('strategy', 'compact'))`. */
export function settingFlag(key: SettingsKey, command?: SettingsCommand) {
  return [flagName(key, command), flagOption(key, command)] as const;
}

/**
 * A setting's old flag spelling on `command` (the table's `renamedFrom`): still read, hidden from
 * --help, and a warning says what it is now called; the new spelling wins when both are given.
 */
export function withRenamedFlag<T>(yargs: Argv<T>, key: SettingsKey, command: SettingsCommand): Argv<T> {
  const old = renamedFlag(key, command);
  if (old === undefined) return yargs;
  const now = flagName(key, command);
  return yargs.option(old, { type: 'string', hidden: true }).middleware((args: Record<string, unknown>) => {
    if (args[old] === undefined) return;
    logMessage('warning', `--${old} on ${command} is deprecated (it names the summarizer on compact and fork); use --${now}`);
    args[now] ??= args[old];
  }, true);
}

/**
 * The table's settings `keys` as flags of `command`, in the order given (those the command takes).
 * yargs cannot type a flag whose name it is handed as a string, so the flags are typed from the
 * table (SettingArgs), here, once.
 */
export function withSettings<T, K extends SettingsKey, C extends SettingsCommand = SettingsCommand>(yargs: Argv<T>, keys: readonly K[], command?: C): Argv<T & SettingArgs<K, C>> {
  const built = keys.filter((key) => command === undefined || takesSetting(key, command)).reduce((argv, key) => argv.option(...settingFlag(key, command)), yargs);
  return built as Argv<T & SettingArgs<K, C>>;
}

/**
 * The sessions a command reads: `[inputs..]` in its command string, so that names after `--`
 * (`compact -- --odd.jsonl`) count too. None named: stdin when it is a pipe or a redirected file
 * (`-`), else the agents' folders on the commands that read many (pipeline/locations.ts); the
 * others need at least one.
 */
export function withInputs<T>(yargs: Argv<T>, command: SettingsCommand): Argv<T & CommonArgs> {
  const many = takesSetting('agent', command);
  const inputs = many
    ? "session files, directories, globs or session ids; - reads one session from stdin; none: the agents' folders"
    : 'session files, directories, globs or session ids; - reads one session from stdin';
  const built = yargs
    .positional('inputs', { describe: inputs, type: 'string', array: true })
    .middleware(takeNamesAfterDoubleDash('inputs'), true)
    .middleware(readPipedStdinWhenUnnamed('inputs'), true)
    .check((args) => {
      if (many || (args['inputs'] as string[] | undefined)?.length) return true;
      // fork writes a session beside the one it reads, so it takes no stdin (hardening: fork -).
      throw new UsageError(`name at least one session file, directory or glob${command === 'fork' ? '' : ' (or - for stdin)'}`);
    })
    .option('format', { describe: 'session format', choices: FORMAT_NAMES as string[], default: 'auto' })
    .option('json', { describe: 'print NDJSON, one object per session', type: 'boolean', default: false })
    .option('strict', STRICT_OPTION)
    .option(flagName('tokenizer'), flagOption('tokenizer'))
    .option('jobs', { describe: 'threads for many sessions: a number, or auto (one per core when it pays)', type: 'string', default: 'auto' })
    .option('shard', { describe: 'take only shard K of N of the sessions (K/N, 1-based), or auto (README "Sharding")', type: 'string' });
  // `inputs` is never left undefined: the middleware above fills it (names after `--`, piped stdin).
  return withSettings(built, SELECTION_FLAGS, command) as Argv<T & CommonArgs>;
}

/** No session named and stdin a pipe (or a redirected file): the session is stdin, `-`. */
function readPipedStdinWhenUnnamed(key: string) {
  return (args: Record<string, unknown>): void => {
    const given = args[key];
    if ((given === undefined || (Array.isArray(given) && given.length === 0)) && stdinIsPiped()) args[key] = [STDIN];
  };
}

/** Where sessions are looked for and which are kept (docs/guarantees.md "Default locations", "Filters"): the settings table's, on the commands that read many. */
const SELECTION_FLAGS = ['agent', 'since', 'until', 'timezone', 'project'] as const satisfies readonly SettingsKey[];

export type SelectionArgs = SettingArgs<(typeof SELECTION_FLAGS)[number], SettingsCommand>;

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
const COMMAND_LIST_KEYS: Readonly<Record<string, readonly string[]>> = { audit: ['strategy'], report: ['files'] };

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
  return parseJobs(args.jobs);
}

/** audit's `--max-summary-tokens`: the size budget of the strategies it simulates, a flag only there. */
export type SummaryBudgetArgs = SettingArgs<'max_summary_tokens', 'audit'>;

export function withSummaryBudget<T>(yargs: Argv<T>) {
  return withSettings(yargs, ['max_summary_tokens'], 'audit');
}

/**
 * The policy flags, from the settings table (config/settings.ts): no yargs defaults but the
 * flag-only ones', so an unset flag falls through to COMPACTOR_* variables and the config file.
 */
export function withPolicy<T>(yargs: Argv<T>) {
  return withSettings(yargs, POLICY_FLAGS);
}

/** `--allow-no-gain`, on the commands that run compactions (compact, replay, fork). */
export function withAllowNoGain<T>(yargs: Argv<T>) {
  return withSettings(yargs, ['allow_no_gain']);
}

export function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || !Number.isInteger(value) || value < min) {
    throw new UsageError(`--${name} must be a whole number >= ${min}, got ${String(value)}`);
  }
  return value;
}

/** Every setting a run reads, resolved once: flags > COMPACTOR_* variables > config file > the table's defaults. */
export interface RunSettings {
  readonly sources: SettingsSources;
  /** Plain data, by the table's names: it crosses to worker threads as it is. */
  readonly policy: PolicyValues;
  readonly tokenizer: TokenizerName;
  /** Undefined when no source sets it or the command takes no strategy setting: each command has its own default. */
  readonly strategy: StrategyName | undefined;
  /** The relevance filter (compaction/relevance.ts) on the span a strategy summarizes; on unless switched off. */
  readonly relevance: boolean;
}

/**
 * Reads and validates every setting the command takes, up front, before any session is read: a
 * bad flag is a usage error (exit 2), a bad variable or config value one line naming it (exit 1).
 * The summarizer's settings are read where a summarizer runs (the commands that take `model`).
 */
export async function runSettings(args: CommonArgs & PolicyArgs & { readonly 'allow-no-gain'?: boolean }, command: SettingsCommand): Promise<RunSettings> {
  const flagOf = (key: SettingsKey) => flagName(key, command);
  const summarizer: readonly SettingsKey[] = takesSetting('model', command) ? [] : settingsOf('summarizer');
  const keys = SOURCED_KEYS.filter((key) => takesSetting(key, command) && !summarizer.includes(key));
  const given = new Map<string, unknown>(Object.entries(args));
  const flags = Object.fromEntries(keys.map((key) => [key, given.get(flagOf(key))]));
  const sources = await loadSettingsSources(flags, args.config, process.env, flagOf);
  return {
    sources,
    policy: resolvePolicy(sources, { force: args.force, allow_no_gain: args['allow-no-gain'] }),
    tokenizer: pick(sources, 'tokenizer') ?? defaultOf('tokenizer'),
    strategy: takesSetting('strategy', command) ? pick(sources, 'strategy') : undefined,
    relevance: takesSetting('relevance', command) ? (pick(sources, 'relevance') ?? defaultOf('relevance')) : defaultOf('relevance'),
  };
}

export function strategyOptionsFromArgs(args: SummaryBudgetArgs): StrategyOptions {
  const max = args['max-summary-tokens'];
  return max === undefined ? {} : { maxSummaryTokens: wholeNumber('max-summary-tokens', max, 1) };
}


