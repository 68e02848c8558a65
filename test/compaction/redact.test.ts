/**
 * Secrets: `redactText` / `redactMessages` mask the common key and password shapes, leave
 * ordinary prose and code alone, and are idempotent; `compact --redact` and `context --redact`
 * keep secrets out of what they store and print.
 */
import fc from 'fast-check';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultRedaction, isLoopbackUrl, redactMessages, redactText, shouldRedact } from '../../src/compaction/redact.js';
import type { Message } from '../../src/session/model.js';
import { jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

// Built from pieces so no scanner mistakes this file for a leak; none of these is a real key.
const FAKE = {
  openai: `sk-proj-${'A1b2C3d4E5'.repeat(4)}`,
  openaiLegacy: `sk-${'Zz9Yy8Xx7W'.repeat(5)}`,
  anthropic: `sk-ant-api03-${'q'.repeat(20)}${'-R7'.repeat(10)}AA`,
  aws: `AKIA${'IOSFODNN7EXAMPLE'}`,
  github: `ghp_${'a1B2'.repeat(9)}`,
  githubPat: `github_pat_11${'ABCDEFGHIJ'.repeat(2)}_${'k'.repeat(59)}`,
  slack: `xoxb-${'1234567890'}-${'abcdefABCDEF123456'}`,
  google: `AIza${'SyD-9tSrke72PouQMnMX'}${'-a7-qRhjX0Z9o3y'}`,
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  opaque: `ya29.${'a0AfH6SMBx3kZ9'}`,
};

const PEM = ['-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACDwQ+8dE2m', '-----END OPENSSH PRIVATE KEY-----'].join('\n');

describe('redactText', () => {
  const cases: [string, string, string][] = [
    ['OpenAI key', `export OPENAI=${FAKE.openai} done`, 'export OPENAI=[REDACTED:openai-key] done'],
    ['legacy OpenAI key', `key: ${FAKE.openaiLegacy}`, 'key: [REDACTED:openai-key]'],
    ['Anthropic key', `Using ${FAKE.anthropic}.`, 'Using [REDACTED:anthropic-key].'],
    ['AWS access key id', `aws_access_key_id = ${FAKE.aws}`, 'aws_access_key_id = [REDACTED:aws-access-key]'],
    ['GitHub token', `token ${FAKE.github} ok`, 'token [REDACTED:github-token] ok'],
    ['GitHub fine-grained token', FAKE.githubPat, '[REDACTED:github-token]'],
    ['Slack token', `SLACK=${FAKE.slack}`, 'SLACK=[REDACTED:slack-token]'],
    ['Google API key', `?key=${FAKE.google}`, '?key=[REDACTED:google-api-key]'],
    ['bearer token', `curl -H "Authorization: Bearer ${FAKE.opaque}" https://api`, 'curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://api'],
    ['JSON Web Token', `jwt=${FAKE.jwt}`, 'jwt=[REDACTED:jwt]'],
    ['private key block', `key:\n${PEM}\nafter`, 'key:\n[REDACTED:private-key]\nafter'],
    ['cut-off private key block', `${PEM.split('\n').slice(0, 2).join('\n')}`, '[REDACTED:private-key]'],
    ['password in a URL', 'git clone https://alice:s3cr3t-pw@github.com/x/y.git', 'git clone https://alice:[REDACTED:url-password]@github.com/x/y.git'],
    ['database URL', 'DATABASE_URL=postgres://app:hunter2@db:5432/app', 'DATABASE_URL=postgres://app:[REDACTED:url-password]@db:5432/app'],
    ['.env PASSWORD', 'DB_PASSWORD=hunter2', 'DB_PASSWORD=[REDACTED:secret-assignment]'],
    ['.env SECRET with export', 'export JWT_SECRET="a b c"', 'export JWT_SECRET=[REDACTED:secret-assignment]'],
    ['.env TOKEN', 'GITHUB_TOKEN=abc123', 'GITHUB_TOKEN=[REDACTED:secret-assignment]'],
    ['.env API_KEY', 'STRIPE_API_KEY=rk_live_0000', 'STRIPE_API_KEY=[REDACTED:secret-assignment]'],
    ['JSON password', '{"user": "bob", "password": "hunter2"}', '{"user": "bob", "password": "[REDACTED:secret-assignment]"}'],
    ['camelCase JSON key', "{'apiKey': 'abc'}", `{'apiKey': "[REDACTED:secret-assignment]"}`],
    ['YAML password', 'db:\n  password: hunter2\n  user: bob', 'db:\n  password: [REDACTED:secret-assignment]\n  user: bob'],
    ['properties file', 'spring.datasource.password=hunter2', 'spring.datasource.password=[REDACTED:secret-assignment]'],
    ['query parameter', 'GET /cb?code=1&access_token=abc.def&x=1', 'GET /cb?code=1&access_token=[REDACTED:secret-parameter]&x=1'],
  ];
  it.each(cases)('masks %s', (_name, input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  const ordinary = [
    'The password field is required; see docs/auth.md for the token flow.',
    'Set MAX_TOKENS=4096 and TOKEN_LIMIT is unused.',
    'const token = nextToken(); if (password.length < 8) throw new Error("short");',
    'Bearer authentication is described in RFC 6750.',
    'Use $DB_PASSWORD or ${API_KEY} from the environment: DB_PASSWORD=$DB_PASSWORD',
    'https://example.com/path?page=2&sort=desc',
    'ssh user@host and email bob@example.com',
    'sk-learn is a library; task-1234 is a ticket.',
    'The tokenizer: gpt-4o counts max_tokens: 100 per call.',
    '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    'fn main() { println!("hello"); }\n',
  ];
  it.each(ordinary)('leaves ordinary text alone: %s', (text) => {
    expect(redactText(text)).toBe(text);
  });

  it('never lets a planted secret through, whatever surrounds it, and is idempotent', () => {
    // An opaque token is only recognisable after "Bearer"; every other shape on its own.
    const secrets = Object.entries(FAKE).filter(([name]) => name !== 'opaque').map(([, secret]) => secret);
    const word = fc.constantFrom('the', 'file', 'src/main.rs', 'ok', '=', ':', '"', 'key', 'export', '\n', ' ', 'token', 'PASSWORD', '://', '@');
    fc.assert(
      fc.property(fc.array(word, { maxLength: 20 }), fc.constantFrom(...secrets), fc.array(word, { maxLength: 20 }), (before, secret, after) => {
        const text = `${before.join(' ')} ${secret} ${after.join(' ')}`;
        const once = redactText(text);
        expect(once).not.toContain(secret);
        expect(redactText(once)).toBe(once);
      }),
      { numRuns: 3_000 },
    );
  });

  it('is idempotent over arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const once = redactText(text);
        expect(redactText(once)).toBe(once);
      }),
      { numRuns: 3_000 },
    );
  });
});

