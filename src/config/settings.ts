/**
 * The settings table: every setting a user gives, defined once. An entry says who reads it, the
 * --help line, the default, how its value is checked (one zod schema for a flag, a COMPACTOR_*
 * variable and the config file alike; none for a flag-only setting), where its command differs
 * (the help line, the flag's name) and, for the policy, the name `--json` echoes it under.
 * Derived from it here: the flags' yargs declarations, the config file's schema, the variable
 * names, and the types of the parsed flags and of the resolved values. Pure; reading the file and
 * the environment is sources.ts's, the policy's resolution policy.ts's, the summarizer's summarizer.ts's.
 */
import * as z from 'zod';
import type { CompactionPolicy } from '../compaction/policy.js';
import { CUT_RULES, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, MIN_GAIN_PERCENT } from '../compaction/policy.js';
import { STRATEGY_NAMES } from '../strategies/names.js';
import { TOKENIZER_NAMES } from '../tokens/tokenizers.js';

export const ON_ERROR_CHOICES = ['fail', 'skip', 'truncate'] as const;
export type OnError = (typeof ON_ERROR_CHOICES)[number];

/** A size given in tokens, or as a share of the window the session ran with (`25%`). */
export type Amount = { readonly tokens: number } | { readonly percent: number };

/** The commands that take settings from the table (`context` takes none). */
export const SETTINGS_COMMANDS = ['estimate', 'inspect', 'compact', 'replay', 'fork', 'audit'] as const;
export type SettingsCommand = (typeof SETTINGS_COMMANDS)[number];

/** The commands that compact for real or in simulation, with a strategy and the summarizer. */
const COMPACTING = ['compact', 'replay', 'fork'] as const satisfies readonly SettingsCommand[];
export type CompactingCommand = (typeof COMPACTING)[number];

/** The commands that read many sessions: they take the agents' folders, the date and project filters. */
export const READING_MANY = ['estimate', 'inspect', 'compact', 'replay', 'audit'] as const satisfies readonly SettingsCommand[];

const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/** A whole number in [min, max], with one message whatever is wrong (NaN from a flag, a fraction, text). */
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.unknown().transform((value, context) => {
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    context.addIssue({ code: 'custom', message: `must be a whole number ${range}, got ${show(value)}` });
    return z.NEVER;
  });

/** Tokens (a whole number >= 0) or a percentage of the window, `0%` to `100%`. */
const amount = z.unknown().transform((value, context): Amount => {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER) return { tokens: value };
  const percent = typeof value === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value) : null;
  if (percent && Number(percent[1]) <= 100) return { percent: Number(percent[1]) };
  context.addIssue({ code: 'custom', message: `must be a whole number of tokens >= 0 or a percentage of the window (like 25%), got ${show(value)}` });
  return z.NEVER;
});

const percentOfWindow = z.unknown().transform((value, context) => {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= 100) return value;
  context.addIssue({ code: 'custom', message: `must be in (0, 100], got ${show(value)}` });
  return z.NEVER;
});

/** One entry of the table. */
interface SettingSpec {
  /** Who reads it: the compaction policy (config/policy.ts), the summarizer (config/summarizer.ts), or the run itself. */
  readonly group: 'policy' | 'summarizer' | 'run';
  /** The commands whose flags include it; every settings command when absent. */
  readonly on?: readonly SettingsCommand[];
  /** The flag's yargs type; a flag with choices and no type shows only its choices in --help. */
  readonly type?: 'number' | 'string' | 'boolean';
  readonly choices?: readonly string[];
  /** The --help line, before the default. */
  readonly doc: string;
  /** The help line where a command reads the setting its own way. */
  readonly docOn?: Partial<Record<SettingsCommand, string>>;
  /** The flag's name where a command's own flag has its usual one (`replay --summarizer-model`). */
  readonly flagOn?: Partial<Record<SettingsCommand, string>>;
  /** The value when no source gives one; undefined when each command decides. */
  readonly default: unknown;
  /** How --help shows the default, when not as the value itself; null: not shown. */
  readonly shownDefault?: string | null;
  /** Checks the value from every source. Without one, the setting is a flag only (no variable, no config key). */
  readonly schema?: z.ZodType;
  /** A string flag whose variable's text is a number when it reads as one (`COMPACTOR_RESERVE=30000`). */
  readonly numericText?: true;
  /** The field `--json` shows it under in a policy (inspect, audit, replay), read from the resolved policy. */
  readonly echo?: { readonly name: string; readonly of: (policy: CompactionPolicy) => unknown };
  /**
   * This setting is not in force when that one is set (the trigger is one choice: docs/policy.md);
   * `--json` shows the one in force in that one's place.
   */
  readonly yieldsTo?: string;
}

