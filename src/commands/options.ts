/**
 * Flags shared by every command, normalized and validated in one place.
 */
import type { Argv } from 'yargs';
import type { CompactionPolicy, CutRule } from '../compaction/policy.js';
import { CUT_RULES, DEFAULT_CONTEXT_LIMIT, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS } from '../compaction/policy.js';
import { UsageError } from '../errors.js';
import { FORMAT_NAMES } from '../formats/index.js';
import { STDIN } from '../formats/input-source.js';
import type { TokenizerName } from '../tokens/tokenizers.js';
import { TOKENIZER_NAMES } from '../tokens/tokenizers.js';
import type { Jobs } from './sessions.js';
import type { StrategyOptions } from '../strategies/index.js';

export interface CommonArgs {
  inputs: string[];
  format: string;
  json: boolean;
  strict: boolean;
  jobs: string;
  shard?: string;
  tokenizer: TokenizerName;
}

/** `--strict`, on every command: any warning fails its session (exit 1). README "Bad input". */
export const STRICT_OPTION = {
  describe: 'treat warnings (skipped lines, repaired ids or numbers, stale sidecars…) as failures',
  type: 'boolean',
  default: false,
} as const;

export interface PolicyArgs {
  /** Undefined unless given: the model's window from the catalog is the default (README). */
  'context-limit'?: number;
  reserve: number;
  'keep-recent': number;
  'trigger-percent'?: number;
  force: boolean;
  'cut-rule': CutRule;
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
    .option('tokenizer', { describe: 'how tokens are counted: chars/4, or exactly for OpenAI o200k / cl100k', choices: TOKENIZER_NAMES, default: 'heuristic' as TokenizerName })
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
    for (const [key, value] of Object.entries(args)) {
      if (!LIST_KEYS.has(key) && Array.isArray(value)) args[key] = value.at(-1);
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

export function withPolicy<T>(yargs: Argv<T>) {
  return yargs
    .option('context-limit', { describe: `model context window (tokens; default: the model's, else ${DEFAULT_CONTEXT_LIMIT})`, type: 'number' })
    .option('reserve', { describe: 'compact when context > limit - reserve', type: 'number', default: DEFAULT_RESERVE_TOKENS })
    .option('keep-recent', { describe: 'recent tokens kept verbatim', type: 'number', default: DEFAULT_KEEP_RECENT_TOKENS })
    .option('trigger-percent', { describe: 'compact at >= P% of the window (instead of --reserve)', type: 'number' })
    .option('force', { describe: 'compact even under the threshold', type: 'boolean', default: false })
    .option('cut-rule', {
      describe: 'where the kept part may start: conservative (seed 004) or tool-safe (any message but a tool result)',
      choices: CUT_RULES,
      default: 'conservative' as CutRule,
    });
}

export interface SummaryBudgetArgs {
  'max-summary-tokens'?: number;
}

export function withSummaryBudget<T>(yargs: Argv<T>) {
  return yargs.option('max-summary-tokens', { describe: 'size budget of a summary, in tokens (extract: 12,000)', type: 'number' });
}

export function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || !Number.isInteger(value) || value < min) {
    throw new UsageError(`--${name} must be a whole number >= ${min}, got ${String(value)}`);
  }
  return value;
}

/** Just the policy flags, as plain values that can cross to a worker thread (the window is resolved per session). */
export function plainPolicyArgs(args: PolicyArgs): PolicyArgs {
  return {
    ...(args['context-limit'] !== undefined ? { 'context-limit': args['context-limit'] } : {}),
    reserve: args.reserve,
    'keep-recent': args['keep-recent'],
    ...(args['trigger-percent'] !== undefined ? { 'trigger-percent': args['trigger-percent'] } : {}),
    force: args.force,
    'cut-rule': args['cut-rule'],
  };
}

/** `modelWindow`: the session's model window from the catalog, used when --context-limit is not given. */
export function policyFromArgs(args: PolicyArgs, modelWindow = DEFAULT_CONTEXT_LIMIT): CompactionPolicy {
  const contextLimit = wholeNumber('context-limit', args['context-limit'] ?? modelWindow, 1);
  const keepRecentTokens = wholeNumber('keep-recent', args['keep-recent'], 0);
  const percent = args['trigger-percent'];
  if (percent !== undefined && !(Number.isFinite(percent) && percent > 0 && percent <= 100)) {
    throw new UsageError(`--trigger-percent must be in (0, 100], got ${String(percent)}`);
  }
  return {
    contextLimit,
    keepRecentTokens,
    force: args.force,
    cutRule: args['cut-rule'],
    trigger:
      percent !== undefined
        ? { kind: 'percent', percent }
        : { kind: 'reserve', tokens: wholeNumber('reserve', args.reserve, 0) },
  };
}

export function strategyOptionsFromArgs(args: SummaryBudgetArgs): StrategyOptions {
  const max = args['max-summary-tokens'];
  return max === undefined ? {} : { maxSummaryTokens: wholeNumber('max-summary-tokens', max, 1) };
}

/** The policy as `--json` reports it. */
export function policyJson(policy: CompactionPolicy): Record<string, unknown> {
  return {
    context_limit: policy.contextLimit,
    keep_recent_tokens: policy.keepRecentTokens,
    ...(policy.trigger.kind === 'percent'
      ? { trigger_percent: policy.trigger.percent }
      : { reserve_tokens: policy.trigger.tokens }),
    force: policy.force,
    cut_rule: policy.cutRule,
  };
}