describe('redactMessages', () => {
  it('masks text, thinking, tool arguments (nested) and tool output, and keeps everything else', () => {
    const messages: Message[] = [
      { id: 'm1', role: 'user', content: [{ type: 'text', text: `my key is ${FAKE.openai}` }], line: 1 },
      {
        id: 'm2',
        role: 'assistant',
        line: 2,
        usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 },
        content: [
          { type: 'thinking', text: `maybe ${FAKE.aws}` },
          { type: 'tool_request', id: 't1', name: 'bash', arguments: { command: `curl -H 'Authorization: Bearer ${FAKE.jwt}'`, env: { list: [`DB_PASSWORD=hunter2`] }, n: 3 } },
        ],
      },
      { id: 'm3', role: 'user', line: 3, content: [{ type: 'tool_result', tool_request_id: 't1', output: PEM, is_error: false }] },
    ];
    const redacted = redactMessages(messages);
    expect(redacted).toEqual([
      { ...messages[0], content: [{ type: 'text', text: 'my key is [REDACTED:openai-key]' }] },
      {
        ...messages[1],
        content: [
          { type: 'thinking', text: 'maybe [REDACTED:aws-access-key]' },
          {
            type: 'tool_request',
            id: 't1',
            name: 'bash',
            arguments: { command: "curl -H 'Authorization: Bearer [REDACTED:jwt]'", env: { list: ['DB_PASSWORD=[REDACTED:secret-assignment]'] }, n: 3 },
          },
        ],
      },
      { ...messages[2], content: [{ type: 'tool_result', tool_request_id: 't1', output: '[REDACTED:private-key]', is_error: false }] },
    ]);
    // The input is not modified.
    expect((messages[0]!.content[0] as { text: string }).text).toContain(FAKE.openai);
  });
});

