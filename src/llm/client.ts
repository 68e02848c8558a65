/**
 * The chat client the summarizer talks through: one `complete(system, user, maxTokens)` call on
 * any OpenAI-compatible `/chat/completions` endpoint, via the `openai` SDK. The SDK sends each
 * attempt (through transport.ts's fetch); the retries on 408/409/429/5xx and connection errors
 * are made here (retry.ts: capped, said, and stopped by a signal). This module turns failures
 * into SummarizerErrors, sends the key only when there is one, and masks the key's exact value
 * in everything that comes back (reply text, errors, log lines), and logs requests (never
 * headers) when asked. What to send and what to do with the reply is left to fold.ts.
 */
import type OpenAI from 'openai';
import type { Message } from '../session/model.js';
import { heuristicCounter } from '../tokens/estimate.js';
import type { EndpointSettings } from './endpoint.js';
import { attemptOf, describeFailure, filtersThatFired, redactSecret, SummarizerError } from './failures.js';
import { MAX_TIMER_MS, parseRetryAfter, retryWait, shouldRetry, sleepUnlessAborted } from './retry.js';
import { endpointFetch } from './transport.js';

export { redactSecret, SummarizerError, type SummarizerErrorKind } from './failures.js';
// The settings live in endpoint.ts, which failures.ts reads too (no import circle).
export type { EndpointSettings } from './endpoint.js';

export interface ChatRequest {
  readonly system: string;
  readonly user: string;
  readonly maxTokens: number;
}

