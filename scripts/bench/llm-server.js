#!/usr/bin/env node
/**
 * A minimal OpenAI-compatible endpoint for the benchmark's LLM row: every
 * POST /v1/chat/completions is answered after DELAY_MS with a structured summary and usage.
 * It prints its port on stdout, then serves until killed. Loopback only.
 *
 *   node scripts/bench/llm-server.js [delay-ms]
 */
import { createServer } from 'node:http';

const delayMs = Number(process.argv[2] ?? 1000);
const SUMMARY = [
  '## Goal',
  'Benchmark the summarizer path.',
  '## Constraints & Preferences',
  '- none',
  '## Progress',
  '### Done',
  '- [x] read the files',
  '### In Progress',
  '- [ ] nothing',
  '## Key Decisions',
  '- **None**: benchmark reply',
  '## Next Steps',
  '1. continue',
  '## Critical Context',
  '- none',
].join('\n');

const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    const timer = setTimeout(() => {
      const promptChars = body.length;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion',
          created: 0,
          model: 'bench',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: SUMMARY } }],
          usage: { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil(SUMMARY.length / 4), total_tokens: 0 },
        }),
      );
    }, delayMs);
    // A client that hangs up (aborted, timed out) gets no reply; 'close' on the request itself
    // fires once its body is read, so watch the response.
    response.on('close', () => {
      if (!response.writableEnded) clearTimeout(timer);
    });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
