/**
 * A hostile or slow summarizer endpoint (issue 31, items 1–7), end to end through the built CLI
 * against the fake provider on 127.0.0.1: one that echoes the API key into its summary, drips its
 * reply a byte a second, rate-limits with a far, far-future, negative or past `Retry-After`,
 * redirects to another origin, answers `finish_reason: content_filter`, or claims a gzip
 * encoding its body does not have. Each case fails the session with one line saying what the
 * endpoint did (or succeeds within the bounds the user set), leaves the key nowhere, and writes
 * nothing half done.
 */
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../helpers/cli.js';
import type { Fault } from '../helpers/fake-provider.js';
import { startFakeProvider } from '../helpers/fake-provider.js';
import { everyFileText, fakeFlags, listDir, useLlmTest } from '../helpers/llm.js';
import { startCli } from '../helpers/process.js';
import { agentTurns, writeSession } from '../helpers/sessions.js';

const t = useLlmTest();

const POLICY = ['--force', '--keep-recent', '200'];
/** Built from pieces so no scanner mistakes it for a real key. */
const KEY = `sk-proj-${'Ec4oW9'.repeat(6)}EchoCheck`;

async function session(name = 'hostile'): Promise<string> {
  const path = join(t.scratch.dir, `${name}.jsonl`);
  await writeSession(path, agentTurns(1, 4, 400, 80));
  return path;
}

async function compactAgainst(faults: { faults?: Fault[]; always?: Fault }, ...extra: string[]) {
  const fake = await t.start(faults);
  const path = await session();
  const result = await runCli(['compact', path, ...POLICY, '--json', ...fakeFlags(fake), ...extra], { env: t.scratch.env });
  return { fake, path, result };
}

/** The session failed with `error` as its one line, and nothing was written beside it. */
async function expectFailed(result: Awaited<ReturnType<typeof runCli>>, path: string, error: RegExp) {
  expect(result.exitCode).toBe(1);
  const [record] = jsonLines(result.stdout);
  expect(record).toMatchObject({ session: path, status: 'failed' });
  expect(record!['error']).toMatch(error);
  expect(record!['error']).not.toContain('\n');
  expect(await listDir(t.scratch.dir)).toEqual(['hostile.jsonl']);
}

