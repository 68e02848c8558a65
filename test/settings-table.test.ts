/**
 * The settings table (src/config/settings.ts) is the one definition of every setting: no two
 * entries share a flag, a variable or a `--json` name; every flag a command declares that is a
 * setting is the table's declaration (a flag that is no setting is listed here as such, so a new
 * hand-written setting flag fails); the parsed flags' and the policy's types follow the table; and
 * what crosses to worker threads is plain data.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fg from 'fast-glob';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { CutRule } from '../src/compaction/policy.js';
import type { PolicyValues } from '../src/config/policy.js';
import { DEFAULT_POLICY_VALUES, POLICY_KEYS, resolvePolicy } from '../src/config/policy.js';
import type { Amount, SettingsCommand, SettingsKey } from '../src/config/settings.js';
import { echoOf, envName, flagName, flagOption, SETTINGS_COMMANDS, SETTINGS_KEYS, SOURCED_KEYS, takesSetting, yieldsTo } from '../src/config/settings.js';
import { loadConfigFile, settingsFromEnv, settingsFromFlags } from '../src/config/sources.js';
import type { CompactArgs } from '../src/commands/compact.js';
import type { PolicyArgs, SummaryBudgetArgs } from '../src/commands/options.js';
import type { SummarizerArgs } from '../src/commands/summarizer.js';
import type { StrategyName } from '../src/strategies/names.js';
import { COMMANDS } from '../src/cli.js';
import { ROOT } from './helpers/cli.js';

/**
 * Flags that are no setting: about this run's input and output only, never from a variable or the
 * config file. A flag that is neither here nor in the table fails the test: a setting belongs in the table.
 */
const NOT_SETTINGS = new Set([
  'format', 'json', 'strict', 'jobs', 'shard', 'verbose', 'dry-run', 'redact', 'log-format', 'out',
  'policy', 'summary-tokens', 'chart', 'html', 'top', 'all', 'gate-ledger', 'show-missing',
  'price-input', 'price-output', 'price-cache-read', 'price-cache-write', 'price-cache-write-1h',
  'max-baseline', 'max-input-tokens', 'max-cost', 'max-total-cost', 'max-total-input-tokens', 'detail', 'sort', 'by',
]);

/** Flags named like a setting that mean something else on these commands. */
const NAMESAKES: Partial<Record<SettingsCommand, readonly string[]>> = {
  // The session's model, for prices and window (pricing.ts); replay's summarizer model is --summarizer-model.
  inspect: ['model'],
  replay: ['model'],
  // The strategies to simulate, a list: not the strategy one run compacts with.
  audit: ['strategy'],
};

/** The options a command's builder declares, in order, through a stand-in for yargs that records them. */
async function declaredOptions(command: SettingsCommand): Promise<[string, unknown][]> {
  const declared: [string, unknown][] = [];
  const recorder: unknown = new Proxy(
    {},
    {
      get: (_target, method) =>
        method === 'option'
          ? (name: string, declaration: unknown) => {
              declared.push([name, declaration]);
              return recorder;
            }
          : method === 'command'
            ? // cli.ts registers the module with yargs' command(): its builder then declares the options.
              (module: { builder: (yargs: unknown) => unknown }) => {
                module.builder(recorder);
                return recorder;
              }
            : () => recorder,
    },
  );
  // The module cli.ts registers for the command, not a list of our own.
  const load = COMMANDS[command];
  if (!load) throw new Error(`cli.ts registers no command ${command}`);
  const register = await load();
  register(recorder as Parameters<typeof register>[0]);
  return declared;
}

describe('each setting is defined once, in the table', () => {
  it('no two settings share a flag on a command, a variable, or a --json name', () => {
    for (const command of SETTINGS_COMMANDS) {
      const flags = SETTINGS_KEYS.filter((key) => takesSetting(key, command)).map((key) => flagName(key, command));
      expect(new Set(flags).size, command).toBe(flags.length);
    }
    const variables = SOURCED_KEYS.map(envName);
    expect(new Set(variables).size).toBe(variables.length);
    const echoes = SETTINGS_KEYS.flatMap((key) => echoOf(key)?.name ?? []);
    expect(new Set(echoes).size).toBe(echoes.length);
    // Every setting of the policy is echoed: a new one cannot be left out of --json.
    expect(POLICY_KEYS.filter((key) => echoOf(key) === undefined)).toEqual([]);
    // A setting yields only to another of the policy's, which yields to none.
    for (const key of SETTINGS_KEYS) {
      const over = yieldsTo(key);
      if (over) expect([POLICY_KEYS.includes(over as never), yieldsTo(over)], key).toEqual([true, undefined]);
    }
  });

  it.each(SETTINGS_COMMANDS)('every flag of %s that is a setting is the table\'s, declared once', async (command) => {
    const declared = await declaredOptions(command);
    const names = declared.map(([name]) => name);
    expect(names.filter((name, i) => names.indexOf(name) !== i), 'declared twice').toEqual([]);
    const byFlag = new Map(SETTINGS_KEYS.filter((key) => takesSetting(key, command)).map((key) => [flagName(key, command), key] as const));
    const namesakes = NAMESAKES[command] ?? [];
    for (const [name, declaration] of declared) {
      const key = namesakes.includes(name) ? undefined : byFlag.get(name);
      if (key) expect(declaration, `--${name} on ${command}`).toEqual(flagOption(key, command));
      else expect(NOT_SETTINGS.has(name) || namesakes.includes(name), `--${name} on ${command}: a setting goes in src/config/settings.ts`).toBe(true);
    }
    // And every setting the table gives the command is among its flags.
    expect([...byFlag.keys()].filter((flag) => !names.includes(flag))).toEqual([]);
  });

  it('no command file declares a setting\'s flag by hand', async () => {
    const flags = new Set(SETTINGS_COMMANDS.flatMap((command) => SETTINGS_KEYS.map((key) => flagName(key, command))));
    const files = await fg('src/commands/*.ts', { cwd: ROOT });
    const handWritten: string[] = [];
    for (const file of files) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const [, name] of text.matchAll(/\.option\(\s*'([^']+)'/g)) {
        const namesake = Object.values(NAMESAKES).some((names) => names.includes(name!));
        if (flags.has(name!) && !namesake) handWritten.push(`${file}: --${name}`);
      }
    }
    expect(handWritten).toEqual([]);
  });
});

