/**
 * When to send a summarizer request again, and after how long. The openai SDK's own retries
 * sleep in a timer no signal can stop, wait out whatever `Retry-After` says (days; a far date
 * overflows Node's timer), and say nothing; so the client makes the SDK try once and retries
 * here: the same statuses as the SDK, a wait capped at `--timeout`, and a sleep a SIGINT or
 * SIGTERM ends at once. Pure, except `sleepUnlessAborted`.
 */

/** Exponential backoff when the endpoint named no wait: 0.5 s doubling, at most 8 s, up to 25% jitter (the SDK's). */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const seconds = Math.min(0.5 * 2 ** retry, 8);
  return seconds * (1 - random() * 0.25) * 1000;
}

/**
 * What the endpoint asked for. `retry-after-ms` (OpenAI's) wins over `Retry-After`, which is
 * seconds or an HTTP date. A negative number or a date not in the future asks for no wait we can
 * honour: `unusable`, so the caller backs off instead of retrying at once in a loop.
 */
export type RetryAfter =
  | { readonly kind: 'none' }
  | { readonly kind: 'wait'; readonly ms: number; readonly header: string }
  | { readonly kind: 'unusable'; readonly value: string; readonly header: string };

export function parseRetryAfter(headers: Headers | undefined, now: number): RetryAfter {
  const millis = headers?.get('retry-after-ms')?.trim();
  if (millis) {
    const ms = Number(millis);
    if (Number.isFinite(ms)) return ms >= 0 ? { kind: 'wait', ms, header: 'retry-after-ms' } : { kind: 'unusable', value: millis, header: 'retry-after-ms' };
  }
  const value = headers?.get('retry-after')?.trim();
  if (!value) return { kind: 'none' };
  if (/^[-+]?\d+(\.\d+)?$/.test(value)) {
    const seconds = Number(value);
    return seconds >= 0 ? { kind: 'wait', ms: seconds * 1000, header: 'Retry-After' } : { kind: 'unusable', value, header: 'Retry-After' };
  }
  const date = Date.parse(value);
  if (Number.isNaN(date) || date <= now) return { kind: 'unusable', value, header: 'Retry-After' };
  return { kind: 'wait', ms: date - now, header: 'Retry-After' };
}

/** The wait before retry number `retry` (0 for the first), and the line that says why, if any. */
export interface RetryWait {
  readonly ms: number;
  /** Said on stderr: the endpoint asked for a wait we shortened, or for one we could not use. */
  readonly note: string | null;
}

/** A wait the endpoint asks for is said on stderr from this long on; shorter ones pass unremarked. */
const NOTABLE_WAIT_MS = 1000;

export function seconds(ms: number): string {
  const value = ms / 1000;
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10}s`;
}

/** Node's timers hold at most this (about 24.8 days); a longer one fires at once, with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `--timeout` caps every wait: a server asking for a day is not waited for a day. */
export function retryWait(asked: RetryAfter, retry: number, capMs: number, random: () => number = Math.random): RetryWait {
  const next = `retry ${retry + 1}`;
  if (asked.kind === 'none') return { ms: backoffMs(retry, random), note: null };
  if (asked.kind === 'unusable') {
    const ms = backoffMs(retry, random);
    return { ms, note: `the summarizer's ${asked.header} "${asked.value}" is no wait in the future; ${next} in ${seconds(ms)}` };
  }
  const ms = Math.min(asked.ms, capMs, MAX_TIMER_MS);
  if (asked.ms < NOTABLE_WAIT_MS) return { ms, note: null };
  const capped = ms < asked.ms ? ` (capped at --timeout ${seconds(Math.min(capMs, MAX_TIMER_MS))})` : '';
  return { ms, note: `the summarizer asked to wait ${seconds(asked.ms)} (${asked.header}); ${next} in ${seconds(ms)}${capped}` };
}

/** What failed, as far as retrying is concerned. */
export type Attempt =
  | { readonly kind: 'status'; readonly status: number; readonly headers: Headers | undefined }
  | { readonly kind: 'connection' }
  | { readonly kind: 'final' };

/** The SDK's rule: `x-should-retry` if the endpoint sent it, else 408, 409, 429 and 5xx; connection errors and timeouts too. */
export function shouldRetry(attempt: Attempt): boolean {
  if (attempt.kind === 'final') return false;
  if (attempt.kind === 'connection') return true;
  const header = attempt.headers?.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return attempt.status === 408 || attempt.status === 409 || attempt.status === 429 || attempt.status >= 500;
}

/** The error an aborted wait rejects with: the signal's reason when it is one (a stopped run's), else an AbortError. */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException(`aborted (${String(signal.reason)})`, 'AbortError');
}

/** Resolves after `ms`, or rejects as soon as the signal is aborted (a SIGINT mid-wait). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const done = () => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
