/**
 * Every way the summarizer endpoint can misbehave, end to end through the built CLI against
 * the fake provider: what is retried (by the openai SDK or by us), what fails, and that a
 * failure never loses the sidecar that was there before nor leaves a partial one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { jsonLines, runCli } from '../helpers/cli.js';
import type { Fault, FakeProviderOptions, OverflowStyle } from '../helpers/fake-provider.js';
import { fakeFlags, listDir, useLlmTest } from '../helpers/llm.js';
import { agentTurns, appendToSession, writeSession } from '../helpers/sessions.js';
import { cleanSummary } from '../../src/llm/reply.js';
import { sidecarSchema } from '../../src/sidecar/schema.js';

const t = useLlmTest();

const POLICY = ['--force', '--keep-recent', '200'];

/** A session with a sidecar from an earlier (truncate) compaction, then new messages to compact. */
async function sessionWithSidecar(newTurns = 3, name = 'faulty'): Promise<{ session: string; sidecar: string; before: string }> {
  const session = join(t.scratch.dir, `${name}.jsonl`);
  await writeSession(session, agentTurns(1, 4, 400, 80));
  const first = await runCli(['compact', session, '--strategy', 'truncate', ...POLICY], { env: t.scratch.env });
  expect(first.exitCode).toBe(0);
  await appendToSession(session, agentTurns(5, newTurns, newTurns > 3 ? 2_500 : 400, 80));
  const sidecar = session.replace(/\.jsonl$/, '_compaction.json');
  return { session, sidecar, before: await readFile(sidecar, 'utf8') };
}

async function compactAgainst(options: FakeProviderOptions, session: string, ...extra: string[]) {
  const fake = await t.start(options);
  return runCli(['compact', session, ...POLICY, '--json', ...fakeFlags(fake), ...extra], { env: t.scratch.env });
}

/** The failure contract: exit 1, a failed record, the old sidecar byte for byte, no stray files. */
async function expectFailedKeepingSidecar(result: Awaited<ReturnType<typeof runCli>>, fixture: { session: string; sidecar: string; before: string }, error: RegExp) {
  expect(result.exitCode).toBe(1);
  const [record] = jsonLines(result.stdout);
  expect(record).toMatchObject({ session: fixture.session, status: 'failed' });
  expect(record!.error).toMatch(error);
  expect(await readFile(fixture.sidecar, 'utf8')).toBe(fixture.before);
  expect(await listDir(t.scratch.dir)).toEqual(['faulty.jsonl', 'faulty_compaction.json']);
  expect(result.stderr).toContain('compactor: error: 1 of 1 session failed:');
}

async function expectCompacted(result: Awaited<ReturnType<typeof runCli>>, fixture: { sidecar: string }) {
  expect(result.exitCode).toBe(0);
  expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'compacted', strategy: 'summarize' });
  const state = JSON.parse(await readFile(fixture.sidecar, 'utf8'));
  expect(state.strategy).toBe('summarize');
  expect(state.compactions).toBe(2);
  return state;
}

