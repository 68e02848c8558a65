/**
 * What a failed summarizer call says: the SDK's errors (and the transport's refusals) turned into
 * SummarizerErrors of a kind the fold and the pipeline act on, each one line; which failures
 * are worth another attempt (retry.ts decides when); and redactSecret, which the client applies
 * to everything that comes back, since an endpoint may echo the key anywhere. Pure.
 */
import type OpenAI from 'openai';
import type { BatchStopping } from '../errors.js';
import type { EndpointSettings } from './endpoint.js';
import { isContextOverflow } from './overflow.js';
import type { Attempt } from './retry.js';
import { ReplyTransportError } from './transport.js';

type Sdk = typeof OpenAI;

/**
 * `overflow`: the prompt did not fit (split and retry); `bad-reply`: the endpoint answered but
 * not with a usable completion (retry once); `auth`: the endpoint refused the key (401/403),
 * which every later request would meet too; `endpoint`: anything else, after the client's retries.
 */
export type SummarizerErrorKind = 'overflow' | 'bad-reply' | 'auth' | 'endpoint';

export class SummarizerError extends Error implements BatchStopping {
  override name = 'SummarizerError';
  constructor(
    message: string,
    readonly kind: SummarizerErrorKind,
  ) {
    super(message);
  }

  /** A rejected key fails every session alike: the batch stops at the first (errors.ts). */
  get stopsBatch(): boolean {
    return this.kind === 'auth';
  }
}

/** Replaces every occurrence of the secret; keys can come back in error bodies and URLs. */
export function redactSecret(text: string, secret: string | null): string {
  if (!secret) return text;
  return text.split(secret).join('[redacted]');
}

export function describeFailure(Sdk: Sdk, error: unknown, settings: EndpointSettings, keySent: boolean): SummarizerError {
  if (error instanceof Sdk.APIConnectionError && error.cause instanceof ReplyTransportError) {
    return new SummarizerError(error.cause.message, error.cause.kind === 'body' ? 'bad-reply' : 'endpoint');
  }
  if (error instanceof Sdk.APIConnectionTimeoutError) {
    return new SummarizerError(`summarizer request timed out after ${settings.timeoutMs / 1000}s (${settings.maxRetries} retries)`, 'endpoint');
  }
  if (error instanceof Sdk.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${(error.cause as Error & { cause?: Error }).cause?.message ?? error.cause.message}` : '';
    return new SummarizerError(`cannot reach the summarizer at ${settings.baseUrl}${cause} (${settings.maxRetries} retries)`, 'endpoint');
  }
  if (error instanceof Sdk.APIError && error.status !== undefined) {
    if (error.status === 401 || error.status === 403) {
      const which = keySent ? `rejected the API key in ${settings.apiKeyEnv}` : `wants an API key and none was sent (${settings.apiKeyEnv} is not set)`;
      return new SummarizerError(`the summarizer ${which} (${error.message})`, 'auth');
    }
    const emptyBody = error.error === undefined && /\(no body\)/.test(error.message);
    const text = [error.message, error.code, error.type].filter(Boolean).join(' ');
    const overflow = isContextOverflow({ status: error.status, emptyBody, text });
    return new SummarizerError(`summarizer endpoint answered ${error.message}`, overflow ? 'overflow' : 'endpoint');
  }
  if (error instanceof SyntaxError) return new SummarizerError(`summarizer reply is not valid JSON (${error.message})`, 'bad-reply');
  return new SummarizerError(`summarizer failed: ${error instanceof Error ? error.message : String(error)}`, 'endpoint');
}

/** Why an attempt failed, for the retry rule: a refused redirect or an unreadable body is not sent again. */
export function attemptOf(Sdk: Sdk, error: unknown): Attempt {
  if (error instanceof Sdk.APIConnectionError) return error.cause instanceof ReplyTransportError ? { kind: 'final' } : { kind: 'connection' };
  if (error instanceof Sdk.APIError && error.status !== undefined) return { kind: 'status', status: error.status, headers: error.headers };
  return { kind: 'final' };
}

/** Names the filters an Azure-style reply says fired (`content_filter_results`), if it says. */
export function filtersThatFired(choice: object): string {
  const results = (choice as { content_filter_results?: unknown }).content_filter_results;
  if (!results || typeof results !== 'object') return '';
  const fired = Object.entries(results).filter(([, result]) => (result as { filtered?: unknown } | null)?.filtered === true).map(([name]) => name);
  return fired.length > 0 ? `: ${fired.join(', ')}` : '';
}