/** The request as the conversation the endpoint receives: a system and a user message. */
export function requestMessages(request: ChatRequest): Message[] {
  return [
    { id: 'summarizer-system', role: 'system', content: [{ type: 'text', text: request.system }], line: 0 },
    { id: 'summarizer-prompt', role: 'user', content: [{ type: 'text', text: request.user }], line: 0 },
  ];
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

/**
 * A signal of its own for one request, aborted with the caller's. The SDK adds an abort
 * listener to the signal it is given and never removes it: handed the run's one long-lived
 * signal, every request left a listener behind (Node warns at eleven).
 */
function requestSignal(parent: AbortSignal | undefined): { readonly signal?: AbortSignal; release(): void } {
  if (!parent) return { release: () => {} };
  const controller = new AbortController();
  const abort = () => controller.abort(parent.reason);
  if (parent.aborted) abort();
  else parent.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', abort) };
}

/**
 * A 200 whose body is not JSON came from something else than a chat completions endpoint (a
 * web page, a wrong path). A JSON text sent with another content type is still accepted.
 */
function asCompletion(data: unknown, response: Response, endpoint: string): OpenAI.Chat.Completions.ChatCompletion | null {
  if (typeof data !== 'string') return (data ?? null) as OpenAI.Chat.Completions.ChatCompletion | null;
  try {
    const parsed: unknown = JSON.parse(data);
    if (parsed !== null && typeof parsed === 'object' && 'choices' in parsed) return parsed as OpenAI.Chat.Completions.ChatCompletion;
  } catch {
    // not JSON: said below
  }
  const type = response.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
  throw new SummarizerError(`not an OpenAI-compatible endpoint (got ${type} from ${endpoint})`, 'endpoint');
}

/** Routes the SDK's own warnings to our log, key removed. */
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

export function createChatClient(settings: EndpointSettings, options: ClientOptions): ChatClient {
  const { apiKey, verbose } = options;
  // Every line goes out with the key's exact value masked, whatever the endpoint echoed into it.
  const log: LogLine = (line) => options.log(redactSecret(line, apiKey));
  let sdk: OpenAI | null = null;
  const client = (Sdk: Sdk): OpenAI =>
    (sdk ??= new Sdk({
      baseURL: settings.baseUrl,
      // The SDK refuses to start without a key; with none, the placeholder is never sent: the
      // null header removes Authorization (local servers take no key, and the README promises none).
      apiKey: apiKey ?? 'unused',
      ...(apiKey === null ? { defaultHeaders: { Authorization: null } } : {}),
      // The SDK would read these from OPENAI_* variables and send them to whatever endpoint this is.
      organization: null,
      project: null,
      adminAPIKey: null,
      // The SDK's timer too would fire at once, with Node's overflow warning, past what a timer holds.
      timeout: Math.min(settings.timeoutMs, MAX_TIMER_MS),
      // One attempt per call: retries are made below, where their waits can be capped and stopped.
      maxRetries: 0,
      fetch: endpointFetch,
      // Its info lines would say "no more retries left" on every attempt: retries are logged below.
      logLevel: 'warn',
      logger: sdkLogger(log, apiKey),
    }));
  const limitParameter = tokenLimitParameter(settings.baseUrl);
  const endpoint = `${settings.baseUrl}/chat/completions`;

  /** One attempt: the completion, or the SDK's error as thrown. */
  const attempt = async (Sdk: Sdk, request: ChatRequest, signal: AbortSignal | undefined) => {
    const linked = requestSignal(signal);
    try {
      const { data, response } = await client(Sdk)
        .chat.completions.create(
          {
            model: settings.model,
            messages: [
              { role: 'system', content: request.system },
              { role: 'user', content: request.user },
            ],
            [limitParameter]: request.maxTokens,
          },
          linked.signal ? { signal: linked.signal } : undefined,
        )
        .withResponse();
      return asCompletion(data, response, endpoint);
    } finally {
      linked.release();
    }
  };

  /** Attempts until one succeeds, a failure is final, or --max-retries are spent; every wait ends at once on an abort. */
  const send = async (Sdk: Sdk, request: ChatRequest, signal: AbortSignal | undefined) => {
    for (let retry = 0; ; retry++) {
      try {
        return await attempt(Sdk, request, signal);
      } catch (error) {
        if (error instanceof Sdk.APIUserAbortError || signal?.aborted) throw error;
        const failed = error instanceof SummarizerError ? ({ kind: 'final' } as const) : attemptOf(Sdk, error);
        if (retry >= settings.maxRetries || !shouldRetry(failed)) {
          const failure = error instanceof SummarizerError ? error : describeFailure(Sdk, error, settings, apiKey !== null);
          failure.message = redactSecret(failure.message, apiKey);
          if (verbose) log(`failed: ${failure.message}`);
          throw failure;
        }
        const wait = retryWait(failed.kind === 'status' ? parseRetryAfter(failed.headers, Date.now()) : { kind: 'none' }, retry, settings.timeoutMs);
        if (wait.note) log(wait.note);
        else if (verbose) log(`retry ${retry + 1} of ${settings.maxRetries} in ${Math.round(wait.ms)} ms after ${failed.kind === 'status' ? `HTTP ${failed.status}` : 'a connection failure'}`);
        await sleepUnlessAborted(wait.ms, signal);
      }
    }
  };

  return {
    model: settings.model,
    async complete(request, signal) {
      const promptEstimate = heuristicCounter(request.system) + heuristicCounter(request.user);
      if (verbose) {
        log(`POST ${endpoint} model=${settings.model} prompt~${promptEstimate} tokens ${limitParameter}=${request.maxTokens}`);
      }
      const Sdk = await loadSdk();
      const completion = await send(Sdk, request, signal);
      const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
      if (!choice || typeof choice.message !== 'object' || choice.message === null) {
        throw new SummarizerError('summarizer reply has no choices', 'bad-reply');
      }
      if (choice.finish_reason === 'content_filter') {
        // Not a bad reply to retry: the endpoint's moderation refused this transcript, and would again.
        throw new SummarizerError(`the summarizer's content filter stopped the reply (finish_reason content_filter${filtersThatFired(choice)})`, 'endpoint');
      }
      // An endpoint may echo the key (a proxy quoting the request): it must not reach the sidecar.
      const text = typeof choice.message.content === 'string' ? redactSecret(choice.message.content, apiKey) : '';
      const reported = completion!.usage;
      const usage = reported
        ? { input: reported.prompt_tokens ?? 0, output: reported.completion_tokens ?? 0 }
        : { input: promptEstimate, output: heuristicCounter(text) };
      if (verbose) log(`reply finish_reason=${choice.finish_reason ?? 'none'} input=${usage.input} output=${usage.output} tokens`);
      return { text, finishReason: choice.finish_reason ?? null, usage, usageEstimated: !reported };
    },
  };
}