describe('transport faults are retried by the openai SDK', () => {
  test('429 with retry-after is retried after the time the endpoint asked for', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ faults: [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }] }, fixture.session);
    await expectCompacted(result, fixture);
    expect(t.fake!.requests.map((request) => request.answered)).toEqual(['status 429', 'summary']);
    expect(t.fake!.requests[1]!.at - t.fake!.requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  test('a 500 is retried with backoff and then succeeds', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ faults: [{ kind: 'status', status: 500 }] }, fixture.session);
    await expectCompacted(result, fixture);
    expect(t.fake!.requests.map((request) => request.answered)).toEqual(['status 500', 'summary']);
  });

  test('a 5xx that persists fails the session after --max-retries', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ always: { kind: 'status', status: 503, headers: { 'retry-after-ms': '10' } } }, fixture.session, '--max-retries', '3');
    await expectFailedKeepingSidecar(result, fixture, /^summarizer endpoint answered 503 scripted 503$/);
    expect(t.fake!.requests).toHaveLength(4);
  });

  test('a reset connection is retried; one that keeps resetting fails', async () => {
    let fixture = await sessionWithSidecar();
    let result = await compactAgainst({ faults: [{ kind: 'reset' }] }, fixture.session, '--max-retries', '1');
    await expectCompacted(result, fixture);
    expect(t.fake!.requests.map((request) => request.answered)).toEqual(['reset', 'summary']);
    await t.renew();

    fixture = await sessionWithSidecar();
    result = await compactAgainst({ always: { kind: 'reset' } }, fixture.session, '--max-retries', '1');
    await expectFailedKeepingSidecar(result, fixture, /^cannot reach the summarizer at http:\/\/127\.0\.0\.1:\d+\/v1.* \(1 retries\)$/);
    expect(t.fake!.requests).toHaveLength(2);
  });

  test('a reply slower than --timeout is abandoned and, with no retries left, fails', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ always: { kind: 'delay', ms: 1_500 } }, fixture.session, '--timeout', '0.3', '--max-retries', '0');
    await expectFailedKeepingSidecar(result, fixture, /^summarizer request timed out after 0\.3s \(0 retries\)$/);
  });

  test('a slow reply within --timeout is waited for', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ faults: [{ kind: 'delay', ms: 200 }] }, fixture.session, '--timeout', '5');
    await expectCompacted(result, fixture);
    expect(t.fake!.requests).toHaveLength(1);
  });
});

describe('replies that are not summaries are retried once, then fail', () => {
  const cases: { kind: Fault['kind']; error: RegExp }[] = [
    { kind: 'malformed', error: /^summarizer reply is not valid JSON .*, twice$/ },
    { kind: 'empty', error: /^the reply was empty, twice$/ },
    { kind: 'length', error: /^the reply was cut off at the token limit \(finish_reason length\), twice$/ },
    { kind: 'continuation', error: /^the reply continued the conversation instead of summarizing it, twice$/ },
  ];
  for (const { kind, error } of cases) {
    test(`${kind}: once is retried`, async () => {
      const fixture = await sessionWithSidecar();
      const result = await compactAgainst({ faults: [{ kind } as Fault] }, fixture.session);
      await expectCompacted(result, fixture);
      expect(t.fake!.requests.map((request) => request.answered)).toEqual([kind, 'summary']);
    });
    test(`${kind}: twice fails the session`, async () => {
      const fixture = await sessionWithSidecar();
      const result = await compactAgainst({ always: { kind } as Fault }, fixture.session);
      await expectFailedKeepingSidecar(result, fixture, error);
      expect(t.fake!.requests).toHaveLength(2);
    });
  }
});

describe('context overflow from the endpoint splits the chunk and retries', () => {
  const styles: OverflowStyle[] = [
    'openai',
    'anthropic',
    'google',
    'llamacpp',
    'llamacpp-max-context',
    'llamacpp-typed',
    'llamacpp-batch',
    'no-body-400',
    'no-body-413',
  ];
  for (const style of styles) {
    test(`${style} overflow error`, async () => {
      const fixture = await sessionWithSidecar(12);
      // We believe the window is 20,000 tokens; the endpoint really takes 2,000.
      const result = await compactAgainst({ contextLimit: 2_000, overflowStyle: style }, fixture.session, '--summarizer-context', '20000', '--max-summary-tokens', '300');
      const state = await expectCompacted(result, fixture);
      const answered = t.fake!.requests.map((request) => request.answered);
      expect(answered[0]).toBe('overflow');
      expect(answered.at(-1)).toBe('summary');
      // One split per overflow answer: none was retried unchanged (llama.cpp's batch overflow is a 500, which the SDK would retry).
      expect(state.details.overflow_splits).toBe(answered.filter((what) => what === 'overflow').length);
      for (const request of t.fake!.summaries()) expect(request.promptTokens + request.maxTokens).toBeLessThanOrEqual(2_000);
      const sent = t.fake!.summaries().map((request) => request.user).join('\n');
      for (let turn = 4; turn <= 15; turn++) expect(sent).toContain(`TURN-${turn} request`);
    });
  }

  test('an overflow that splitting cannot fix fails the session', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ contextLimit: 400 }, fixture.session, '--summarizer-context', '20000', '--max-summary-tokens', '300');
    await expectFailedKeepingSidecar(result, fixture, /maximum context length is 400 tokens.*even for a chunk of \d+ characters$/);
  });
});

