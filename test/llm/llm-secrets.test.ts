/**
 * Secrets on the LLM path, end to end through the built CLI against the fake provider: the API
 * key reaches the endpoint and nothing else (no stdout, stderr or file, whatever fails and however
 * the run reports it), and `--redact` masks what is sent to the summarizer and what is stored.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shouldRedact } from '../../src/compaction/redact.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import type { FakeProviderOptions } from '../helpers/fake-provider.js';
import { everyFileText, fakeFlags, useLlmTest } from '../helpers/llm.js';
import { agentTurns, writeSession } from '../helpers/sessions.js';

const t = useLlmTest();

const POLICY = ['--force', '--keep-recent', '200'];

describe('the API key never leaks from a failing run', () => {
  // Built from pieces so no scanner mistakes it for a real key.
  const KEY = `sk-proj-${'Kq7vT2'.repeat(6)}LeakCheck`;

  interface Fault {
    readonly options: FakeProviderOptions;
    /** The key is wrong for every session: the batch stops whatever --on-error says, and nothing is written. */
    readonly stopsBatch?: boolean;
    /** Requests the run makes: the SDK retries a 5xx once (--max-retries 1), we retry a bad reply once. */
    readonly requests: number;
    /** The session's error, as reported (key replaced where the endpoint echoed it). */
    readonly error: string;
  }
  const FAULTS: Record<string, Fault> = {
    '401 echoing the Authorization header': {
      options: { expectKey: 'the-key-the-endpoint-wanted' },
      stopsBatch: true,
      requests: 1,
      error: '(401 Invalid credentials in header: Bearer [redacted]): batch stopped, 0 of 1 session done, 1 not run',
    },
    '500 echoing the key': {
      options: {
        always: {
          kind: 'status',
          status: 500,
          body: JSON.stringify({ error: { message: `upstream refused Authorization: Bearer ${KEY} (key ${KEY})` } }),
          headers: { 'retry-after-ms': '10' },
        },
      },
      requests: 2,
      error: 'summarizer endpoint answered 500 upstream refused Authorization: Bearer [redacted] (key [redacted])',
    },
    'malformed JSON': { options: { always: { kind: 'malformed' } }, requests: 2, error: 'summarizer reply is not valid JSON' },
    'a reply that continues the conversation': {
      options: { always: { kind: 'continuation' } },
      requests: 2,
      error: 'the reply continued the conversation instead of summarizing it, twice',
    },
  };
  const ON_ERROR = ['fail', 'skip', 'truncate'] as const;
  // Every fault with every --on-error; JSON or human output and the key's variable alternate so
  // that each fault and each --on-error is seen with both outputs and both variables.
  const runs = Object.keys(FAULTS).flatMap((fault, f) =>
    ON_ERROR.map((onError, o) => {
      const k = f * ON_ERROR.length + o;
      return { fault, onError, json: k % 2 === 0, keyVariable: Math.floor(k / 2) % 2 === 1 ? 'MY_KEY' : 'OPENAI_API_KEY' };
    }),
  );

  it('the matrix covers both outputs and both key variables for every fault and every --on-error', () => {
    for (const value of [...Object.keys(FAULTS), ...ON_ERROR]) {
      const mine = runs.filter((run) => run.fault === value || run.onError === value);
      expect(new Set(mine.map((run) => run.json))).toEqual(new Set([true, false]));
      expect(new Set(mine.map((run) => run.keyVariable))).toEqual(new Set(['MY_KEY', 'OPENAI_API_KEY']));
    }
  });

  it.each(runs)('$fault, --on-error $onError, json $json, key in $keyVariable', async ({ fault, onError, json, keyVariable }) => {
    const { options, requests, error, stopsBatch } = FAULTS[fault]!;
    const writes = onError === 'truncate' && !stopsBatch;
    const fake = await t.start(options);
    const session = join(t.scratch.dir, 'keyed.jsonl');
    await writeSession(session, agentTurns(1, 4, 400, 80));
    const flags = [...POLICY, '--verbose', '--max-retries', '1', '--on-error', onError, ...(json ? ['--json'] : [])];
    if (keyVariable === 'MY_KEY') flags.push('--api-key-env', 'MY_KEY');
    const result = await runCli(['compact', session, ...flags, ...fakeFlags(fake)], { env: { ...t.scratch.env, [keyVariable]: KEY } });

    // The run did fail the way this case means, and the key did go out, so the search below can fail.
    expect(fake.requests).toHaveLength(requests);
    for (const request of fake.requests) expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(result.exitCode).toBe(onError === 'fail' || stopsBatch ? 1 : 0);
    expect(result.stdout + result.stderr).toContain(error);
    expect(result.stderr).toContain(`compactor: llm: POST ${fake.url}/chat/completions model=fake-model`);
    if (json && stopsBatch) expect(result.stdout).toBe('');
    else if (json) expect(jsonLines(result.stdout)[0]).toMatchObject({ session, status: { fail: 'failed', skip: 'skipped', truncate: 'compacted' }[onError] });

    const files = await everyFileText(dirname(t.scratch.dir));
    const sidecar = files.get(session.replace(/\.jsonl$/, '_compaction.json'));
    if (writes) expect(JSON.parse(sidecar!).details.fallback_reason).toContain(error);
    else expect(sidecar).toBeUndefined();
    expect([...files.keys()].map((path) => path.slice(t.scratch.dir.length + 1))).toEqual(writes ? ['keyed.jsonl', 'keyed_compaction.json'] : ['keyed.jsonl']);
    for (const [path, text] of [['stdout', result.stdout], ['stderr', result.stderr], ...files] as const) {
      expect(text.includes(KEY), `the key is in ${path}`).toBe(false);
    }
  });
});

