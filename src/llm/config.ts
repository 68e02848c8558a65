/**
 * Where summarizer settings come from besides flags: the config file (XDG, seed 003) and
 * COMPACTOR_* environment variables. Each source is validated with one zod schema and turned
 * into a partial layer; merging the layers with flags and defaults is settings.ts's job.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';

export const ON_ERROR_CHOICES = ['fail', 'skip', 'truncate'] as const;
export type OnError = (typeof ON_ERROR_CHOICES)[number];

const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);

/** Every key a config file or COMPACTOR_* variable may set, in the config file's snake_case. */
export const settingsLayerSchema = z
  .object({
    base_url: z.url({ protocol: /^https?$/ }),
    model: z.string().min(1),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
    // Shared with extract's size budget: any whole number; summarizeOptions checks it fits the window.
    max_summary_tokens: wholeNumber(1),
    instructions: z.string(),
    /** Seconds per request. */
    timeout: z.number().positive(),
    summarizer_context: wholeNumber(1_024),
    concurrency: wholeNumber(1, 64),
    on_error: z.enum(ON_ERROR_CHOICES),
    max_retries: wholeNumber(0, 10),
  })
  .partial()
  .strict();

export type SettingsLayer = z.infer<typeof settingsLayerSchema>;
export type SettingsKey = keyof SettingsLayer;

const NUMERIC_KEYS: ReadonlySet<SettingsKey> = new Set(['max_summary_tokens', 'timeout', 'summarizer_context', 'concurrency', 'max_retries']);
export const SETTINGS_KEYS = Object.keys(settingsLayerSchema.shape) as SettingsKey[];

/** `COMPACTOR_BASE_URL` for `base_url`, and so on for every key. */
export function envName(key: SettingsKey): string {
  return `COMPACTOR_${key.toUpperCase()}`;
}

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
    return `unknown setting ${keys.map((key) => JSON.stringify(key)).join(', ')} (known: ${SETTINGS_KEYS.join(', ')})`;
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
  for (const key of SETTINGS_KEYS) {
    const value = env[envName(key)];
    if (value === undefined || value === '') continue;
    // Numbers arrive as text; anything that is not one is left as text for zod to reject.
    raw[key] = NUMERIC_KEYS.has(key) && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  const parsed = settingsLayerSchema.safeParse(raw);
  if (!parsed.success) throw new InputError(`environment variable ${firstIssue(parsed.error, (key) => envName(key as SettingsKey))}`);
  return parsed.data;
}