/**
 * The table. Its order is the order of the config keys in messages and of the fields of a policy
 * in `--json` (a setting that yields to another is shown in that one's place); each command's
 * flags are declared in the order its --help shows them (commands/options.ts). Help lines end
 * with the default, from `default`.
 */
export const SETTINGS = {
  // The compaction policy (docs/policy.md "Policy flags").
  context_limit: {
    group: 'policy',
    type: 'number',
    doc: 'model context window in tokens',
    default: null,
    shownDefault: 'the window the session ran with',
    schema: wholeNumber(1),
    echo: { name: 'context_limit', of: (policy) => policy.contextLimit },
  },
  reserve: {
    group: 'policy',
    type: 'string',
    doc: 'compact when context > limit - reserve: tokens, or N% of the window',
    default: { tokens: DEFAULT_RESERVE_TOKENS } as Amount,
    shownDefault: String(DEFAULT_RESERVE_TOKENS),
    schema: amount,
    numericText: true,
    yieldsTo: 'trigger_percent',
    echo: { name: 'reserve_tokens', of: (policy) => (policy.trigger.kind === 'reserve' ? policy.trigger.tokens : undefined) },
  },
  keep_recent: {
    group: 'policy',
    type: 'string',
    doc: 'recent tokens kept verbatim: tokens, or N% of the window',
    default: { tokens: DEFAULT_KEEP_RECENT_TOKENS } as Amount,
    shownDefault: String(DEFAULT_KEEP_RECENT_TOKENS),
    schema: amount,
    numericText: true,
    echo: { name: 'keep_recent_tokens', of: (policy) => policy.keepRecentTokens },
  },
  trigger_percent: {
    group: 'policy',
    type: 'number',
    doc: 'compact at >= P% of the window (instead of --reserve)',
    default: null,
    schema: percentOfWindow,
    echo: { name: 'trigger_percent', of: (policy) => (policy.trigger.kind === 'percent' ? policy.trigger.percent : undefined) },
  },
  force: {
    group: 'policy',
    type: 'boolean',
    doc: 'compact even under the threshold, from the earliest valid cut when the keep budget gives none',
    default: false,
    echo: { name: 'force', of: (policy) => policy.force },
  },
  cut_rule: {
    group: 'policy',
    type: 'string',
    choices: CUT_RULES,
    doc: 'where the kept part may start: conservative or tool-safe (any message but a tool result)',
    default: 'conservative',
    schema: z.enum(CUT_RULES),
    echo: { name: 'cut_rule', of: (policy) => policy.cutRule },
  },
  allow_no_gain: {
    group: 'policy',
    on: COMPACTING,
    type: 'boolean',
    doc: `keep a compaction (or write a fork) that takes less than ${MIN_GAIN_PERCENT}% of the context off (by default it is skipped as no-gain)`,
    default: false,
    echo: { name: 'allow_no_gain', of: (policy) => policy.allowNoGain ?? false },
  },
  // What the run uses besides the policy (docs/policy.md "Input flags").
  strategy: {
    group: 'run',
    on: COMPACTING,
    choices: STRATEGY_NAMES,
    doc: 'how the span is compacted',
    docOn: {
      compact: 'summarize (default if configured), truncate, extract or prune',
      fork: 'summarize (default if configured), truncate or extract',
      replay: 'summary used for the simulated compactions [default: truncate]',
    },
    default: undefined,
    schema: z.enum(STRATEGY_NAMES),
  },
  tokenizer: {
    group: 'run',
    type: 'string',
    choices: TOKENIZER_NAMES,
    doc: 'how tokens are counted: chars/4, or exactly for OpenAI o200k / cl100k',
    default: 'heuristic',
    schema: z.enum(TOKENIZER_NAMES),
  },
  config: {
    group: 'run',
    type: 'string',
    doc: 'config file',
    default: undefined,
    shownDefault: '$XDG_CONFIG_HOME/session-compactor/config.json',
  },
  // Which sessions a run reads, and which of their calls (docs/guarantees.md "Default locations", "Filters"). Flags only.
  agent: {
    group: 'run',
    on: READING_MANY,
    type: 'string',
    doc: "with no path (or a session id): the agents whose folders are read, comma-separated: claude-code,codex,pi,gemini-cli,opencode",
    default: undefined,
    shownDefault: 'all',
  },
  since: {
    group: 'run',
    on: READING_MANY,
    type: 'string',
    doc: 'keep the calls made on or after this day, YYYY-MM-DD (and the sessions with one)',
    docOn: {
      estimate: 'keep the sessions with a call on or after this day, YYYY-MM-DD',
      compact: 'keep the sessions with a call on or after this day, YYYY-MM-DD',
      replay: 'keep the sessions with a call on or after this day, YYYY-MM-DD',
      audit: 'keep the sessions with a call on or after this day, YYYY-MM-DD',
    },
    default: undefined,
  },
  until: {
    group: 'run',
    on: READING_MANY,
    type: 'string',
    doc: 'keep the calls made on or before this day, YYYY-MM-DD (and the sessions with one)',
    docOn: {
      estimate: 'keep the sessions with a call on or before this day, YYYY-MM-DD',
      compact: 'keep the sessions with a call on or before this day, YYYY-MM-DD',
      replay: 'keep the sessions with a call on or before this day, YYYY-MM-DD',
      audit: 'keep the sessions with a call on or before this day, YYYY-MM-DD',
    },
    default: undefined,
  },
  timezone: {
    group: 'run',
    on: READING_MANY,
    type: 'string',
    doc: 'the time zone of days (--since, --until, the roll-up by day): an IANA name such as Europe/Paris, or UTC',
    default: undefined,
    shownDefault: 'the local zone',
  },
  project: {
    group: 'run',
    on: READING_MANY,
    type: 'string',
    doc: "keep the sessions whose project (the agent's folder or cwd) contains TEXT or matches a glob (*, **, ?)",
    default: undefined,
  },
  // The summarizer (docs/strategies.md "Summarizer").
  base_url: {
    group: 'summarizer',
    on: COMPACTING,
    type: 'string',
    doc: 'OpenAI-compatible endpoint, e.g. http://localhost:11434/v1',
    default: 'https://api.openai.com/v1',
    shownDefault: null,
    schema: z.url({ protocol: /^https?$/ }),
  },
  model: {
    group: 'summarizer',
    on: COMPACTING,
    flagOn: { replay: 'summarizer-model' },
    type: 'string',
    doc: 'summarizer model',
    default: undefined,
    schema: z.string().min(1),
  },
  api_key_env: {
    group: 'summarizer',
    on: COMPACTING,
    type: 'string',
    doc: 'variable holding the API key',
    default: 'OPENAI_API_KEY',
    schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
  },
  // Shared with extract's size budget: any whole number; summarizeOptions checks it fits the window.
  // audit takes the flag alone, as the budget of the strategies it simulates.
  max_summary_tokens: {
    group: 'summarizer',
    on: [...COMPACTING, 'audit'],
    type: 'number',
    doc: 'reply budget per summarizer call',
    docOn: { audit: 'size budget of a summary, in tokens (extract: 12,000)' },
    default: 8_192,
    schema: wholeNumber(1),
  },
  instructions: { group: 'summarizer', on: COMPACTING, type: 'string', doc: 'focus for the summary: TEXT or @FILE', default: undefined, schema: z.string() },
  /** Seconds per request. */
  timeout: { group: 'summarizer', on: COMPACTING, type: 'number', doc: 'seconds per summarizer request', default: 300, schema: z.number().positive() },
  summarizer_context: {
    group: 'summarizer',
    on: COMPACTING,
    type: 'number',
    doc: "summarizer's window",
    default: undefined,
    shownDefault: "model's or 128000",
    schema: wholeNumber(1_024),
  },
  concurrency: { group: 'summarizer', on: COMPACTING, type: 'number', doc: 'sessions at once', default: 4, schema: wholeNumber(1, 64) },
  on_error: {
    group: 'summarizer',
    on: COMPACTING,
    type: 'string',
    choices: ON_ERROR_CHOICES,
    doc: 'when the summarizer fails',
    default: 'fail',
    schema: z.enum(ON_ERROR_CHOICES),
  },
  max_retries: { group: 'summarizer', on: COMPACTING, type: 'number', doc: 'retries on 429/5xx/connection errors', default: 2, schema: wholeNumber(0, 10) },
} as const satisfies Record<string, SettingSpec>;