describe('what goes out in the headers', () => {
  // Built from pieces so no scanner mistakes them for real values.
  const OTHER = { OPENAI_ADMIN_KEY: `sk-admin-${'Zx4'.repeat(8)}`, OPENAI_ORG_ID: `org-${'Q9w'.repeat(6)}`, OPENAI_PROJECT_ID: `proj_${'R2d'.repeat(6)}` };

  it('with no key there is no Authorization header, and no other OPENAI_* variable is sent anywhere', async () => {
    const fake = await t.start();
    const session = join(t.scratch.dir, 'keyless.jsonl');
    await writeSession(session, agentTurns(1, 4, 400, 80));
    const result = await runCli(['compact', session, ...POLICY, '--verbose', ...fakeFlags(fake)], { env: { ...t.scratch.env, ...OTHER } });
    expect(result.exitCode).toBe(0);
    expect(fake.requests).toHaveLength(1);
    const headers = fake.requests[0]!.headers;
    expect(headers.authorization).toBeUndefined();
    const sent = JSON.stringify(headers) + JSON.stringify(fake.requests[0]!.body);
    for (const value of Object.values(OTHER)) expect(sent).not.toContain(value);
    expect(result.stdout + result.stderr).not.toMatch(/no-key|sk-admin-|org-Q9w|proj_R2d/);
  });

  it('with a key, it is sent as the one Authorization header and the other OPENAI_* variables still are not', async () => {
    const KEY = `sk-proj-${'Hd8'.repeat(10)}`;
    const fake = await t.start({ expectKey: KEY });
    const session = join(t.scratch.dir, 'keyed.jsonl');
    await writeSession(session, agentTurns(1, 4, 400, 80));
    const result = await runCli(['compact', session, ...POLICY, '--verbose', ...fakeFlags(fake)], { env: { ...t.scratch.env, ...OTHER, OPENAI_API_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    const headers = fake.requests[0]!.headers;
    expect(headers.authorization).toBe(`Bearer ${KEY}`);
    const sent = JSON.stringify(headers) + JSON.stringify(fake.requests[0]!.body);
    for (const value of Object.values(OTHER)) expect(sent).not.toContain(value);
    expect(sent.split(KEY)).toHaveLength(2);
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });
});

describe('redaction reaches the endpoint', () => {
  // Built from pieces so no scanner mistakes this file for a leak; none of these is a real secret.
  const SECRETS = {
    openai: `sk-proj-${'A1b2C3d4E5'.repeat(4)}`,
    aws: `AKIA${'IOSFODNN7EXAMPLE'}`,
    github: `ghp_${'a1B2'.repeat(9)}`,
    pem: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
    password: 'hunter2-Xy9',
    urlPassword: 's3cr3t-pw-Q7',
  };
  const MARKERS = ['openai-key', 'aws-access-key', 'github-token', 'private-key', 'secret-assignment', 'url-password'].map((kind) => `[REDACTED:${kind}]`);
  const PEM = ['-----BEGIN OPENSSH PRIVATE KEY-----', SECRETS.pem, 'QyNTUxOQAAACDwQ+8dE2m', '-----END OPENSSH PRIVATE KEY-----'].join('\n');

  /** Secrets in the part that is summarized (the first line echoes into the fake's summary), then ordinary turns. */
  async function secretSession(): Promise<string> {
    const session = join(t.scratch.dir, 'secrets.jsonl');
    await writeSession(session, [
      { id: 's1', role: 'user', content: `Use ${SECRETS.openai} for the API, and deploy.` },
      {
        id: 's2',
        role: 'assistant',
        content: [
          { type: 'text', text: `AWS id is ${SECRETS.aws}; pushing with ${SECRETS.github}.` },
          { type: 'tool_request', id: 'st1', name: 'read_file', arguments: { path: `https://deploy:${SECRETS.urlPassword}@cfg.example.com/app.env` } },
        ],
      },
      { id: 's3', role: 'user', content: [{ type: 'tool_result', tool_request_id: 'st1', output: `PASSWORD=${SECRETS.password}\n${PEM}\n` }] },
      { id: 's4', role: 'assistant', content: 'Loaded the deploy config.' },
      ...agentTurns(1, 4, 400, 80),
    ]);
    return session;
  }

  const secretsIn = (text: string) => Object.values(SECRETS).filter((secret) => text.includes(secret));

  it('--redact: the endpoint receives markers and no secret; the sidecar stores none', async () => {
    const fake = await t.start();
    const session = await secretSession();
    const result = await runCli(['compact', session, ...POLICY, '--json', '--strategy', 'summarize', '--redact', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'compacted', strategy: 'summarize', redacted: true });
    expect(fake.summaries()).toHaveLength(1);
    for (const request of fake.requests) {
      expect(secretsIn(JSON.stringify(request.body))).toEqual([]);
      for (const marker of MARKERS) expect(request.user).toContain(marker);
    }
    const sidecar = await readFile(session.replace(/\.jsonl$/, '_compaction.json'), 'utf8');
    expect(secretsIn(sidecar)).toEqual([]);
    expect(JSON.parse(sidecar).read_files).toContain('https://deploy:[REDACTED:url-password]@cfg.example.com/app.env');
    expect(secretsIn(result.stdout + result.stderr)).toEqual([]);
  });

  it('without --redact a loopback endpoint gets the transcript as it is (documented default: off)', async () => {
    const fake = await t.start();
    const session = await secretSession();
    const result = await runCli(['compact', session, ...POLICY, '--json', '--strategy', 'summarize', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'compacted', redacted: false });
    expect(fake.requests).toHaveLength(1);
    expect(secretsIn(fake.requests[0]!.user)).toEqual(Object.values(SECRETS));
    expect(fake.requests[0]!.user).not.toContain('[REDACTED:');
    // What the redacted run's sidecar check guards against: unredacted, secrets do get stored.
    const sidecar = await readFile(session.replace(/\.jsonl$/, '_compaction.json'), 'utf8');
    expect(secretsIn(sidecar)).toEqual([SECRETS.openai, SECRETS.urlPassword]);
  });

  it('the default is on for a remote endpoint and off for the loopback fake', async () => {
    const fake = await t.start();
    expect(shouldRedact(undefined, 'https://api.openai.com/v1')).toBe(true);
    expect(shouldRedact(undefined, fake.url)).toBe(false);
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });
  // The default for a remote endpoint is pinned by the shouldRedact test above: tests send traffic
  // only to loopback, so no end-to-end run reaches a non-loopback endpoint.
});
