/**
 * `compact --log-format`: by default stderr is what it always was; `json` makes every stderr line
 * one JSON event (the compaction's start and end with its numbers, warnings, errors, the
 * summarizer's lines), in this thread or in worker threads, and no event holds the API key.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scratchCopy } from '../helpers/cli.js';
import { fakeFlags, useLlmTest } from '../helpers/llm.js';
import { agentTurns, writeSession } from '../helpers/sessions.js';

const t = useLlmTest();

type Event = Record<string, any>;

/** stderr as JSON events; fails on any line that is not one. */
function events(stderr: string): Event[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const event = JSON.parse(line) as Event;
      expect(typeof event['time']).toBe('string');
      expect(['info', 'warning', 'error']).toContain(event['level']);
      return event;
    });
}

function ofSession(all: readonly Event[], session: string): Event[] {
  return all.filter((event) => event['session'] === session && event['event'].startsWith('compaction_'));
}

/** The numbers of a compaction_end that compacted, against the sidecar record on stdout. */
function expectCompactedEnd(end: Event, record: Event): void {
  expect(end).toMatchObject({
    event: 'compaction_end',
    status: 'compacted',
    session: record['session'],
    tokens_before: record['tokens_before'],
    tokens_after: record['tokens_after'],
    messages_to_summarize: record['messages_summarized'],
    first_kept_message_id: record['first_kept_message_id'],
    summary_tokens: record['summary_tokens'],
    sidecar: record['sidecar'],
  });
  expect(end['cut_index']).toBeGreaterThan(0);
  expect(end['summary_len']).toBeGreaterThan(0);
  expect(Number.isInteger(end['duration_ms']) && end['duration_ms'] >= 0).toBe(true);
}

