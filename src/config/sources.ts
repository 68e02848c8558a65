/**
 * Where settings come from besides flags: the config file (under $XDG_CONFIG_HOME) and COMPACTOR_*
 * environment variables. Each source is validated with the settings table's one schema
 * (settings.ts) and turned into a partial layer; which layer wins is `pick`'s (flags > variables >
 * file), and what a setting's absence means is left to its consumer.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type * as z from 'zod';
import { InputError, UsageError } from '../errors.js';
import type { SettingsKey, SettingsLayer, SourcedKey } from './settings.js';
import { envName, flagName, fromText, SOURCED_KEYS, settingsLayerSchema } from './settings.js';

/** $XDG_CONFIG_HOME/session-compactor/config.json, with XDG's ~/.config fallback. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] && env['XDG_CONFIG_HOME'].startsWith('/') ? env['XDG_CONFIG_HOME'] : join(env['HOME'] ?? homedir(), '.config');
  return join(base, 'session-compactor', 'config.json');
}

function firstIssue(error: z.ZodError, describeKey: (key: string) => string): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys;
    if (keys.some((key) => /api_?key$/i.test(key))) return 'API keys are not read from files; name the variable holding it with api_key_env';
    return `unknown setting ${keys.map((key) => JSON.stringify(key)).join(', ')} (known: ${SOURCED_KEYS.join(', ')})`;
  }
  const key = issue.path[0];
  return key === undefined ? issue.message : `${describeKey(String(key))}: ${issue.message}`;
}

/**
 * The config file's settings, or an empty layer when the file does not exist. `explicit` (a
 * path the user named) makes a missing file an error. Every error names the file.
 */
export async function loadConfigFile(path: string, explicit: boolean): Promise<SettingsLayer> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !explicit) return {};
    throw new InputError(`cannot read config: ${(error as Error).message}`, path);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`config is not JSON: ${(error as Error).message}`, path);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError('config must be a JSON object', path);
  const parsed = settingsLayerSchema.safeParse(value);
  if (!parsed.success) throw new InputError(`invalid config: ${firstIssue(parsed.error, (key) => key)}`, path);
  return parsed.data;
}

/** The COMPACTOR_* variables that are set, validated like the file; errors name the variable. */
export function settingsFromEnv(env: NodeJS.ProcessEnv): SettingsLayer {
  const raw: Record<string, unknown> = {};
  for (const key of SOURCED_KEYS) {
    const value = env[envName(key)];
    if (value === undefined || value === '') continue;
    // Numbers arrive as text; anything that is not one is left as text for the schema to judge.
    raw[key] = fromText(key, value);
  }
  const parsed = settingsLayerSchema.safeParse(raw);
  if (!parsed.success) throw new InputError(`environment variable ${firstIssue(parsed.error, (key) => envName(key as SettingsKey))}`);
  return parsed.data;
}

/**
 * Flag values (by config key; undefined = not given) validated with the same schema. A string
 * flag holding a number (`--reserve 30000`) is read as a variable's text is.
 */
export function settingsFromFlags(flags: Partial<Record<SourcedKey, unknown>>, flagOf: (key: SettingsKey) => string = flagName): SettingsLayer {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flags) as [SourcedKey, unknown][]) {
    if (value !== undefined) raw[key] = typeof value === 'string' ? fromText(key, value) : value;
  }
  const parsed = settingsLayerSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue?.path[0] ?? '') as SettingsKey;
    throw new UsageError(`--${flagOf(key)}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Every layer a run's settings come from, read once. */
export interface SettingsSources {
  readonly flags: SettingsLayer;
  readonly env: SettingsLayer;
  readonly file: SettingsLayer;
  /** For error messages: where the file layer came from. */
  readonly configPath: string;
  /** The flag that sets a key, for messages (`--summarizer-model` on replay). */
  readonly flagOf?: (key: SettingsKey) => string;
}

/** The setting from the first layer that has it: flags > COMPACTOR_* variables > config file. */
export function pick<K extends SourcedKey>(sources: SettingsSources, key: K): SettingsLayer[K] {
  return sources.flags[key] ?? sources.env[key] ?? sources.file[key];
}

/** Where a setting was given, for messages: `--model`, `COMPACTOR_MODEL` or the config file. */
export function origin(sources: SettingsSources, key: SourcedKey): string {
  if (sources.flags[key] !== undefined) return `--${(sources.flagOf ?? flagName)(key)}`;
  if (sources.env[key] !== undefined) return envName(key);
  return `${sources.configPath} (${key})`;
}

/**
 * The flags given, the variables and the config file (`configFlag`, else the XDG path, where a
 * missing file is fine). Each source is validated as it is read: one line naming where a bad value came from.
 */
export async function loadSettingsSources(
  flags: Partial<Record<SourcedKey, unknown>>,
  configFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  flagOf: (key: SettingsKey) => string = flagName,
): Promise<SettingsSources> {
  const flagLayer = settingsFromFlags(flags, flagOf);
  const envLayer = settingsFromEnv(env);
  const configPath = configFlag ?? defaultConfigPath(env);
  const file = await loadConfigFile(configPath, configFlag !== undefined);
  return { flags: flagLayer, env: envLayer, file, configPath, flagOf };
}
