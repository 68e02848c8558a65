/**
 * Every setting that may come from a flag, a COMPACTOR_* environment variable or the config file,
 * defined once: its config key, how its value is checked (one zod schema for all three sources),
 * how an environment variable's text is read, and its flag's type and help. The config file's
 * schema, the variable names and the flags' definitions are derived from this table. Pure; reading
 * the file and the environment is sources.ts's, the precedence is each consumer's
 * (summarizer.ts for the summarizer, commands/options.ts for the policy).
 */
import { z } from '../lazy-zod.js';
import { CUT_RULES, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS } from '../compaction/policy.js';
import { STRATEGY_NAMES } from '../strategies/names.js';
import { TOKENIZER_NAMES } from '../tokens/tokenizers.js';

export const ON_ERROR_CHOICES = ['fail', 'skip', 'truncate'] as const;
export type OnError = (typeof ON_ERROR_CHOICES)[number];

/** A size given in tokens, or as a share of the window the session ran with (`25%`). */
export type Amount = { readonly tokens: number } | { readonly percent: number };

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

/** How a flag is declared; an unset flag has no yargs default, so it falls through to the variable and the file. */
interface FlagSpec {
  readonly type: 'number' | 'string';
  readonly describe: string;
  readonly choices?: readonly string[];
}

interface Setting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** A variable's text is a number when it reads as one (`amount`: unless it ends in %). */
  readonly text: 'number' | 'string';
  /** Who reads it: the compaction policy and the input flags, or the summarizer. */
  readonly group: 'policy' | 'summarizer';
  readonly flag: FlagSpec;
}

const setting = <S extends z.ZodType>(spec: Setting<S>): Setting<S> => spec;

export const SETTINGS = {
  // The compaction policy and what counts tokens (README "Policy flags").
  context_limit: setting({
    schema: wholeNumber(1),
    text: 'number',
    group: 'policy',
    flag: { type: 'number', describe: "model context window in tokens [default: the window the session ran with]" },
  }),
  reserve: setting({
    schema: amount,
    text: 'number',
    group: 'policy',
    flag: { type: 'string', describe: `compact when context > limit - reserve: tokens, or N% of the window [default: ${DEFAULT_RESERVE_TOKENS}]` },
  }),
  keep_recent: setting({
    schema: amount,
    text: 'number',
    group: 'policy',
    flag: { type: 'string', describe: `recent tokens kept verbatim: tokens, or N% of the window [default: ${DEFAULT_KEEP_RECENT_TOKENS}]` },
  }),
  trigger_percent: setting({
    schema: percentOfWindow,
    text: 'number',
    group: 'policy',
    flag: { type: 'number', describe: 'compact at >= P% of the window (instead of --reserve)' },
  }),
  cut_rule: setting({
    schema: z.enum(CUT_RULES),
    text: 'string',
    group: 'policy',
    flag: { type: 'string', describe: 'where the kept part may start: conservative or tool-safe (any message but a tool result) [default: conservative]', choices: CUT_RULES },
  }),
  strategy: setting({
    schema: z.enum(STRATEGY_NAMES),
    text: 'string',
    group: 'policy',
    flag: { type: 'string', describe: 'how the span is compacted', choices: STRATEGY_NAMES },
  }),
  tokenizer: setting({
    schema: z.enum(TOKENIZER_NAMES),
    text: 'string',
    group: 'policy',
    flag: { type: 'string', describe: 'how tokens are counted: chars/4, or exactly for OpenAI o200k / cl100k [default: heuristic]', choices: TOKENIZER_NAMES },
  }),
  // The summarizer (README "Summarizer").
  base_url: setting({
    schema: z.url({ protocol: /^https?$/ }),
    text: 'string',
    group: 'summarizer',
    flag: { type: 'string', describe: 'OpenAI-compatible endpoint, e.g. http://localhost:11434/v1' },
  }),
  model: setting({ schema: z.string().min(1), text: 'string', group: 'summarizer', flag: { type: 'string', describe: 'summarizer model' } }),
  api_key_env: setting({
    schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
    text: 'string',
    group: 'summarizer',
    flag: { type: 'string', describe: 'variable holding the API key [default: OPENAI_API_KEY]' },
  }),
  // Shared with extract's size budget: any whole number; summarizeOptions checks it fits the window.
  max_summary_tokens: setting({
    schema: wholeNumber(1),
    text: 'number',
    group: 'summarizer',
    flag: { type: 'number', describe: 'reply budget per summarizer call [default: 8192]' },
  }),
  instructions: setting({ schema: z.string(), text: 'string', group: 'summarizer', flag: { type: 'string', describe: 'focus for the summary: TEXT or @FILE' } }),
  /** Seconds per request. */
  timeout: setting({ schema: z.number().positive(), text: 'number', group: 'summarizer', flag: { type: 'number', describe: 'seconds per summarizer request [default: 300]' } }),
  summarizer_context: setting({
    schema: wholeNumber(1_024),
    text: 'number',
    group: 'summarizer',
    flag: { type: 'number', describe: "summarizer's window [default: model's or 128000]" },
  }),
  concurrency: setting({ schema: wholeNumber(1, 64), text: 'number', group: 'summarizer', flag: { type: 'number', describe: 'sessions at once [default: 4]' } }),
  on_error: setting({
    schema: z.enum(ON_ERROR_CHOICES),
    text: 'string',
    group: 'summarizer',
    flag: { type: 'string', describe: 'when the summarizer fails [default: fail]', choices: ON_ERROR_CHOICES },
  }),
  max_retries: setting({
    schema: wholeNumber(0, 10),
    text: 'number',
    group: 'summarizer',
    flag: { type: 'number', describe: 'retries on 429/5xx/connection errors [default: 2]' },
  }),
} as const;

export type SettingsKey = keyof typeof SETTINGS;
export const SETTINGS_KEYS = Object.keys(SETTINGS) as SettingsKey[];

type Shape = { [K in SettingsKey]: (typeof SETTINGS)[K]['schema'] };
const shape = Object.fromEntries(SETTINGS_KEYS.map((key) => [key, SETTINGS[key].schema])) as Shape;

/** What a config file, the COMPACTOR_* variables or the flags may set, in the config file's snake_case. */
export const settingsLayerSchema = z.object(shape).partial().strict();

export type SettingsLayer = z.output<typeof settingsLayerSchema>;

/** `COMPACTOR_KEEP_RECENT` for `keep_recent`, and so on for every key. */
export function envName(key: SettingsKey): string {
  return `COMPACTOR_${key.toUpperCase()}`;
}

/** `--keep-recent` for `keep_recent`. */
export function flagName(key: SettingsKey): string {
  return key.replace(/_/g, '-');
}

/** A variable's text as the schema takes it: a number when the setting is numeric and the text reads as one. */
export function fromText(key: SettingsKey, text: string): unknown {
  return SETTINGS[key].text === 'number' && text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

/** The keys of one group, in the table's order. */
export function settingsOf(group: Setting['group']): SettingsKey[] {
  return SETTINGS_KEYS.filter((key) => SETTINGS[key].group === group);
}

/** The yargs declaration of a setting's flag: no default, so an unset flag falls through to the variable and the file. */
export function flagOption(key: SettingsKey, describe?: string) {
  const { type, describe: help, choices } = SETTINGS[key].flag;
  return { type, describe: describe ?? help, ...(choices ? { choices: [...choices] } : {}) };
}
