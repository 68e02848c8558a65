/**
 * The chat client in this process against the fake provider (a real HTTP server): what it leaves
 * behind on the caller's signal after many requests.
 */
import { getEventListeners } from 'node:events';
import { expect, test } from 'vitest';
import { createChatClient } from '../../src/llm/client.js';
import type { SummarizerSettings } from '../../src/config/summarizer.js';
import { useLlmTest } from '../helpers/llm.js';

const t = useLlmTest();

function settingsFor(baseUrl: string): SummarizerSettings {
  return {
    baseUrl,
    model: 'fake-model',
    apiKeyEnv: 'OPENAI_API_KEY',
    maxSummaryTokens: 500,
    instructions: null,
    timeoutMs: 10_000,
    summarizerContext: 16_000,
    concurrency: 1,
    onError: 'fail',
    maxRetries: 0,
  };
}

test('requests on one long-lived signal leave no abort listener on it (Node warns at eleven)', async () => {
  const fake = await t.start();
  const client = createChatClient(settingsFor(fake.url), { apiKey: null, log: () => {}, verbose: false });
  const run = new AbortController();
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    for (let i = 0; i < 12; i++) {
      const reply = await client.complete({ system: 'summarize', user: `<conversation>\n[User]: request ${i}\n</conversation>`, maxTokens: 500 }, run.signal);
      expect(reply.finishReason).toBe('stop');
    }
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  expect(fake.summaries()).toHaveLength(12);
  expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  expect(warnings.filter((warning) => warning.includes('MaxListenersExceeded'))).toEqual([]);
});

test('the caller aborting still aborts a request in flight', async () => {
  const fake = await t.start({ faults: [{ kind: 'delay', ms: 30_000 }] });
  const client = createChatClient(settingsFor(fake.url), { apiKey: null, log: () => {}, verbose: false });
  const run = new AbortController();
  const pending = client.complete({ system: 'summarize', user: 'x', maxTokens: 500 }, run.signal);
  await fake.received(1);
  run.abort('SIGINT');
  await expect(pending).rejects.toThrow(/abort/i);
  expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
});