describe('the documentation lists every setting', () => {
  it('with a row naming its flag, and its config key and variable when it has them', async () => {
    const rows = (await Promise.all(['docs/policy.md', 'docs/strategies.md'].map((file) => readFile(join(ROOT, file), 'utf8'))))
      .join('\n')
      .split('\n')
      .filter((line) => line.startsWith('| `--'));
    const missing = SETTINGS_KEYS.filter((key) => {
      const names = [`\`--${flagName(key)}`, ...((SOURCED_KEYS as readonly string[]).includes(key) ? [`\`${key}\``, `\`${envName(key)}\``] : [])];
      return !rows.some((row) => names.every((name) => row.includes(name)));
    });
    expect(missing).toEqual([]);
  });
});

describe('what the table derives', () => {
  it('types the parsed flags and the policy values from the table', () => {
    expectTypeOf<PolicyArgs['cut-rule']>().toEqualTypeOf<CutRule | undefined>();
    expectTypeOf<PolicyArgs['reserve']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PolicyArgs['force']>().toEqualTypeOf<boolean>();
    expectTypeOf<PolicyArgs['config']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<CompactArgs['strategy']>().toEqualTypeOf<StrategyName | undefined>();
    expectTypeOf<CompactArgs['allow-no-gain']>().toEqualTypeOf<boolean>();
    expectTypeOf<SummarizerArgs<'replay'>['summarizer-model']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SummarizerArgs['model']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SummaryBudgetArgs['max-summary-tokens']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<PolicyValues['keep_recent']>().toEqualTypeOf<Amount>();
    expectTypeOf<PolicyValues['context_limit']>().toEqualTypeOf<number | null>();
    expectTypeOf<PolicyValues['trigger_percent']>().toEqualTypeOf<number | null>();
    expectTypeOf<PolicyValues['cut_rule']>().toEqualTypeOf<CutRule>();
    expectTypeOf<keyof PolicyValues>().toEqualTypeOf<'context_limit' | 'keep_recent' | 'reserve' | 'trigger_percent' | 'force' | 'cut_rule' | 'allow_no_gain'>();
  });

  it('shows each default in --help once: from the table, or as yargs\' own for a flag-only setting', () => {
    expect(flagOption('reserve').describe).toMatch(/\[default: 30000\]$/);
    expect(flagOption('max_summary_tokens', 'compact').describe).toBe('reply budget per summarizer call [default: 8192]');
    expect(flagOption('force')).toMatchObject({ type: 'boolean', default: false });
    expect(flagOption('force').describe).not.toContain('[default');
    // Where a command reads a setting its own way, its help line says so, and no table default is added.
    expect(flagOption('strategy', 'replay')).toEqual({ describe: 'summary used for the simulated compactions [default: truncate]', choices: ['truncate', 'summarize', 'extract', 'prune'] });
  });

  it('resolves the policy into plain data a worker thread receives unchanged', () => {
    const values = resolvePolicy(
      { flags: settingsFromFlags({ keep_recent: '35%' }), env: settingsFromEnv({ COMPACTOR_TRIGGER_PERCENT: '70' }), file: { reserve: { tokens: 9 } }, configPath: 'config.json' },
      { force: true },
    );
    expect(values).toEqual({ ...DEFAULT_POLICY_VALUES, keep_recent: { percent: 35 }, trigger_percent: 70, force: true });
    expect(structuredClone(values)).toEqual(values);
    expect(JSON.parse(JSON.stringify(DEFAULT_POLICY_VALUES))).toEqual(DEFAULT_POLICY_VALUES);
  });

  it('takes the trigger from the first source that sets reserve or trigger_percent', () => {
    const file = { trigger_percent: 80 };
    const flags = settingsFromFlags({ reserve: '1000' });
    const values = resolvePolicy({ flags, env: {}, file, configPath: 'config.json' }, {});
    expect(values).toMatchObject({ reserve: { tokens: 1000 }, trigger_percent: null });
  });

  it('lists every setting key a sourced setting has, for the config file and the variables alike', () => {
    const keys: readonly SettingsKey[] = SOURCED_KEYS;
    expect(keys).not.toContain('force');
    expect(keys).not.toContain('config');
    expect(() => settingsFromEnv({ COMPACTOR_FORCE: 'true' })).not.toThrow();
  });

  it('names the config keys in the table\'s order when one is unknown', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compactor-settings-'));
    try {
      await writeFile(join(dir, 'config.json'), '{"keep": 1}');
      await expect(loadConfigFile(join(dir, 'config.json'), true)).rejects.toThrow(
        'unknown setting "keep" (known: context_limit, reserve, keep_recent, trigger_percent, cut_rule, strategy, tokenizer, base_url, model, api_key_env, max_summary_tokens, instructions, timeout, summarizer_context, concurrency, on_error, max_retries)',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