type Table = typeof SETTINGS;
export type SettingsKey = keyof Table;
export const SETTINGS_KEYS = Object.keys(SETTINGS) as SettingsKey[];
const spec = (key: SettingsKey): SettingSpec => SETTINGS[key];

/** The settings a variable or the config file may also give: those with a schema. */
export type SourcedKey = { [K in SettingsKey]: Table[K] extends { schema: z.ZodType } ? K : never }[SettingsKey];
export const SOURCED_KEYS = SETTINGS_KEYS.filter((key): key is SourcedKey => spec(key).schema !== undefined);

/** A setting's value once checked: the schema's output, or a flag-only setting's flag value. */
export type SettingValue<K extends SettingsKey> = Table[K] extends { schema: infer S extends z.ZodType } ? z.output<S> : FlagValue<Table[K]>;

/** A setting's value once resolved: given, or its default (undefined when each command decides). */
export type ResolvedValue<K extends SettingsKey> = SettingValue<K> | Table[K]['default'];

type FlagValue<E> = E extends { type: 'boolean' } ? boolean : E extends { choices: readonly (infer C)[] } ? C : E extends { type: 'number' } ? number : string;

/** `keep-recent` for `keep_recent`, at the type level. */
type Dashed<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}-${Dashed<Tail>}` : S;

/** A setting's flag on a command: its own name there, or the dashed key. */
type FlagOn<K extends SettingsKey, C extends SettingsCommand> = Table[K] extends { flagOn: { readonly [P in C]: infer N extends string } } ? N : Dashed<K>;

/** A flag-only setting with a value by default: yargs gives it one, so it is never undefined. */
type Defaulted<K extends SettingsKey> = Table[K] extends { schema: z.ZodType } ? false : Table[K]['default'] extends undefined ? false : true;

/**
 * The parsed flags of these settings on a command, as yargs hands them over (before the schema
 * checks them): derived from the table, so a new setting needs no interface of its own.
 */
export type SettingArgs<K extends SettingsKey, C extends SettingsCommand> = {
  [P in K as Defaulted<P> extends true ? FlagOn<P, C> : never]: FlagValue<Table[P]>;
} & {
  [P in K as Defaulted<P> extends true ? never : FlagOn<P, C>]?: FlagValue<Table[P]>;
};

/** The keys of one group, at the type level. */
export type GroupKey<G extends SettingSpec['group']> = { [K in SettingsKey]: Table[K]['group'] extends G ? K : never }[SettingsKey];

/** The keys of one group, in the table's order. */
export function settingsOf<G extends SettingSpec['group']>(group: G): GroupKey<G>[] {
  return SETTINGS_KEYS.filter((key): key is GroupKey<G> => spec(key).group === group);
}

/** Does this command's command line take the setting? */
export function takesSetting(key: SettingsKey, command: SettingsCommand): boolean {
  return spec(key).on?.includes(command) ?? true;
}

/** `COMPACTOR_KEEP_RECENT` for `keep_recent`, and so on for every key a variable may set. */
export function envName(key: SettingsKey): string {
  return `COMPACTOR_${key.toUpperCase()}`;
}

/** `keep-recent` for `keep_recent`; on replay the summarizer's model is `summarizer-model`. */
export function flagName(key: SettingsKey, command?: SettingsCommand): string {
  return (command && spec(key).flagOn?.[command]) || key.replace(/_/g, '-');
}

/** A variable's text as the schema takes it: a number when the setting is numeric and the text reads as one. */
export function fromText(key: SettingsKey, text: string): unknown {
  const { type, numericText } = spec(key);
  return (type === 'number' || numericText) && text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

/** A setting's value when no source gives one. */
export function defaultOf<K extends SettingsKey>(key: K): Table[K]['default'] {
  return SETTINGS[key].default;
}

/** The default's words in --help, or null when it shows none. */
function shownDefault(entry: SettingSpec): string | null {
  if (entry.shownDefault !== undefined) return entry.shownDefault;
  return entry.default === undefined || entry.default === null ? null : String(entry.default);
}

/**
 * The yargs declaration of a setting's flag on a command. A setting other sources may give has no
 * yargs default (an unset flag falls through to the variable and the file), so --help shows its
 * default in the line; a flag-only setting has the yargs default, which yargs shows itself.
 */
export function flagOption(key: SettingsKey, command?: SettingsCommand) {
  const entry = spec(key);
  const own = command && entry.docOn?.[command];
  const doc = own ?? entry.doc;
  const defaultWords = own === undefined ? shownDefault(entry) : null;
  const flagOnly = entry.schema === undefined && entry.default !== undefined;
  return {
    describe: flagOnly || defaultWords === null ? doc : `${doc} [default: ${defaultWords}]`,
    ...(entry.type ? { type: entry.type } : {}),
    ...(entry.choices ? { choices: [...entry.choices] } : {}),
    ...(flagOnly ? { default: entry.default } : {}),
  };
}

/** How `--json` shows a policy setting, if it does. */
export function echoOf(key: SettingsKey): SettingSpec['echo'] {
  return spec(key).echo;
}

/** The setting this one gives way to when both are set (reserve to trigger_percent). */
export function yieldsTo(key: SettingsKey): SettingsKey | undefined {
  return spec(key).yieldsTo as SettingsKey | undefined;
}

type Shape = { [K in SourcedKey]: Table[K]['schema'] };
const shape = Object.fromEntries(SOURCED_KEYS.map((key) => [key, spec(key).schema])) as Shape;

/** What a config file, the COMPACTOR_* variables or the flags may set, in the config file's snake_case. */
export const settingsLayerSchema = z.object(shape).partial().strict();

export type SettingsLayer = z.output<typeof settingsLayerSchema>;