describe('1. an endpoint that echoes the API key', () => {
  it.each([
    ['text', []],
    ['json', ['--log-format', 'json']],
  ])('the key reaches no file and no output, without --redact (--log-format %s, --verbose, --json)', async (_format, logFlags) => {
    const fake = await t.start({ always: { kind: 'echo-key' } });
    const path = await session();
    const flags = [...POLICY, '--json', '--verbose', '--no-redact', ...logFlags, ...fakeFlags(fake)];
    const result = await runCli(['compact', path, ...flags], { env: { ...t.scratch.env, OPENAI_API_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    // The key went out and came back in the reply: the check below can fail.
    expect(fake.requests.map((request) => request.answered)).toEqual(['echo-key']);
    expect(fake.requests[0]!.reply).toContain(`Bearer ${KEY}`);
    const files = await everyFileText(dirname(t.scratch.dir));
    const sidecar = JSON.parse(files.get(path.replace(/\.jsonl$/, '_compaction.json'))!);
    expect(sidecar.strategy).toBe('summarize');
    expect(sidecar.summary).toContain('Authorization: Bearer [redacted]');
    for (const [where, text] of [['stdout', result.stdout], ['stderr', result.stderr], ...files] as const) {
      expect(text.includes(KEY), `the key is in ${where}`).toBe(false);
    }
  });
});

describe('2. --timeout bounds the whole request, body included', () => {
  it('a reply dripping a byte a second fails the session at --timeout with one line', async () => {
    // Headers at once, then 120 s of body: before the fix the run waited it out.
    const { fake, path, result } = await compactAgainst({ always: { kind: 'drip', everyMs: 1000, bytes: 120 } }, '--timeout', '1', '--max-retries', '0');
    await expectFailed(result, path, /^summarizer request timed out after 1s \(0 retries\)$/);
    await expect.poll(() => fake.requests.map((request) => request.answered)).toEqual(['disconnected']);
  }, 30_000);

  it('with retries, each attempt is bounded and the run still ends with that line', async () => {
    const { fake, path, result } = await compactAgainst({ always: { kind: 'drip', everyMs: 1000, bytes: 120 } }, '--timeout', '1', '--max-retries', '1');
    await expectFailed(result, path, /^summarizer request timed out after 1s \(1 retries\)$/);
    await expect.poll(() => fake.requests.map((request) => request.answered)).toEqual(['disconnected', 'disconnected']);
  }, 30_000);
});

describe('3. Retry-After is capped, said, and a signal stops the wait', () => {
  it('Retry-After: 100000 is said on stderr and waited for at most --timeout', async () => {
    const fake = await t.start({ faults: [{ kind: 'status', status: 429, headers: { 'retry-after': '100000' } }] });
    const path = await session();
    const result = await runCli(['compact', path, ...POLICY, '--json', '--timeout', '1', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'compacted', strategy: 'summarize' });
    expect(fake.requests.map((request) => request.answered)).toEqual(['status 429', 'summary']);
    expect(result.stderr).toContain('compactor: llm: the summarizer asked to wait 100000s (Retry-After); retry 1 in 1s (capped at --timeout 1s)');
  }, 30_000);

  it.each(['SIGTERM', 'SIGINT'] as const)('%s during the wait stops the run at once: exit 130, nothing written', async (signal) => {
    const fake = await t.start({ always: { kind: 'status', status: 429, headers: { 'retry-after': '100000' } } });
    const path = await session();
    // --timeout 600: the capped wait is ten minutes, far beyond the test's own limit.
    const run = startCli(['compact', path, ...POLICY, '--json', '--timeout', '600', ...fakeFlags(fake)], t.scratch.env);
    try {
      await run.stderrMatches(/asked to wait 100000s/);
      run.child.kill(signal);
      expect(await run.exit).toEqual({ code: 130, signal: null });
    } finally {
      // A run that did not stop (or never said it waits) is not left behind.
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    }
    expect(fake.requests).toHaveLength(1);
    expect(run.stdout()).toBe('');
    expect(run.stderr().trimEnd().split('\n')).toEqual([
      'compactor: llm: the summarizer asked to wait 100000s (Retry-After); retry 1 in 600s (capped at --timeout 600s)',
      `compactor: ${signal}: stopping after the sessions in progress (again to stop now)`,
      `compactor: interrupted by ${signal}: 0 of 1 session done, 1 not done; run the same command again to resume`,
    ]);
    expect(await listDir(t.scratch.dir)).toEqual(['hostile.jsonl']);
  }, 30_000);

  it('SIGTERM during a request that is still being answered stops the run at once', async () => {
    const fake = await t.start({ always: { kind: 'drip', everyMs: 1000, bytes: 600 } });
    const path = await session();
    const run = startCli(['compact', path, ...POLICY, '--json', ...fakeFlags(fake)], t.scratch.env);
    await fake.received(1);
    run.child.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 130, signal: null });
    await expect.poll(() => fake.requests.map((request) => request.answered)).toEqual(['disconnected']);
    expect(await listDir(t.scratch.dir)).toEqual(['hostile.jsonl']);
  }, 30_000);
});

describe('4. Retry-After values no timer can hold, or no wait at all', () => {
  it('a far-future date: no TimeoutOverflowWarning, the wait is capped', async () => {
    const fake = await t.start({ faults: [{ kind: 'status', status: 429, headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' } }] });
    const path = await session();
    const result = await runCli(['compact', path, ...POLICY, '--json', '--timeout', '1', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(fake.requests.map((request) => request.answered)).toEqual(['status 429', 'summary']);
    expect(result.stderr).not.toMatch(/TimeoutOverflowWarning|Warning:/);
    expect(result.stderr).toMatch(/^compactor: llm: the summarizer asked to wait \d+s \(Retry-After\); retry 1 in 1s \(capped at --timeout 1s\)$/m);
  }, 30_000);

  it.each([
    ['negative', '-5'],
    ['past date', 'Thu, 01 Jan 1970 00:00:00 GMT'],
  ])('a %s Retry-After is not a wait: backoff instead, said, and --max-retries still ends it', async (_what, value) => {
    const { fake, path, result } = await compactAgainst({ always: { kind: 'status', status: 429, headers: { 'retry-after': value } } }, '--max-retries', '2');
    await expectFailed(result, path, /^summarizer endpoint answered 429 scripted 429$/);
    expect(fake.requests).toHaveLength(3);
    const notes = result.stderr.split('\n').filter((line) => line.includes('is no wait in the future'));
    expect(notes).toEqual([1, 2].map((retry) => expect.stringMatching(new RegExp(`^compactor: llm: the summarizer's Retry-After "${value}" is no wait in the future; retry ${retry} in \\d(\\.\\d)?s$`))));
  }, 30_000);
});

describe('5. redirects', () => {
  it('a 307 to another origin is not followed: one line naming the new location, nothing sent there', async () => {
    const elsewhere = await startFakeProvider();
    try {
      const location = `${elsewhere.url}/chat/completions`;
      const { fake, path, result } = await compactAgainst({ always: { kind: 'redirect', status: 307, location } });
      const origin = new URL(fake.url).origin;
      await expectFailed(
        result,
        path,
        new RegExp(`^the summarizer redirected \\(307\\) to ${location.replace(/[.?]/g, '\\$&')}, another origin than ${origin.replace(/\./g, '\\.')}: not followed`),
      );
      expect(fake.requests.map((request) => request.answered)).toEqual(['redirect 307']);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('a 307 within the same origin is followed', async () => {
    const fake = await t.start({ faults: [{ kind: 'redirect', status: 307, location: '/v1/chat/completions?moved=1' }] });
    const path = await session();
    const result = await runCli(['compact', path, ...POLICY, '--json', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(fake.requests.map((request) => request.answered)).toEqual(['redirect 307', 'summary']);
  });
});

describe('6. a content filter', () => {
  it('finish_reason content_filter fails the session naming the filter, not retried', async () => {
    const { fake, path, result } = await compactAgainst({ always: { kind: 'content-filter' } });
    await expectFailed(result, path, /^the summarizer's content filter stopped the reply \(finish_reason content_filter: violence\)$/);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('7. a reply that lies about its encoding', () => {
  it('content-encoding gzip on a body that is not gzip is said as such (retried once, like any unreadable reply)', async () => {
    const { fake, path, result } = await compactAgainst({ always: { kind: 'false-gzip' } });
    await expectFailed(result, path, /^summarizer reply says content-encoding gzip but its body is not gzip \([^)]+\), twice$/);
    expect(fake.requests.map((request) => request.answered)).toEqual(['false-gzip', 'false-gzip']);
  });

  it('once is retried and the second reply used', async () => {
    const { fake, result } = await compactAgainst({ faults: [{ kind: 'false-gzip' }] });
    expect(result.exitCode).toBe(0);
    expect(fake.requests.map((request) => request.answered)).toEqual(['false-gzip', 'summary']);
  });
});
