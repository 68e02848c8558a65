/**
 * A fake OpenAI-compatible provider for the LLM tests: a real node:http server on 127.0.0.1
 * (port 0) implementing POST /v1/chat/completions. It validates each request as a provider
 * would, answers with a summary in the requested sections and `usage`, records every request,
 * and can be scripted to misbehave: delay, 429 with retry-after, 5xx, socket reset, malformed
 * JSON, an empty reply, `finish_reason: length`, a reply that continues the conversation, a
 * summary far over the requested budget, a checkpoint whatever was asked, a 200 that is a web
 * page or plain text, or a context-overflow error (in several servers' words) whenever a prompt
 * exceeds a configured size. Hostile too: a summary that echoes the Authorization header, a body
 * dripped a byte at a time, a redirect (to another origin or within this one), a reply stopped
 * by a content filter, a body that claims `content-encoding: gzip` and is not; rate limits are
 * `status` faults with a `retry-after` header. A delayed or dripping request whose client hangs
 * up (an aborted call) is recorded as `disconnected` and never answered.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'status'; readonly status: number; readonly body?: string | null; readonly headers?: Record<string, string> }
  | { readonly kind: 'reset' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'length' }
  | { readonly kind: 'continuation' }
  /** A summary padded to `chars` characters, with `finish_reason: stop`: an endpoint that ignores max_tokens. */
  | { readonly kind: 'oversized'; readonly chars: number }
  /** A checkpoint (Goal, Progress, …) whatever was asked, also for a turn prefix. */
  | { readonly kind: 'checkpoint' }
  /** A 200 whose body is not a chat completion: `body` sent as `contentType`. */
  | { readonly kind: 'not-json'; readonly contentType: string; readonly body: string }
  /** A summary that quotes the request's Authorization header (a proxy echoing what it got). */
  | { readonly kind: 'echo-key' }
  /** Headers at once, then the body one byte every `everyMs` (a space: JSON allows it), until `bytes` or the client hangs up. */
  | { readonly kind: 'drip'; readonly everyMs: number; readonly bytes: number }
  /** `status` (307, …) to `location`, absolute or a path on this server. */
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  /** `finish_reason: content_filter` with no content, and Azure's `content_filter_results` naming the filter that fired. */
  | { readonly kind: 'content-filter' }
  /** A summary sent with `content-encoding: gzip` that is plain JSON. */
  | { readonly kind: 'false-gzip' };

export type OverflowStyle =
  | 'openai'
  | 'anthropic'
  | 'google'
  | 'llamacpp'
  /** llama.cpp without context shift: its other message. */
  | 'llamacpp-max-context'
  /** llama.cpp's error type with a message no pattern knows (a proxy rewording it). */
  | 'llamacpp-typed'
  /** llama.cpp (and TEI) for a prompt longer than the physical batch: HTTP 500. */
  | 'llamacpp-batch'
  | 'no-body-400'
  | 'no-body-413';

export interface FakeProviderOptions {
  /** Answer a context-overflow error when a request's prompt + max tokens (chars/4) exceed this. */
  readonly contextLimit?: number;
  readonly overflowStyle?: OverflowStyle;
  /** Faults for the next requests, in order; requests after them are answered normally. */
  readonly faults?: readonly Fault[];
  /** A fault for every request once `faults` are used up. */
  readonly always?: Fault;
  /** When set, requests without `Authorization: Bearer <key>` get a 401 (whose body echoes the header, as some proxies do). */
  readonly expectKey?: string;
}

export interface RecordedRequest {
  /** Date.now() when the request arrived. */
  readonly at: number;
  readonly body: any;
  readonly system: string;
  readonly user: string;
  /** chars/4 of every message's content, as the fake counts a prompt. */
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** What the fake answered: `summary`, `overflow`, `invalid`, `unauthorized`, `disconnected` (the client hung up during a delay), or a fault kind. */
  readonly answered: string;
  /** The summary text sent back, for `summary` answers. */
  readonly reply: string | null;
}

