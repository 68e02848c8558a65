/**
 * The chat client the summarizer talks through: one `complete(system, user, maxTokens)` call on
 * any OpenAI-compatible `/chat/completions` endpoint, via the `openai` SDK. The SDK owns
 * transport retries (exponential backoff with jitter on 408/409/429/5xx and connection errors,
 * honouring `retry-after`); this module turns its errors into SummarizerErrors whose messages
 * never contain the API key, and logs requests (never headers) when asked. What to send and
 * what to do with the reply is left to fold.ts.
 */
import type OpenAI from 'openai';
import { heuristicCounter } from '../tokens/estimate.js';
import { isContextOverflow } from './overflow.js';
import type { SummarizerSettings } from './settings.js';

export interface ChatRequest {
  readonly system: string;
  readonly user: string;
  readonly maxTokens: number;
}

export interface TokenUsage {
  readonly input: number;
  readonly output: number;
}

export interface ChatReply {
  readonly text: string;
  /** `stop`, `length`, …; null when the endpoint did not say. */
  readonly finishReason: string | null;
  readonly usage: TokenUsage;
  /** True when the endpoint reported no usage and `usage` is a chars/4 estimate. */
  readonly usageEstimated: boolean;
}

export interface ChatClient {
  readonly model: string;
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatReply>;
}

/**
 * `overflow`: the prompt did not fit (split and retry); `bad-reply`: the endpoint answered but
 * not with a usable completion (retry once); `endpoint`: anything else, after the SDK's retries.
 */
export type SummarizerErrorKind = 'overflow' | 'bad-reply' | 'endpoint';

export class SummarizerError extends Error {
  override name = 'SummarizerError';
  constructor(
    message: string,
    readonly kind: SummarizerErrorKind,
  ) {
    super(message);
  }
}

/** Replaces every occurrence of the secret; keys can come back in error bodies and URLs. */
export function redactSecret(text: string, secret: string | null): string {
  if (!secret) return text;
  return text.split(secret).join('[redacted]');
}

export type LogLine = (line: string) => void;

/** OpenAI's reasoning models refuse `max_tokens`; most compatible servers only know it. */
function tokenLimitParameter(baseUrl: string): 'max_tokens' | 'max_completion_tokens' {
  const host = new URL(baseUrl).hostname;
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'max_completion_tokens' : 'max_tokens';
}

/**
 * The SDK, loaded on the first request: it is 150 modules, and every command (and each worker
 * thread) imports this file while only `--strategy summarize` talks to an endpoint.
 */
type Sdk = typeof OpenAI;
let sdkModule: Promise<Sdk> | null = null;
function loadSdk(): Promise<Sdk> {
  return (sdkModule ??= import('openai').then((module) => module.default));
}

function describeFailure(Sdk: Sdk, error: unknown, settings: SummarizerSettings): SummarizerError {
  if (error instanceof Sdk.APIConnectionTimeoutError) {
    return new SummarizerError(`summarizer request timed out after ${settings.timeoutMs / 1000}s (${settings.maxRetries} retries)`, 'endpoint');
  }
  if (error instanceof Sdk.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${(error.cause as Error & { cause?: Error }).cause?.message ?? error.cause.message}` : '';
    return new SummarizerError(`cannot reach the summarizer at ${settings.baseUrl}${cause} (${settings.maxRetries} retries)`, 'endpoint');
  }
  if (error instanceof Sdk.APIError && error.status !== undefined) {
    const emptyBody = error.error === undefined && /\(no body\)/.test(error.message);
    const text = `${error.message} ${error.code ?? ''}`;
    const overflow = isContextOverflow({ status: error.status, emptyBody, text });
    return new SummarizerError(`summarizer endpoint answered ${error.message}`, overflow ? 'overflow' : 'endpoint');
  }
  if (error instanceof SyntaxError) return new SummarizerError(`summarizer reply is not valid JSON (${error.message})`, 'bad-reply');
  return new SummarizerError(`summarizer failed: ${error instanceof Error ? error.message : String(error)}`, 'endpoint');
}

/** Routes the SDK's own log lines (connection failures, retries) to ours, key removed. */
function sdkLogger(log: LogLine, apiKey: string | null) {
  const write = (message: string) => log(redactSecret(message, apiKey));
  return { error: write, warn: write, info: write, debug: () => {} };
}

export interface ClientOptions {
  readonly apiKey: string | null;
  /** Where warnings and, with `verbose`, request lines go (stderr in the CLI). */
  readonly log: LogLine;
  readonly verbose: boolean;
}

export function createChatClient(settings: SummarizerSettings, options: ClientOptions): ChatClient {
  const { apiKey, log, verbose } = options;
  let sdk: OpenAI | null = null;
  const client = (Sdk: Sdk): OpenAI =>
    (sdk ??= new Sdk({
      baseURL: settings.baseUrl,
      // Local servers take no key, but the SDK wants one; this placeholder is not a secret.
      apiKey: apiKey ?? 'no-key',
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      logLevel: verbose ? 'info' : 'warn',
      logger: sdkLogger(log, apiKey),
    }));
  const limitParameter = tokenLimitParameter(settings.baseUrl);
  const endpoint = `${settings.baseUrl}/chat/completions`;

  return {
    model: settings.model,
    async complete(request, signal) {
      const promptEstimate = heuristicCounter(request.system) + heuristicCounter(request.user);
      if (verbose) {
        log(`POST ${endpoint} model=${settings.model} prompt~${promptEstimate} tokens ${limitParameter}=${request.maxTokens}`);
      }
      const Sdk = await loadSdk();
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client(Sdk).chat.completions.create(
          {
            model: settings.model,
            messages: [
              { role: 'system', content: request.system },
              { role: 'user', content: request.user },
            ],
            [limitParameter]: request.maxTokens,
          },
          signal ? { signal } : undefined,
        );
      } catch (error) {
        if (error instanceof Sdk.APIUserAbortError) throw error;
        const failure = describeFailure(Sdk, error, settings);
        failure.message = redactSecret(failure.message, apiKey);
        if (verbose) log(`failed: ${failure.message}`);
        throw failure;
      }
      const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
      if (!choice || typeof choice.message !== 'object' || choice.message === null) {
        throw new SummarizerError('summarizer reply has no choices', 'bad-reply');
      }
      const text = typeof choice.message.content === 'string' ? choice.message.content : '';
      const reported = completion.usage;
      const usage = reported
        ? { input: reported.prompt_tokens ?? 0, output: reported.completion_tokens ?? 0 }
        : { input: promptEstimate, output: heuristicCounter(text) };
      if (verbose) log(`reply finish_reason=${choice.finish_reason ?? 'none'} input=${usage.input} output=${usage.output} tokens`);
      return { text, finishReason: choice.finish_reason ?? null, usage, usageEstimated: !reported };
    },
  };
}
