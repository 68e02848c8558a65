/**
 * The summarizer's settings, merged from four sources with one precedence: flags > COMPACTOR_*
 * environment variables > config file (config/sources.ts `pick`) > defaults (README "Summarizer
 * configuration"). Every default is the settings table's (settings.ts), gathered in
 * SUMMARIZER_DEFAULTS. Reading the API key itself is left to the caller, so the key never sits in this object.
 */
import { readFile } from 'node:fs/promises';
import type { SettingsSources } from './sources.js';
import { origin, pick } from './sources.js';
import type { OnError } from './settings.js';
import { defaultOf } from './settings.js';
import { InputError, UsageError } from '../errors.js';
import type { EndpointSettings } from '../llm/client.js';
import { DEFAULT_SUMMARIZER_CONTEXT, knownContextWindow } from '../llm/models.js';

export interface SummarizerSettings extends EndpointSettings {
  readonly maxSummaryTokens: number;
  /** A focus appended to the prompt, like `/compact <focus>`; null when none. */
  readonly instructions: string | null;
  /** The summarizer's own window in tokens (prompt + reply). */
  readonly summarizerContext: number;
  readonly concurrency: number;
  readonly onError: OnError;
}

/** The table's defaults under the names SummarizerSettings gives them (the library exports these). */
export const SUMMARIZER_DEFAULTS = {
  baseUrl: defaultOf('base_url'),
  apiKeyEnv: defaultOf('api_key_env'),
  maxSummaryTokens: defaultOf('max_summary_tokens'),
  timeoutSeconds: defaultOf('timeout'),
  concurrency: defaultOf('concurrency'),
  onError: defaultOf('on_error') as OnError,
  maxRetries: defaultOf('max_retries'),
} as const;

/** The summarizer is configured when a base URL or a model is set anywhere. */
export type ResolvedSummarizer =
  | { readonly configured: false; readonly concurrency: number; readonly onError: OnError }
  | { readonly configured: true; readonly settings: SummarizerSettings };

/** `@path` reads the instructions from a file; anything else is the text itself. */
export async function readInstructions(value: string | undefined): Promise<string | null> {
  if (value === undefined) return null;
  if (!value.startsWith('@')) return value.trim() === '' ? null : value;
  const path = value.slice(1);
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? null : text;
  } catch (error) {
    throw new InputError(`cannot read instructions: ${(error as Error).message}`, path);
  }
}

export async function resolveSummarizer(sources: SettingsSources): Promise<ResolvedSummarizer> {
  const baseUrl = pick(sources, 'base_url');
  const model = pick(sources, 'model');
  const concurrency = pick(sources, 'concurrency') ?? SUMMARIZER_DEFAULTS.concurrency;
  const onError = pick(sources, 'on_error') ?? SUMMARIZER_DEFAULTS.onError;
  if (baseUrl === undefined && model === undefined) return { configured: false, concurrency, onError };
  if (model === undefined) {
    throw new UsageError(`a summarizer endpoint is set by ${origin(sources, 'base_url')} but no model: give --model, COMPACTOR_MODEL or "model" in the config`);
  }
  const maxSummaryTokens = pick(sources, 'max_summary_tokens') ?? SUMMARIZER_DEFAULTS.maxSummaryTokens;
  const summarizerContext = pick(sources, 'summarizer_context') ?? knownContextWindow(model) ?? DEFAULT_SUMMARIZER_CONTEXT;
  return {
    configured: true,
    settings: {
      baseUrl: (baseUrl ?? SUMMARIZER_DEFAULTS.baseUrl).replace(/\/+$/, ''),
      model,
      apiKeyEnv: pick(sources, 'api_key_env') ?? SUMMARIZER_DEFAULTS.apiKeyEnv,
      maxSummaryTokens,
      instructions: await readInstructions(pick(sources, 'instructions')),
      timeoutMs: Math.round((pick(sources, 'timeout') ?? SUMMARIZER_DEFAULTS.timeoutSeconds) * 1000),
      summarizerContext,
      concurrency,
      onError,
      maxRetries: pick(sources, 'max_retries') ?? SUMMARIZER_DEFAULTS.maxRetries,
    },
  };
}

/**
 * The API key from the named variable. A missing key is fine for local servers, which ignore
 * it, but not when the user named the variable or the endpoint is OpenAI's own.
 */
export function readApiKey(settings: SummarizerSettings, env: NodeJS.ProcessEnv): string | null {
  const key = env[settings.apiKeyEnv];
  if (key) return key;
  if (settings.apiKeyEnv !== SUMMARIZER_DEFAULTS.apiKeyEnv) throw new UsageError(`the API key variable ${settings.apiKeyEnv} is not set`);
  if (new URL(settings.baseUrl).hostname === 'api.openai.com') throw new UsageError(`${settings.baseUrl} needs an API key: set ${settings.apiKeyEnv}`);
  return null;
}