export interface FakeProvider {
  /** Base URL for --base-url (ends in /v1). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests answered with a summary. */
  readonly summaries: () => RecordedRequest[];
  /** Resolves once `count` requests have arrived (recorded or still being delayed). */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

const tokens = (text: string) => Math.ceil(text.length / 4);

function overflowAnswer(style: OverflowStyle, prompt: number, limit: number): { status: number; body: string | null } {
  switch (style) {
    case 'openai':
      return {
        status: 400,
        body: JSON.stringify({
          error: {
            message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        }),
      };
    case 'anthropic':
      return {
        status: 400,
        body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${prompt} tokens > ${limit} maximum` } }),
      };
    case 'google':
      return {
        status: 400,
        body: JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: `The input token count (${prompt}) exceeds the maximum number of tokens allowed (${limit}).` } }),
      };
    case 'llamacpp':
      return {
        status: 400,
        body: JSON.stringify({ error: { code: 400, type: 'exceed_context_size_error', message: 'the request exceeds the available context size, try increasing it' } }),
      };
    case 'llamacpp-max-context':
      return {
        status: 400,
        body: JSON.stringify({
          error: { code: 400, type: 'exceed_context_size_error', message: `input (${prompt} tokens) is larger than the max context size (${limit} tokens). skipping` },
        }),
      };
    case 'llamacpp-typed':
      return { status: 400, body: JSON.stringify({ error: { code: 400, type: 'exceed_context_size_error', message: 'request rejected by the slot' } }) };
    case 'llamacpp-batch':
      return {
        status: 500,
        body: JSON.stringify({
          error: { code: 500, type: 'server_error', message: `input (${prompt} tokens) is too large to process. increase the physical batch size (current batch size: ${limit})` },
        }),
      };
    case 'no-body-400':
      return { status: 400, body: null };
    case 'no-body-413':
      return { status: 413, body: null };
  }
}

/** A reply in the sections the prompt asked for, the way a cooperative model answers (or always a checkpoint). */
function summaryFor(request: { user: string; model: string }, n: number, checkpoint = false): string {
  const previous = /<previous-summary>[\s\S]*?(summary-\d+)/.exec(request.user)?.[1] ?? 'none';
  const firstLine = /<conversation>\n(.*)/.exec(request.user)?.[1]?.slice(0, 80) ?? '';
  // The sections asked for are the template's (`## Request` followed by a placeholder), not those quoted in a previous summary.
  if (!checkpoint && /## Request\n</.test(request.user)) {
    return `## Request\nturn prefix summary-${n}\n\n## Done So Far\n- began with: ${firstLine}\n\n## Intermediate Results\n- merged ${previous}`;
  }
  return [
    `## Goal\nfake summary-${n} by ${request.model}`,
    '## Constraints & Preferences\n- none',
    `## Progress\n### Done\n- [x] read a part starting with: ${firstLine}\n\n### In Progress\n- [ ] more`,
    `## Key Decisions\n- **merged ${previous}**: fold`,
    '## Next Steps\n1. continue',
    `## Critical Context\n- summary-${n}`,
    // A model may list files itself; the compactor must drop these and use its own tracking.
    '<read-files>\nmodel/invented/path.ts\n</read-files>',
  ].join('\n\n');
}

function validate(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body must be a JSON object';
  if (typeof body.model !== 'string' || body.model === '') return 'model is required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array';
  for (const message of body.messages) {
    if (!['system', 'user', 'assistant'].includes(message?.role)) return `bad role ${JSON.stringify(message?.role)}`;
    if (typeof message.content !== 'string') return 'content must be a string';
  }
  if (!body.messages.some((message: any) => message.role === 'user')) return 'a user message is required';
  const limit = body.max_tokens ?? body.max_completion_tokens;
  if (!Number.isInteger(limit) || limit < 1) return 'max_tokens or max_completion_tokens must be a positive integer';
  if (body.stream) return 'streaming is not expected';
  return null;
}

function send(response: ServerResponse, status: number, body: string | null, headers: Record<string, string> = {}): void {
  response.writeHead(status, body === null ? headers : { 'content-type': 'application/json', ...headers });
  response.end(body ?? undefined);
}

function completion(model: string, text: string, finishReason: string, prompt: number): string {
  return JSON.stringify({
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finishReason }],
    usage: { prompt_tokens: prompt, completion_tokens: tokens(text), total_tokens: prompt + tokens(text) },
  });
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const faults = [...(options.faults ?? [])];
  let answered = 0;
  let arrived = 0;
  const arrivals: { count: number; resolve: () => void }[] = [];

  const server = createServer(async (request, response) => {
    const at = Date.now();
    arrived++;
    for (const waiter of arrivals.filter((waiter) => waiter.count <= arrived)) {
      arrivals.splice(arrivals.indexOf(waiter), 1);
      waiter.resolve();
    }
    const text = await readBody(request);
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch {
      // left null: validate() rejects it
    }
    const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
    const contentOf = (role: string) => messages.filter((m) => m?.role === role).map((m) => String(m.content)).join('\n');
    const promptTokens = messages.reduce((total, m) => total + tokens(String(m?.content ?? '')), 0);
    const maxTokens = Number(body?.max_tokens ?? body?.max_completion_tokens ?? 0);
    const record = (what: string, reply: string | null = null) =>
      requests.push({ at, body, system: contentOf('system'), user: contentOf('user'), promptTokens, maxTokens, headers: request.headers, answered: what, reply });

    // A query string is allowed, so a redirect within this server can name a path of its own.
    if (request.method !== 'POST' || new URL(request.url ?? '/', 'http://fake').pathname !== '/v1/chat/completions') {
      record('invalid');
      return send(response, 404, JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
    }
    if (options.expectKey !== undefined && request.headers.authorization !== `Bearer ${options.expectKey}`) {
      record('unauthorized');
      return send(response, 401, JSON.stringify({ error: { message: `Invalid credentials in header: ${request.headers.authorization}`, code: 'invalid_api_key' } }));
    }
    const problem = validate(body);
    if (problem) {
      record('invalid');
      return send(response, 400, JSON.stringify({ error: { message: problem, type: 'invalid_request_error' } }));
    }

    const fault = faults.shift() ?? options.always;
    if (fault?.kind === 'delay') {
      // An aborted call closes the connection: stop waiting and record it, as a provider would see it.
      const hungUp = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), fault.ms);
        response.on('close', () => {
          clearTimeout(timer);
          resolve(!response.writableFinished);
        });
      });
      if (hungUp) return record('disconnected');
    }
    if (options.contextLimit !== undefined && promptTokens + maxTokens > options.contextLimit) {
      record('overflow');
      const answer = overflowAnswer(options.overflowStyle ?? 'openai', promptTokens + maxTokens, options.contextLimit);
      return send(response, answer.status, answer.body);
    }
    switch (fault?.kind) {
      case 'status':
        record(`status ${fault.status}`);
        return send(response, fault.status, fault.body === undefined ? JSON.stringify({ error: { message: `scripted ${fault.status}` } }) : fault.body, fault.headers);
      case 'reset':
        record('reset');
        return request.socket.destroy();
      case 'malformed':
        record('malformed');
        return send(response, 200, '{"id": "chatcmpl-fake", "choices": [');
      case 'empty':
        record('empty');
        return send(response, 200, completion(body.model, '', 'stop', promptTokens));
      case 'length': {
        const cut = summaryFor({ user: contentOf('user'), model: body.model }, ++answered).slice(0, 40);
        record('length', cut);
        return send(response, 200, completion(body.model, cut, 'length', promptTokens));
      }
      case 'oversized': {
        const summary = summaryFor({ user: contentOf('user'), model: body.model }, ++answered);
        const reply = `${summary}\n\n${'- the same line again and again\n'.repeat(Math.ceil(fault.chars / 32))}`.slice(0, fault.chars);
        record('oversized', reply);
        return send(response, 200, completion(body.model, reply, 'stop', promptTokens));
      }
      case 'checkpoint': {
        const reply = summaryFor({ user: contentOf('user'), model: body.model }, ++answered, true);
        record('checkpoint', reply);
        return send(response, 200, completion(body.model, reply, 'stop', promptTokens));
      }
      case 'not-json':
        record('not-json');
        response.writeHead(200, { 'content-type': fault.contentType });
        return response.end(fault.body);
      case 'echo-key': {
        const reply = `${summaryFor({ user: contentOf('user'), model: body.model }, ++answered)}\n\nSeen in the request: Authorization: ${request.headers.authorization}`;
        record('echo-key', reply);
        return send(response, 200, completion(body.model, reply, 'stop', promptTokens));
      }
      case 'drip': {
        response.writeHead(200, { 'content-type': 'application/json' });
        // Node holds the headers back until the first write: send them and a first byte now.
        response.write(' ');
        let sent = 1;
        const timer = setInterval(() => {
          if (sent++ < fault.bytes) response.write(' ');
          else {
            clearInterval(timer);
            response.end(completion(body.model, summaryFor({ user: contentOf('user'), model: body.model }, ++answered), 'stop', promptTokens));
          }
        }, fault.everyMs);
        response.on('close', () => {
          clearInterval(timer);
          record(response.writableFinished ? 'drip' : 'disconnected');
        });
        return;
      }
      case 'redirect':
        record(`redirect ${fault.status}`);
        return send(response, fault.status, null, { location: fault.location });
      case 'content-filter': {
        record('content-filter');
        const filtered = JSON.parse(completion(body.model, '', 'content_filter', promptTokens));
        filtered.choices[0].message.content = null;
        filtered.choices[0].content_filter_results = { hate: { filtered: false, severity: 'safe' }, violence: { filtered: true, severity: 'high' } };
        return send(response, 200, JSON.stringify(filtered));
      }
      case 'false-gzip':
        record('false-gzip');
        return send(response, 200, completion(body.model, summaryFor({ user: contentOf('user'), model: body.model }, ++answered), 'stop', promptTokens), {
          'content-encoding': 'gzip',
        });
      case 'continuation': {
        const reply = '[Assistant]: Sure, I will now run the tests again and fix the failing one.';
        record('continuation', reply);
        return send(response, 200, completion(body.model, reply, 'stop', promptTokens));
      }
      default: {
        const reply = summaryFor({ user: contentOf('user'), model: body.model }, ++answered);
        record('summary', reply);
        return send(response, 200, completion(body.model, reply, 'stop', promptTokens));
      }
    }
  });
  // Loopback only: tests send traffic to no other address.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    summaries: () => requests.filter((request) => request.answered === 'summary'),
    received: (count) => (arrived >= count ? Promise.resolve() : new Promise<void>((resolve) => arrivals.push({ count, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