describe('the default for where a transcript goes', () => {
  it('is on for remote endpoints, off for loopback and offline strategies; the flag wins', () => {
    expect(isLoopbackUrl('http://127.0.0.1:8080/v1')).toBe(true);
    expect(isLoopbackUrl('http://localhost:11434/v1')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:8080/v1')).toBe(true);
    expect(isLoopbackUrl('https://api.openai.com/v1')).toBe(false);
    expect(isLoopbackUrl('http://127.0.0.1.evil.com/v1')).toBe(false);
    expect(isLoopbackUrl('http://10.0.0.5/v1')).toBe(false);
    expect(isLoopbackUrl('not a url')).toBe(false);
    expect(defaultRedaction(null)).toBe(false);
    expect(defaultRedaction('http://127.0.0.1:1234/v1')).toBe(false);
    expect(defaultRedaction('https://api.anthropic.com')).toBe(true);
    expect(shouldRedact(false, 'https://api.openai.com/v1')).toBe(false);
    expect(shouldRedact(true, null)).toBe(true);
    expect(shouldRedact(undefined, 'https://openrouter.ai/api/v1')).toBe(true);
  });
});

describe('--redact on the CLI', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  /** A session whose summarized part reads a file with a secret in its path, and whose kept part holds a key. */
  async function secretSession(): Promise<{ dir: string; session: string }> {
    const scratch = await scratchCopy();
    cleanup = scratch.cleanup;
    const session = join(scratch.dir, 's.jsonl');
    const lines = [
      { id: 'm1', role: 'user', content: 'Fetch the config' },
      { id: 'm2', role: 'assistant', content: [{ type: 'tool_request', id: 't1', name: 'read_file', arguments: { path: `https://deploy:hunter2@cfg.example.com/app.env` } }] },
      { id: 'm3', role: 'user', content: [{ type: 'tool_result', tool_request_id: 't1', output: `DB_PASSWORD=hunter2\nOPENAI_API_KEY=${FAKE.openai}` }] },
      { id: 'm4', role: 'assistant', content: 'Loaded.' },
      { id: 'm5', role: 'user', content: `Now call the API with ${FAKE.anthropic}` },
      { id: 'm6', role: 'assistant', content: 'Done.' },
    ];
    await writeFile(session, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    return { dir: scratch.dir, session };
  }

  it('compact --redact stores no secret in the sidecar (truncate keeps only file names, masked)', async () => {
    const { session } = await secretSession();
    const result = await runCli(['compact', '--json', '--redact', '--force', '--allow-no-gain', '--keep-recent', '3', session]);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({ status: 'compacted', redacted: true });
    const sidecar = await readFile(record!['sidecar'], 'utf8');
    expect(sidecar).not.toContain('hunter2');
    expect(JSON.parse(sidecar).read_files).toEqual(['https://deploy:[REDACTED:url-password]@cfg.example.com/app.env']);
    expect(result.stdout + result.stderr).not.toContain('hunter2');
  });

  it('without --redact truncate stores the file name as it is (offline: off by default)', async () => {
    const { session } = await secretSession();
    const result = await runCli(['compact', '--json', '--force', '--allow-no-gain', '--keep-recent', '3', session]);
    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({ status: 'compacted', redacted: false });
    expect(JSON.parse(await readFile(record!['sidecar'], 'utf8')).read_files).toEqual(['https://deploy:hunter2@cfg.example.com/app.env']);
  });

  it('context --redact prints the provider view with secrets masked', async () => {
    const { session } = await secretSession();
    await runCli(['compact', '--force', '--allow-no-gain', '--keep-recent', '3', session]);
    const plain = await runCli(['context', session]);
    expect(plain.stdout).toContain(FAKE.anthropic);
    const masked = await runCli(['context', '--redact', session]);
    expect(masked.exitCode).toBe(0);
    expect(masked.stdout).not.toContain(FAKE.anthropic);
    expect(masked.stdout).not.toContain('hunter2');
    const view = jsonLines(masked.stdout);
    expect(view.map((message) => message['id'])).toEqual(['compaction-summary', 'compaction-ack', 'm5', 'm6']);
    expect(view[2]!['content']).toEqual([{ type: 'text', text: 'Now call the API with [REDACTED:anthropic-key]' }]);
  });
});
