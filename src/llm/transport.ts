/**
 * The fetch the openai SDK sends summarizer requests through. It reads the whole reply before
 * handing it on, so the SDK's `--timeout` (which stops at the headers) also bounds a body that
 * drips in a byte at a time, and a body that cannot be read (a `content-encoding` it does not
 * have) is said as such instead of fetch's bare "terminated". It follows a redirect only within
 * the endpoint's origin: the transcript (and whether to redact it) was decided for that host.
 * And it marks a batch-overflow 500 as not worth retrying (see fetchMarkingBatchOverflow).
 */
import { isBatchOverflow } from './overflow.js';

/** Why a reply was refused before the SDK saw it: `redirect` fails the request, `body` is an unreadable reply. */
export class ReplyTransportError extends Error {
  override name = 'ReplyTransportError';
  constructor(
    message: string,
    readonly kind: 'redirect' | 'body',
  ) {
    super(message);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Same-origin hops followed before giving up (fetch's own limit is 20; a loop needs no more than this to show). */
const MAX_REDIRECTS = 5;
/** Statuses whose Response must have no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** The innermost cause: undici wraps a zlib error in "terminated". */
function rootCause(error: unknown): Error | null {
  let current = error instanceof Error ? error : null;
  while (current?.cause instanceof Error) current = current.cause;
  return current;
}

function bodyFailure(response: Response, error: unknown): ReplyTransportError {
  const root = rootCause(error);
  const encoding = response.headers.get('content-encoding');
  const code = (root as { code?: unknown } | null)?.code;
  if (encoding && typeof code === 'string' && code.startsWith('Z_')) {
    return new ReplyTransportError(`summarizer reply says content-encoding ${encoding} but its body is not ${encoding} (${root!.message})`, 'body');
  }
  const detail = root && root !== error ? `${(error as Error).message}: ${root.message}` : root?.message ?? String(error);
  return new ReplyTransportError(`summarizer reply broke off while it was being read (${detail})`, 'body');
}

/** The response with its body read in full (or a ReplyTransportError saying why it could not be). */
async function readWhole(response: Response): Promise<Response> {
  let body: ArrayBuffer;
  try {
    body = await response.arrayBuffer();
  } catch (error) {
    // The SDK's --timeout (or the caller's abort) ended the read: the SDK names it.
    if (isAbort(error)) throw error;
    throw bodyFailure(response, error);
  }
  const headers = new Headers(response.headers);
  // The body is decoded now: its old encoding and length no longer describe it.
  headers.delete('content-encoding');
  headers.delete('content-length');
  return new Response(NULL_BODY.has(response.status) ? null : body, { status: response.status, statusText: response.statusText, headers });
}

/** fetch that follows redirects within the origin it was sent to and refuses any other. */
async function fetchSameOrigin(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  let url = new URL(input instanceof Request ? input.url : String(input));
  let request: RequestInit = { ...init, redirect: 'manual' };
  for (let hops = 0; ; hops++) {
    const response = await fetch(url, request);
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => {});
    const target = new URL(location, url);
    if (target.origin !== url.origin) {
      throw new ReplyTransportError(
        `the summarizer redirected (${response.status}) to ${target.href}, another origin than ${url.origin}: not followed; set --base-url there if you trust it`,
        'redirect',
      );
    }
    if (hops >= MAX_REDIRECTS) throw new ReplyTransportError(`the summarizer redirected more than ${MAX_REDIRECTS} times (last to ${target.href})`, 'redirect');
    // fetch's rule: a 303, or a 301/302 after a POST, is followed with a GET and no body.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === 'POST')) {
      const { body: _dropped, ...rest } = request;
      request = { ...rest, method: 'GET' };
    }
    url = target;
  }
}

/**
 * The SDK retries every 500, but a 500 that says the prompt was larger than the server's batch
 * (overflow.ts) would only be sent again unchanged: it is marked final with the
 * `x-should-retry: false` header the retry rule obeys, and the fold splits the chunk instead.
 */
async function markingBatchOverflow(response: Response): Promise<Response> {
  if (response.status !== 500) return response;
  const text = await response.clone().text();
  if (!isBatchOverflow(response.status, text)) return response;
  const headers = new Headers(response.headers);
  headers.set('x-should-retry', 'false');
  return new Response(text, { status: response.status, statusText: response.statusText, headers });
}

/** The fetch handed to the SDK. */
export async function endpointFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  return markingBatchOverflow(await readWhole(await fetchSameOrigin(input, init)));
}