describe('replies the endpoint should not have sent', () => {
  test('a reply far over --max-summary-tokens (the endpoint ignored it) is rejected, retried with the budget restated, and recorded', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ faults: [{ kind: 'oversized', chars: 5_000_000 }] }, fixture.session);
    const state = await expectCompacted(result, fixture);
    expect(t.fake!.requests.map((request) => request.answered)).toEqual(['oversized', 'summary']);
    const [first, retry] = t.fake!.requests;
    // Measured as stored: without the file list the model added (chars/4).
    const replyTokens = Math.ceil(cleanSummary(first!.reply!).length / 4);
    expect(replyTokens).toBeGreaterThan(1_240_000);
    expect(first!.user).toContain('The whole summary must fit in 8192 tokens (about 6144 words).');
    expect(retry!.user).toBe(
      `${first!.user}\n\nYour previous reply to this request could not be used: it was about ${replyTokens} tokens, over the limit of 8192. Write the summary again, shorter, within 8192 tokens.`,
    );
    expect(state.summary.length).toBeLessThan(4_000);
    expect(state.details).toMatchObject({ requests: 2, chunks: 1, rejected_replies: [{ reason: 'over-budget', reply_tokens: replyTokens }] });
    expect(sidecarSchema.parse(state).details).toEqual(state.details);
  });

  test('over the budget twice fails the session; --on-error truncate says why in the fallback sidecar', async () => {
    let fixture = await sessionWithSidecar();
    let result = await compactAgainst({ always: { kind: 'oversized', chars: 200_000 } }, fixture.session);
    await expectFailedKeepingSidecar(result, fixture, /^the reply was 49\d\d\d tokens, over the budget of 8192 \(--max-summary-tokens\), twice$/);
    await t.renew();

    fixture = await sessionWithSidecar();
    result = await compactAgainst({ always: { kind: 'oversized', chars: 200_000 } }, fixture.session, '--on-error', 'truncate');
    expect(result.exitCode).toBe(0);
    const state = JSON.parse(await readFile(fixture.sidecar, 'utf8'));
    expect(state).toMatchObject({ strategy: 'truncate', fallback: true });
    expect(state.details.fallback_reason).toMatch(/^the reply was 49\d\d\d tokens, over the budget of 8192 \(--max-summary-tokens\), twice$/);
    expect(state.summary.length).toBeLessThan(20_000);
  });

  test.each([
    ['text/html; charset=utf-8', '<!doctype html><html><body>Open WebUI</body></html>', 'text/html'],
    ['text/plain', 'OK', 'text/plain'],
  ])('a 200 sent as %s is not an OpenAI-compatible endpoint: the session fails at once, saying so', async (contentType, body, type) => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ always: { kind: 'not-json', contentType, body } }, fixture.session);
    await expectFailedKeepingSidecar(result, fixture, new RegExp(`^not an OpenAI-compatible endpoint \\(got ${type} from http://127\\.0\\.0\\.1:\\d+/v1/chat/completions\\)$`));
    expect(t.fake!.requests).toHaveLength(1);
  });

  test('a chat completion sent with a text content type is still read', async () => {
    const fixture = await sessionWithSidecar();
    const reply = '## Goal\nfrom a proxy\n\n## Progress\n- [x] read\n\n## Next Steps\n1. go on';
    const body = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }] });
    const result = await compactAgainst({ faults: [{ kind: 'not-json', contentType: 'text/plain', body }] }, fixture.session);
    const state = await expectCompacted(result, fixture);
    expect(state.summary).toContain('from a proxy');
  });
});