describe('compact --log-format json', () => {
  it.each([['this thread', '1'], ['worker threads', '2']])('logs each compaction as a start and an end event, in %s', async (_where, jobs) => {
    const copy = await scratchCopy('bug.jsonl');
    try {
      const second = join(copy.dir, 'again.jsonl');
      await copyFile(join(copy.dir, 'bug.jsonl'), second);
      const sessions = [join(copy.dir, 'bug.jsonl'), second];
      const result = await runCli(['compact', '--json', '--log-format', 'json', '--jobs', jobs, '--context-limit', '80000', ...sessions]);
      expect(result.exitCode).toBe(0);
      const all = events(result.stderr);
      expect(all[0]).toMatchObject({ level: 'info', event: 'notice' });
      expect(all[0]!['message']).toMatch(/^no summarizer configured/);
      const records = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as Event);
      for (const session of sessions) {
        const [start, end, ...more] = ofSession(all, session);
        expect(more).toEqual([]);
        expect(start).toMatchObject({
          event: 'compaction_start',
          strategy: 'truncate',
          messages_to_summarize: 49,
          cut_index: 49,
          total_messages: 116,
          tokens_before: 96_212,
          has_previous: false,
        });
        expectCompactedEnd(end!, records.find((record) => record['session'] === session)!);
        expect(Date.parse(end!['time'])).toBeGreaterThanOrEqual(Date.parse(start!['time']));
      }
      // Nothing to compact: no compaction, no event (the record says why).
      const again = await runCli(['compact', '--log-format', 'json', '--jobs', jobs, '--context-limit', '80000', ...sessions]);
      expect(events(again.stderr).filter((event) => event['event'].startsWith('compaction_'))).toEqual([]);
    } finally {
      await copy.cleanup();
    }
  });

  it('reports a failed session and the end-of-batch summary as error events, one JSON object a line', async () => {
    const copy = await scratchCopy('bug.jsonl');
    try {
      const broken = join(copy.dir, 'broken.jsonl');
      await writeFile(broken, '{"id":"a","role":"user","content":"hi"}\n{oops\n');
      // Not a session: the walk skips it with a warning.
      await writeFile(join(copy.dir, 'history.jsonl'), `${JSON.stringify({ display: '/init', pastedContents: {}, timestamp: 1 })}\n`);
      const result = await runCli(['compact', '--log-format', 'json', '--context-limit', '80000', copy.dir]);
      expect(result.exitCode).toBe(1);
      const all = events(result.stderr);
      expect(all.filter((event) => event['level'] === 'warning').map((event) => event['message'])).toEqual([expect.stringMatching(/history\.jsonl/)]);
      const errors = all.filter((event) => event['level'] === 'error');
      expect(errors.map((event) => event['event'])).toEqual(['error', 'error', 'error']);
      expect(errors[0]).toMatchObject({ session: broken });
      expect(errors[0]!['message']).toMatch(new RegExp(`^${broken}:2: invalid JSON`));
      expect(errors[1]!['message']).toBe('1 of 2 sessions failed:');
    } finally {
      await copy.cleanup();
    }
  });

  it('is one error event for a bad flag value found by the command', async () => {
    const result = await runCli(['compact', '--log-format', 'json', '--reserve', '-1', 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(2);
    expect(events(result.stderr)).toMatchObject([{ level: 'error', event: 'error', message: '--reserve: must be a whole number of tokens >= 0 or a percentage of the window (like 25%), got -1' }]);
  });

  it('logs the summarizer: its request lines, a fallback compaction, a failed one; never the key', async () => {
    const KEY = `sk-proj-${'Lg4'.repeat(10)}`;
    const fake = await t.start({ expectKey: KEY, faults: [{ kind: 'status', status: 500 }] });
    const sessions = [join(t.scratch.dir, 'one.jsonl'), join(t.scratch.dir, 'two.jsonl')];
    for (const session of sessions) await writeSession(session, agentTurns(1, 4, 400, 80));
    const flags = ['--force', '--keep-recent', '200', '--max-retries', '0', '--concurrency', '1', '--log-format', 'json', '--verbose', ...fakeFlags(fake)];
    const env = { ...t.scratch.env, OPENAI_API_KEY: KEY };
    // The first session's request fails (500, no retry): --on-error truncate gives it a fallback.
    const result = await runCli(['compact', '--on-error', 'truncate', ...flags, ...sessions], { env });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toContain(KEY);
    const all = events(result.stderr);
    expect(all.some((event) => event['event'] === 'summarizer' && /^POST /.test(event['message']))).toBe(true);
    const [, firstEnd] = ofSession(all, sessions[0]!);
    expect(firstEnd).toMatchObject({ event: 'compaction_end', status: 'compacted', strategy: 'truncate', fallback: true });
    const [secondStart, secondEnd] = ofSession(all, sessions[1]!);
    expect(secondStart).toMatchObject({ event: 'compaction_start', strategy: 'summarize' });
    expect(secondEnd).toMatchObject({ event: 'compaction_end', status: 'compacted', strategy: 'summarize', fallback: false });
    expect(all.find((event) => event['level'] === 'warning')?.['message']).toMatch(/^the summarize strategy failed for 1 session/);

    // --on-error fail: the end event says failed, with the error, and the session fails.
    await t.renew();
    const failing = await t.start({ expectKey: KEY, always: { kind: 'status', status: 500 } });
    const session = join(t.scratch.dir, 'fails.jsonl');
    await writeSession(session, agentTurns(1, 4, 400, 80));
    const failed = await runCli(['compact', '--on-error', 'fail', ...flags.slice(0, -4), ...fakeFlags(failing), session], { env: { ...t.scratch.env, OPENAI_API_KEY: KEY } });
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).not.toContain(KEY);
    const [start, end] = ofSession(events(failed.stderr), session);
    expect(start).toMatchObject({ event: 'compaction_start' });
    expect(end).toMatchObject({ event: 'compaction_end', level: 'error', status: 'failed' });
    expect(end!['error']).toMatch(/500/);
  });
});

describe('compact --log-format text', () => {
  it('is the default and leaves stderr as it was: no events without --verbose', async () => {
    const copy = await scratchCopy('bug.jsonl');
    try {
      const session = join(copy.dir, 'bug.jsonl');
      const plain = await runCli(['compact', '--context-limit', '80000', session]);
      expect(plain.stderr.trim().split('\n')).toEqual([
        'compactor: no summarizer configured (--model / --base-url, COMPACTOR_MODEL or the config file); using --strategy truncate',
      ]);
      const explicit = await runCli(['compact', '--log-format', 'text', '--force', '--context-limit', '80000', session]);
      expect(explicit.stderr).toBe(plain.stderr);
    } finally {
      await copy.cleanup();
    }
  });

  it('writes the events as key=value lines with --verbose', async () => {
    const copy = await scratchCopy('bug.jsonl');
    try {
      const session = join(copy.dir, 'bug.jsonl');
      const result = await runCli(['compact', '--verbose', '--context-limit', '80000', session]);
      const lines = result.stderr.trim().split('\n');
      expect(lines[1]).toBe(
        `compactor: compaction_start session=${session} messages_to_summarize=49 cut_index=49 tokens_before=96212 strategy=truncate total_messages=116 has_previous=false`,
      );
      expect(lines[2]).toMatch(new RegExp(`^compactor: compaction_end session=${session} .*status=compacted .*tokens_after=\\d+ summary_len=\\d+ .*duration_ms=\\d+$`));
    } finally {
      await copy.cleanup();
    }
  });
});
