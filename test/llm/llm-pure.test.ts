/**
 * The summarizer's pure parts: overflow detection, chunking, reply checks, settings precedence,
 * key redaction, known model windows, and when and after how long a request is retried.
 */
import { describe, expect, test } from 'vitest';
import { cutText, MIN_SPLIT_CHARS, packChunks, splitInHalf } from '../../src/llm/chunks.js';
import { redactSecret } from '../../src/llm/client.js';
import { settingsFromEnv } from '../../src/config/sources.js';
import { chunkBudgetTokens } from '../../src/llm/fold.js';
import { knownContextWindow } from '../../src/llm/models.js';
import { isBatchOverflow, isContextOverflow } from '../../src/llm/overflow.js';
import { checkReply, cleanSummary, REPLY_BUDGET_SLACK } from '../../src/llm/reply.js';
import { resolveSummarizer } from '../../src/config/summarizer.js';
import { simulatedSummary } from '../../src/llm/simulated.js';
import { parseRetryAfter, retryWait, shouldRetry, sleepUnlessAborted } from '../../src/llm/retry.js';
import { sidecarSchema } from '../../src/sidecar/schema.js';
import { validSidecar } from '../corpus/make-bad-inputs.js';

describe('isContextOverflow', () => {
  const overflow = (status: number, text: string, emptyBody = false) => isContextOverflow({ status, text, emptyBody });
  test.each([
    [400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."],
    [400, 'prompt is too long: 210000 tokens > 200000 maximum'],
    [400, 'input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000'],
    [400, 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'],
    [400, 'the request exceeds the available context size, try increasing it'],
    [400, 'Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length'],
    [400, 'whatever context_length_exceeded'],
    // llama.cpp's server without context shift, and its error type whatever the message says
    [400, 'input (70000 tokens) is larger than the max context size (65536 tokens). skipping'],
    [400, 'request rejected by the slot exceed_context_size_error'],
    // llama.cpp's server (older and newer wording) and TEI for a prompt over the physical batch: a 500
    [500, 'input (842 tokens) is too large to process. increase the physical batch size (current batch size: 512)'],
    [500, 'input (842 tokens) is too large to process with the current encoder/runtime limits. split or shorten the input, or increase the physical batch size (current n_ubatch: 512)'],
  ])('%i %s', (status, text) => expect(overflow(status, text)).toBe(true));

  test('only that wording makes a 500 an overflow: any other 500 is a server error, retried', () => {
    expect(isBatchOverflow(500, 'input (842 tokens) is too large to process. increase the physical batch size (current batch size: 512)')).toBe(true);
    expect(isBatchOverflow(400, 'input (842 tokens) is too large to process')).toBe(false);
    expect(overflow(500, 'Internal Server Error')).toBe(false);
    expect(overflow(500, 'the upload is too large to process')).toBe(false);
    expect(overflow(502, 'Bad Gateway')).toBe(false);
  });

  test('HTTP 400 and 413 with no body are overflows; 429 and other errors are not', () => {
    expect(overflow(400, '400 status code (no body)', true)).toBe(true);
    expect(overflow(413, '413 status code (no body)', true)).toBe(true);
    expect(overflow(429, '429 status code (no body)', true)).toBe(false);
    expect(overflow(400, 'model not found')).toBe(false);
    expect(overflow(401, 'Incorrect API key provided')).toBe(false);
    expect(isContextOverflow({ status: undefined, text: 'maximum context length', emptyBody: false })).toBe(false);
  });
});

describe('chunks', () => {
  test('packChunks keeps messages whole and in order when they fit', () => {
    expect(packChunks(['aaaa', 'bbbb', 'cc', 'dddddd'], 10)).toEqual(['aaaa\nbbbb', 'cc\ndddddd']);
  });

  test('a message larger than the budget is cut at a line break in the second half, else at the budget', () => {
    expect(cutText('0123456\n89abcdef', 10)).toEqual(['0123456', '89abcdef']);
    expect(cutText('0123456789abcdefghij', 8)).toEqual(['01234567', '89abcdef', 'ghij']);
    expect(packChunks(['x'.repeat(25)], 10).map((chunk) => chunk.length)).toEqual([10, 10, 5]);
  });

  test('splitInHalf halves at a line break, and refuses chunks too small to help', () => {
    const lines = Array.from({ length: 40 }, (_, index) => `line ${String(index).padStart(2, '0')} ${'x'.repeat(10)}`).join('\n');
    const [first, second] = splitInHalf(lines)!;
    expect(`${first}\n${second}`).toBe(lines);
    expect(first.length).toBeLessThanOrEqual(Math.ceil(lines.length / 2) + 1);
    expect(first.endsWith('x')).toBe(true);
    expect(splitInHalf('y'.repeat(MIN_SPLIT_CHARS - 1))).toBeNull();
  });
});

describe('checkReply', () => {
  const BUDGET = 8_192;
  const summary = '## Goal\nShip it\n\n## Progress\n### Done\n- [x] a\n\n## Next Steps\n1. b';
  test('a checkpoint passes, and file lists and a <summary> wrapper written by the model are dropped', () => {
    expect(checkReply(`<summary>\n${summary}\n\n<read-files>\na.ts\n</read-files>\n</summary>`, 'stop', 'history', BUDGET)).toEqual({ ok: true, summary });
    expect(cleanSummary(`${summary}\n<modified-files>\nb.ts\n</modified-files>`)).toBe(summary);
  });
  test('empty, cut off and continuing replies are rejected', () => {
    expect(checkReply('  \n', 'stop', 'history', BUDGET)).toMatchObject({ ok: false, problem: 'the reply was empty' });
    expect(checkReply(summary, 'length', 'history', BUDGET)).toMatchObject({ ok: false, problem: expect.stringContaining('finish_reason length') });
    expect(checkReply('[Assistant]: Sure, running the tests now.', 'stop', 'history', BUDGET)).toMatchObject({ ok: false, problem: expect.stringContaining('continued') });
    expect(checkReply("I'll fix the bug in src/app.ts next.", 'stop', 'history', BUDGET)).toMatchObject({ ok: false });
  });
  test('a turn-prefix reply is checked against its own sections', () => {
    expect(checkReply('## Request\nmigrate\n\n## Done So Far\n- step 1', 'stop', 'turn-prefix', BUDGET).ok).toBe(true);
    expect(checkReply('## Request\nmigrate\n\n## Done So Far\n- step 1', 'stop', 'history', BUDGET).ok).toBe(false);
    expect(checkReply(simulatedSummary(50), 'stop', 'turn-prefix', BUDGET).ok).toBe(true);
    expect(simulatedSummary(50)).toHaveLength(200);
  });
  test('a turn prefix written as a whole checkpoint is a summary; a history summary must be a checkpoint', () => {
    const checkpoint = '## Goal\nmigrate\n\n## Progress\n### Done\n- [x] step 1\n\n## Next Steps\n1. step 2';
    expect(checkReply(checkpoint, 'stop', 'turn-prefix', BUDGET)).toEqual({ ok: true, summary: checkpoint });
    expect(checkReply('## Request\nmigrate\n\n## Done So Far\n- step 1', 'stop', 'history', BUDGET)).toMatchObject({
      ok: false,
      reason: 'not-a-summary',
      problem: 'the reply has fewer than 2 of the requested section headings (Goal, Constraints & Preferences, Progress, Key Decisions, Next Steps, Critical Context)',
    });
  });
  test('a reply over the budget is rejected with its size; within the slack for tokenizer differences it passes', () => {
    const padded = (chars: number) => `${summary}\n${'x'.repeat(chars - summary.length - 1)}`;
    expect(checkReply(padded(1_000 * 4 * REPLY_BUDGET_SLACK), 'stop', 'history', 1_000).ok).toBe(true);
    expect(checkReply(padded(1_000 * 4 * REPLY_BUDGET_SLACK + 8), 'stop', 'history', 1_000)).toEqual({
      ok: false,
      reason: 'over-budget',
      problem: 'the reply was 1502 tokens, over the budget of 1000 (--max-summary-tokens)',
      replyTokens: 1502,
    });
    // A runaway reply of megabytes, as an endpoint that ignores max_tokens once sent.
    expect(checkReply(padded(5_000_000), 'stop', 'history', BUDGET)).toMatchObject({ ok: false, reason: 'over-budget', replyTokens: 1_250_000 });
  });
});

describe('settings', () => {
  const sources = (flags = {}, env = {}, file = {}) => ({ flags, env, file, configPath: '/cfg/config.json' });

  test('nothing set means no summarizer, with the batch defaults', async () => {
    expect(await resolveSummarizer(sources())).toEqual({ configured: false, concurrency: 4, onError: 'fail' });
  });

  test('flags > environment > config file > defaults, key by key', async () => {
    const resolved = await resolveSummarizer(
      sources({ model: 'flag-model' }, { model: 'env-model', timeout: 30 }, { model: 'file-model', base_url: 'http://localhost:11434/v1/', timeout: 60, concurrency: 2 }),
    );
    expect(resolved).toEqual({
      configured: true,
      settings: {
        baseUrl: 'http://localhost:11434/v1',
        model: 'flag-model',
        apiKeyEnv: 'OPENAI_API_KEY',
        maxSummaryTokens: 8192,
        instructions: null,
        timeoutMs: 30_000,
        summarizerContext: 128_000,
        concurrency: 2,
        onError: 'fail',
        maxRetries: 2,
      },
    });
  });

  test("the summarizer context defaults to the model's window when known", async () => {
    const resolved = await resolveSummarizer(sources({ model: 'claude-sonnet-4-5' }));
    expect(resolved.configured && resolved.settings.summarizerContext).toBe(200_000);
    expect(knownContextWindow('openrouter/openai/gpt-4o-mini')).toBe(128_000);
    expect(knownContextWindow('gpt-4.1-mini')).toBe(1_047_576);
    expect(knownContextWindow('my-local-model')).toBeNull();
  });

  test('a base URL without a model is a usage error naming where the URL came from', async () => {
    await expect(resolveSummarizer(sources({}, { base_url: 'http://x/v1' }))).rejects.toThrow(/set by COMPACTOR_BASE_URL but no model/);
  });

  test("the missing model is asked for under the command's own flag (replay's is --summarizer-model)", async () => {
    const replay = { ...sources({ base_url: 'http://x/v1' }), flagOf: (key: string) => (key === 'model' ? 'summarizer-model' : key.replaceAll('_', '-')) };
    await expect(resolveSummarizer(replay)).rejects.toThrow(/set by --base-url but no model: give --summarizer-model,/);
  });

  test('COMPACTOR_* variables are parsed and validated', () => {
    expect(settingsFromEnv({ COMPACTOR_MODEL: 'm', COMPACTOR_CONCURRENCY: '8', COMPACTOR_ON_ERROR: 'skip' })).toEqual({ model: 'm', concurrency: 8, on_error: 'skip' });
    expect(() => settingsFromEnv({ COMPACTOR_ON_ERROR: 'explode' })).toThrow(/^environment variable COMPACTOR_ON_ERROR: /);
    expect(() => settingsFromEnv({ COMPACTOR_BASE_URL: 'ftp://x' })).toThrow(/COMPACTOR_BASE_URL/);
  });

  test('the chunk budget leaves room for the prompt, the running summary and the reply', () => {
    const budget = chunkBudgetTokens({ summarizerContext: 10_000, maxSummaryTokens: 1_000, instructions: null }, 'history');
    expect(budget).toBeGreaterThan(0.9 * (10_000 - 2_000 - 800));
    expect(budget).toBeLessThan(0.9 * (10_000 - 2_000));
  });
});

test('redactSecret removes every occurrence of the key', () => {
  expect(redactSecret('Bearer sk-abc, again sk-abc.', 'sk-abc')).toBe('Bearer [redacted], again [redacted].');
  expect(redactSecret('nothing here', null)).toBe('nothing here');
});

describe("the summarizer's record in the sidecar", () => {
  const sidecar = (strategy: string, details: Record<string, unknown>) => ({ ...validSidecar('s.jsonl'), strategy, details });
  const record = { model: 'm', requests: 2, chunks: 1, overflow_splits: 0 };

  test('rejected replies are checked; a record from before them still loads', () => {
    expect(sidecarSchema.safeParse(sidecar('summarize', { ...record, rejected_replies: [{ reason: 'over-budget', reply_tokens: 1_250_000 }] })).success).toBe(true);
    expect(sidecarSchema.safeParse(sidecar('summarize', record)).success).toBe(true);
    const bad = sidecarSchema.safeParse(sidecar('summarize', { ...record, rejected_replies: [{ reason: 'too long', reply_tokens: -1 }] }));
    expect(bad.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['details.rejected_replies.0.reason', 'details.rejected_replies.0.reply_tokens']);
    expect(sidecarSchema.safeParse(sidecar('summarize', { requests: 'two' })).success).toBe(false);
    // Other strategies' details have shapes of their own.
    expect(sidecarSchema.safeParse(sidecar('truncate', { fallback_reason: 'x' })).success).toBe(true);
  });
});

describe('Retry-After (retry.ts)', () => {
  const NOW = Date.parse('2026-01-01T00:00:00Z');
  const headers = (values: Record<string, string>) => new Headers(values);

  test('seconds, a date, retry-after-ms first; negative or past values are unusable', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '100000' }), NOW)).toEqual({ kind: 'wait', ms: 100_000_000, header: 'Retry-After' });
    expect(parseRetryAfter(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), NOW)).toEqual({ kind: 'wait', ms: 30_000, header: 'Retry-After' });
    expect(parseRetryAfter(headers({ 'retry-after-ms': '10', 'retry-after': '5' }), NOW)).toEqual({ kind: 'wait', ms: 10, header: 'retry-after-ms' });
    expect(parseRetryAfter(headers({ 'retry-after': '-5' }), NOW)).toEqual({ kind: 'unusable', value: '-5', header: 'Retry-After' });
    expect(parseRetryAfter(headers({ 'retry-after': 'Thu, 01 Jan 1970 00:00:00 GMT' }), NOW).kind).toBe('unusable');
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), NOW).kind).toBe('unusable');
    expect(parseRetryAfter(headers({}), NOW)).toEqual({ kind: 'none' });
  });

  test('a wait is capped at --timeout and at what a Node timer holds; an unusable one backs off', () => {
    const far = parseRetryAfter(headers({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }), NOW);
    expect(retryWait(far, 0, 300_000).ms).toBe(300_000);
    expect(retryWait(far, 0, 1e15).ms).toBe(2 ** 31 - 1);
    expect(retryWait({ kind: 'wait', ms: 100_000_000, header: 'Retry-After' }, 1, 5_000, () => 0)).toEqual({
      ms: 5_000,
      note: 'the summarizer asked to wait 100000s (Retry-After); retry 2 in 5s (capped at --timeout 5s)',
    });
    // Short waits pass unremarked; a backoff instead of an unusable value is said.
    expect(retryWait({ kind: 'wait', ms: 10, header: 'retry-after-ms' }, 0, 5_000)).toEqual({ ms: 10, note: null });
    expect(retryWait({ kind: 'unusable', value: '-5', header: 'Retry-After' }, 1, 5_000, () => 0)).toEqual({
      ms: 1_000,
      note: 'the summarizer\'s Retry-After "-5" is no wait in the future; retry 2 in 1s',
    });
  });

  test("the SDK's retry rule: x-should-retry wins, then 408/409/429/5xx; connection failures retry", () => {
    const status = (code: number, extra: Record<string, string> = {}) => shouldRetry({ kind: 'status', status: code, headers: headers(extra) });
    expect([408, 409, 429, 500, 503].map((code) => status(code))).toEqual([true, true, true, true, true]);
    expect([400, 401, 404, 307].map((code) => status(code))).toEqual([false, false, false, false]);
    expect(status(500, { 'x-should-retry': 'false' })).toBe(false);
    expect(status(400, { 'x-should-retry': 'true' })).toBe(true);
    expect(shouldRetry({ kind: 'connection' })).toBe(true);
    expect(shouldRetry({ kind: 'final' })).toBe(false);
  });

  test('a wait ends as soon as its signal is aborted, with the reason', async () => {
    const controller = new AbortController();
    const waiting = sleepUnlessAborted(2 ** 31 - 1, controller.signal);
    const stop = new Error('stopped');
    controller.abort(stop);
    await expect(waiting).rejects.toBe(stop);
    await expect(sleepUnlessAborted(10, AbortSignal.abort('SIGINT'))).rejects.toMatchObject({ name: 'AbortError' });
  });
});