describe('a rejected key stops the batch', () => {
  /** Six sessions, the third with a sidecar from an earlier run. */
  async function batch(): Promise<{ sessions: string[]; sidecar: string; before: string }> {
    const sessions = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => join(t.scratch.dir, `${name}.jsonl`));
    for (const session of sessions) await writeSession(session, agentTurns(1, 4, 400, 80));
    expect((await runCli(['compact', sessions[2]!, '--strategy', 'truncate', ...POLICY], { env: t.scratch.env })).exitCode).toBe(0);
    const sidecar = sessions[2]!.replace(/\.jsonl$/, '_compaction.json');
    await appendToSession(sessions[2]!, agentTurns(5, 2, 400, 80));
    return { sessions, sidecar, before: await readFile(sidecar, 'utf8') };
  }

  test.each(['fail', 'truncate'])('401 with --on-error %s: one line, exit 1, no session tried after it, no sidecar written or changed', async (onError) => {
    const { sessions, sidecar, before } = await batch();
    const fake = await t.start({ expectKey: 'the-right-key' });
    const flags = [...POLICY, '--concurrency', '2', '--on-error', onError, ...fakeFlags(fake)];
    const result = await runCli(['compact', ...sessions, ...flags, '--json'], { env: { ...t.scratch.env, OPENAI_API_KEY: 'a-wrong-key' } });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'compactor: error: the summarizer rejected the API key in OPENAI_API_KEY (401 Invalid credentials in header: Bearer [redacted]): ' +
        'batch stopped, 0 of 6 sessions done, 6 not run; fix it and run the same command again',
    );
    // The two sessions started at once may both have asked; none after them did.
    expect(fake.requests.length).toBeGreaterThanOrEqual(1);
    expect(fake.requests.length).toBeLessThanOrEqual(2);
    expect(await readFile(sidecar, 'utf8')).toBe(before);
    expect(await listDir(t.scratch.dir)).toEqual(['a.jsonl', 'b.jsonl', 'c.jsonl', 'c_compaction.json', 'd.jsonl', 'e.jsonl', 'f.jsonl']);
  });

  test('401 stops a real run: the tally says what it did, not what it would have done', async () => {
    const { sessions } = await batch();
    const fake = await t.start({ expectKey: 'the-right-key' });
    const result = await runCli(['compact', ...sessions, ...POLICY, '--concurrency', '1', ...fakeFlags(fake)], { env: { ...t.scratch.env, OPENAI_API_KEY: 'a-wrong-key' } });
    expect(result.exitCode).toBe(1);
    expect(result.stdout.trim()).toBe('0 compacted, 0 skipped, 0 up-to-date, 0 failed, 6 not run');
  });

  test('403 after a session was done: that one is kept, the line counts it, human output', async () => {
    const { sessions, sidecar, before } = await batch();
    const forbidden = { kind: 'status', status: 403, body: JSON.stringify({ error: { message: 'Project does not have access to model fake-model' } }) } as const;
    const fake = await t.start({ faults: [{ kind: 'delay', ms: 0 }], always: forbidden });
    const result = await runCli(['compact', ...sessions, ...POLICY, '--concurrency', '1', '--on-error', 'skip', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(1);
    expect(fake.requests.map((request) => request.answered)).toEqual(['summary', 'status 403']);
    expect(result.stdout).toContain(`compacted  ${sessions[0]}`);
    expect(result.stdout).toContain('1 compacted, 0 skipped, 0 up-to-date, 0 failed, 5 not run');
    expect(result.stderr).toBe(
      'compactor: error: the summarizer wants an API key and none was sent (OPENAI_API_KEY is not set) (403 Project does not have access to model fake-model): ' +
        'batch stopped, 1 of 6 sessions done, 5 not run; fix it and run the same command again',
    );
    expect(await readFile(sidecar, 'utf8')).toBe(before);
    expect(await listDir(t.scratch.dir)).toEqual(['a.jsonl', 'a_compaction.json', 'b.jsonl', 'c.jsonl', 'c_compaction.json', 'd.jsonl', 'e.jsonl', 'f.jsonl']);
  });
});

describe('a batch with failures', () => {
  test('a failed session does not stop the others; the run ends with a summary and exit 1', async () => {
    const sessions = ['a', 'b', 'c'].map((name) => join(t.scratch.dir, `${name}.jsonl`));
    for (const session of sessions) await writeSession(session, agentTurns(1, 4, 400, 80));
    const fake = await t.start({ faults: [{ kind: 'continuation' }, { kind: 'continuation' }] });
    const result = await runCli(['compact', ...sessions, ...POLICY, '--concurrency', '1', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain('2 compacted, 0 skipped, 0 up-to-date, 1 failed');
    expect(result.stderr).toContain(
      `compactor: error: 1 of 3 sessions failed:\ncompactor: error: ${sessions[0]}: the reply continued the conversation instead of summarizing it, twice`,
    );
    expect(await listDir(t.scratch.dir)).toEqual(['a.jsonl', 'b.jsonl', 'b_compaction.json', 'c.jsonl', 'c_compaction.json']);
  });

  test('--on-error skip reports the session as skipped, keeps its sidecar and exits 0', async () => {
    const fixture = await sessionWithSidecar();
    const result = await compactAgainst({ always: { kind: 'empty' } }, fixture.session, '--on-error', 'skip');
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'skipped', reason: 'summarizer failed: the reply was empty, twice' });
    expect(await readFile(fixture.sidecar, 'utf8')).toBe(fixture.before);
    expect(result.stderr).toContain('left without a new sidecar (--on-error skip)');
  });

  test('--concurrency runs sessions at once and keeps output in input order', async () => {
    const sessions = ['a', 'b', 'c', 'd'].map((name) => join(t.scratch.dir, `${name}.jsonl`));
    for (const session of sessions) await writeSession(session, agentTurns(1, 4, 400, 80));
    // The first session is the slowest: with 4 at once, the others are answered first.
    const fake = await t.start({ faults: [{ kind: 'delay', ms: 400 }] });
    const result = await runCli(['compact', ...sessions, ...POLICY, '--json', '--concurrency', '4', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout).map((record) => record.session)).toEqual(sessions);
    expect(fake.requests).toHaveLength(4);
    expect(fake.requests.map((request) => request.answered)).toEqual(['summary', 'summary', 'summary', 'summary']);
  });
});

describe('the API key', () => {
  const KEY = 'sk-test-0123456789abcdefSECRET';

  test('is sent to the endpoint but never printed, logged or stored', async () => {
    const fake = await t.start({ expectKey: KEY });
    const session = join(t.scratch.dir, 'keyed.jsonl');
    await writeSession(session, agentTurns(1, 4, 400, 80));
    const result = await runCli(['compact', session, ...POLICY, '--json', '--verbose', ...fakeFlags(fake)], { env: { ...t.scratch.env, OPENAI_API_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(result.stderr).toContain(`compactor: llm: POST ${fake.url}/chat/completions model=fake-model`);
    expect(result.stderr).not.toMatch(/authorization|bearer/i);
    const sidecar = await readFile(session.replace(/\.jsonl$/, '_compaction.json'), 'utf8');
    for (const text of [result.stdout, result.stderr, sidecar]) expect(text).not.toContain(KEY);
  });

  test('is redacted from an error body that echoes it', async () => {
    const fake = await t.start({ expectKey: 'a-different-key' });
    const session = join(t.scratch.dir, 'keyed.jsonl');
    await writeSession(session, agentTurns(1, 4, 400, 80));
    const result = await runCli(['compact', session, ...POLICY, '--verbose', '--api-key-env', 'MY_KEY', ...fakeFlags(fake)], {
      env: { ...t.scratch.env, MY_KEY: KEY },
    });
    expect(result.exitCode).toBe(1);
    expect(fake.requests[0]!.answered).toBe('unauthorized');
    expect(result.stderr).toContain('the summarizer rejected the API key in MY_KEY (401 Invalid credentials in header: Bearer [redacted])');
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  test('a named key variable that is not set is a usage error', async () => {
    const session = join(t.scratch.dir, 'keyed.jsonl');
    await writeSession(session, agentTurns(1, 2, 400, 80));
    const result = await runCli(['compact', session, '--api-key-env', 'NOT_SET_ANYWHERE', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1'], { env: t.scratch.env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('the API key variable NOT_SET_ANYWHERE is not set');
  });
});
