/**
 * `compactor compact --strategy summarize` end to end: the built CLI against a real HTTP
 * server on 127.0.0.1 (test/helpers/fake-provider.ts); nothing in the openai client is mocked.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { jsonLines, runCli } from '../helpers/cli.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { fakeFlags, listDir, useLlmTest } from '../helpers/llm.js';
import { agentTurns, appendToSession, filler, writeSession } from '../helpers/sessions.js';

const t = useLlmTest();

const sidecarOf = async (session: string) => JSON.parse(await readFile(session.replace(/\.jsonl$/, '_compaction.json'), 'utf8'));

describe('LLM compaction against the fake provider', () => {
  test('the summarizer receives the summarization prompt and its reply becomes the summary', async () => {
    const fake = await t.start();
    const session = join(t.scratch.dir, 'small.jsonl');
    await writeSession(session, agentTurns(1, 6, 500, 100));
    const result = await runCli(['compact', session, '--force', '--keep-recent', '300', '--json', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0]!;
    expect(request.answered).toBe('summary');
    expect(request.body.model).toBe('fake-model');
    expect(request.system).toMatch(/do not\s+answer it/);
    expect(request.user).toMatch(/^<conversation>\n\[User\]: TURN-1 request: please fix bug 1 in src\/module1\.ts\n/);
    expect(request.user).toContain('[Tool call]: read_file(path="src/module1.ts")');
    expect(request.user).toContain('[Tool call]: edit_file(path="src/module3.ts", old="bug", new="fix")');
    expect(request.user).toContain('\n</conversation>\n');
    for (const section of ['## Goal', '## Constraints & Preferences', '### Done', '### In Progress', '## Key Decisions', '## Next Steps', '## Critical Context']) {
      expect(request.user).toContain(section);
    }
    expect(request.user).not.toContain('<previous-summary>');

    const sidecar = await sidecarOf(session);
    expect(sidecar.strategy).toBe('summarize');
    expect(sidecar.fallback).toBe(false);
    expect(sidecar.summary).toContain('fake summary-1 by fake-model');
    // The model's own file list is dropped; ours comes from the tool calls.
    expect(sidecar.summary).not.toContain('model/invented/path.ts');
    expect(sidecar.summary).toContain('<read-files>\nsrc/module1.ts\nsrc/module2.ts\nsrc/module4.ts\n</read-files>');
    expect(sidecar.summary).toContain('<modified-files>\nsrc/module3.ts\n</modified-files>');
    expect(sidecar.usage).toEqual({ input_tokens: request.promptTokens, output_tokens: Math.ceil(request.reply!.length / 4) });
    expect(sidecar.details).toMatchObject({ model: 'fake-model', requests: 1, chunks: 1, overflow_splits: 0 });

    const [record] = jsonLines(result.stdout);
    expect(record).toMatchObject({
      session,
      status: 'compacted',
      strategy: 'summarize',
      fallback: false,
      summarizer_input_tokens: sidecar.usage.input_tokens,
      summarizer_output_tokens: sidecar.usage.output_tokens,
    });
  });

  test('a second compact sends <previous-summary> and only the new span', async () => {
    const fake = await t.start();
    const session = join(t.scratch.dir, 'grow.jsonl');
    await writeSession(session, agentTurns(1, 6, 500, 100));
    const flags = ['--force', '--keep-recent', '300', ...fakeFlags(fake)];
    expect((await runCli(['compact', session, ...flags], { env: t.scratch.env })).exitCode).toBe(0);
    const first = await sidecarOf(session);
    expect(first.first_kept_message_id).toBe('u5');

    await appendToSession(session, agentTurns(7, 4, 500, 100));
    const second = await runCli(['compact', session, ...flags], { env: t.scratch.env });
    expect(second.exitCode).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const update = fake.requests[1]!.user;
    expect(update).toContain('<previous-summary>\n## Goal\nfake summary-1 by fake-model');
    // The previous file lists are not sent back to be merged by the model.
    expect(update.slice(update.indexOf('<previous-summary>'))).not.toContain('<read-files>');
    const conversation = update.slice(update.indexOf('<conversation>'), update.indexOf('</conversation>'));
    expect(conversation).toMatch(/^<conversation>\n\[User\]: TURN-5 request/);
    for (let turn = 1; turn <= 4; turn++) expect(conversation).not.toContain(`TURN-${turn} `);
    expect(conversation).toContain('TURN-8 request');
    expect(conversation).not.toContain('TURN-9 request');

    const state = await sidecarOf(session);
    expect(state.compactions).toBe(2);
    expect(state.summary).toContain('fake summary-2');
    expect(state.summary).toContain('merged summary-1');
    expect(state.first_kept_message_id).toBe('u9');
    // Files are cumulative across both compactions.
    expect(state.summary).toContain('src/module1.ts');
    expect(state.summary).toContain('src/module8.ts');
    expect(state.summary).not.toContain('src/module10.ts');
    expect(state.modified_files).toEqual(['src/module3.ts', 'src/module6.ts']);
  });

  test('a failed summarizer falls back to a truncate sidecar marked fallback with --on-error truncate', async () => {
    const fake = await t.start({ always: { kind: 'status', status: 400, body: JSON.stringify({ error: { message: 'model not found' } }) } });
    const session = join(t.scratch.dir, 'fallback.jsonl');
    await writeSession(session, agentTurns(1, 6, 500, 100));
    const result = await runCli(['compact', session, '--force', '--keep-recent', '300', '--on-error', 'truncate', '--json', ...fakeFlags(fake)], {
      env: t.scratch.env,
    });
    expect(result.exitCode).toBe(0);
    const state = await sidecarOf(session);
    expect(state.strategy).toBe('truncate');
    expect(state.fallback).toBe(true);
    expect(state.summary).toMatch(/^\[Compacted 16 messages: 4 user, 8 assistant, 4 tool results\]\n\n<read-files>/);
    expect(state.details.fallback_reason).toBe('summarizer endpoint answered 400 model not found');
    expect(jsonLines(result.stdout)[0]).toMatchObject({ status: 'compacted', fallback: true, strategy: 'summarize' });
    expect(result.stderr).toContain('the summarize strategy failed for 1 session, given a truncate sidecar (fallback) (--on-error truncate):');
  });

  test('a fallback after an LLM summary keeps that summary in front of the truncate line', async () => {
    const good = await t.start();
    const session = join(t.scratch.dir, 'keep.jsonl');
    await writeSession(session, agentTurns(1, 6, 500, 100));
    const flags = ['--force', '--keep-recent', '300', '--model', 'fake-model', '--on-error', 'truncate'];
    expect((await runCli(['compact', session, ...flags, '--base-url', good.url], { env: t.scratch.env })).exitCode).toBe(0);
    await good.close();
    await appendToSession(session, agentTurns(7, 4, 500, 100));
    // Nothing listens on the old port any more: a connection error after the SDK's retries.
    const result = await runCli(['compact', session, ...flags, '--base-url', good.url, '--max-retries', '0'], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    const state = await sidecarOf(session);
    expect(state).toMatchObject({ strategy: 'truncate', fallback: true, compactions: 2, first_kept_message_id: 'u9' });
    expect(state.details.fallback_reason).toMatch(/^cannot reach the summarizer at /);
    expect(state.summary).toMatch(/^## Goal\nfake summary-1 by fake-model\n[\s\S]*\n\n\[Compacted 16 messages: 4 user, 8 assistant, 4 tool results\]\n\n<read-files>\n/);
    expect(state.summary.match(/<read-files>/g)).toHaveLength(1);
    expect(state.summary).toContain('src/module8.ts');
  });
});

test('a transcript ten times the summarizer window compacts by chunked folding', async () => {
  const window = 4_000;
  const maxSummary = 500;
  const fake = await t.start({ contextLimit: window });
  const session = join(t.scratch.dir, 'long.jsonl');
  await writeSession(session, agentTurns(1, 60));
  const result = await runCli(
    ['compact', session, '--force', '--keep-recent', '2000', '--summarizer-context', String(window), '--max-summary-tokens', String(maxSummary), '--json', ...fakeFlags(fake)],
    { env: t.scratch.env },
  );
  expect(result.exitCode).toBe(0);
  const state = await sidecarOf(session);
  const transcriptTokens = state.usage.input_tokens; // every chunk is sent once, plus prompts
  expect(transcriptTokens).toBeGreaterThan(10 * window);
  expect(fake.requests.every((request) => request.answered === 'summary')).toBe(true);
  expect(fake.requests.length).toBeGreaterThanOrEqual(10);
  for (const request of fake.requests) expect(request.promptTokens + request.maxTokens).toBeLessThanOrEqual(window);
  // Each fold after the first carries the summary the previous request produced.
  fake.requests.forEach((request, index) => {
    if (index === 0) expect(request.user).not.toContain('<previous-summary>');
    else expect(request.user).toContain(`<previous-summary>\n## Goal\nfake summary-${index} by`);
    expect(request.user).toContain(`Part ${index + 1} of ${fake!.requests.length} of the transcript follows.`);
  });
  // Every message made it into some chunk, in order.
  const sent = fake.requests.map((request) => request.user).join('\n');
  for (let turn = 1; turn <= 57; turn++) expect(sent).toContain(`TURN-${turn} request`);
  expect(state.summary).toContain(`fake summary-${fake.requests.length}`);
  // Every request ran on the run's one signal: none may leave a listener on it.
  expect(fake.requests.length).toBeGreaterThan(10);
  expect(result.stderr).not.toContain('MaxListenersExceededWarning');
  expect(state.details).toMatchObject({ requests: fake.requests.length, chunks: fake.requests.length, overflow_splits: 0, rejected_replies: [] });
});

/** Three short turns, then a long one of eight tool steps that the cut splits; compacted against the fake. */
async function compactSplitTurn(fake: FakeProvider) {
  const session = join(t.scratch.dir, 'split.jsonl');
  const longTurn = [{ id: 'u9', role: 'user', content: 'TURN-9 request: run the whole migration' }];
  for (let step = 1; step <= 8; step++) {
    longTurn.push({ id: `s${step}`, role: 'assistant', content: [{ type: 'tool_request', id: `x${step}`, name: 'bash', arguments: { command: `step ${step}` } }] } as never);
    longTurn.push({ id: `o${step}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: `x${step}`, output: filler(`step ${step}`, 1_200) }] } as never);
  }
  await writeSession(session, [...agentTurns(1, 3, 500, 100), ...longTurn]);
  const result = await runCli(['compact', session, '--force', '--keep-recent', '700', '--cut-rule', 'tool-safe', ...fakeFlags(fake)], { env: t.scratch.env });
  return { session, result };
}

test('a split turn gets a turn-prefix summary of its own', async () => {
  const fake = await t.start();
  const { session, result } = await compactSplitTurn(fake);
  expect(result.exitCode).toBe(0);
  expect(fake.requests).toHaveLength(2);
  const [history, prefix] = fake.requests;
  expect(history!.user).toContain('## Goal');
  expect(history!.user).not.toContain('TURN-9');
  expect(prefix!.user).toMatch(/^<conversation>\n\[User\]: TURN-9 request: run the whole migration/);
  expect(prefix!.user).toContain('## Done So Far');
  const state = await sidecarOf(session);
  expect(state.first_kept_message_id).toMatch(/^s\d$/);
  expect(state.summary).toContain('fake summary-1');
  expect(state.turn_prefix_summary).toContain('turn prefix summary-2');
  expect(state.usage.input_tokens).toBe(history!.promptTokens + prefix!.promptTokens);
});

test('a turn prefix summarized in the checkpoint sections is accepted', async () => {
  const fake = await t.start({ always: { kind: 'checkpoint' } });
  const { session, result } = await compactSplitTurn(fake);
  expect(result.exitCode).toBe(0);
  expect(fake.requests.map((request) => request.answered)).toEqual(['checkpoint', 'checkpoint']);
  expect(fake.requests[1]!.user).toContain('## Done So Far');
  const state = await sidecarOf(session);
  expect(state.turn_prefix_summary).toMatch(/^## Goal\nfake summary-2 by fake-model\n/);
  expect(state.details).toMatchObject({ requests: 2, rejected_replies: [] });
});

describe('choosing the strategy and reading settings', () => {
  test('with no summarizer configured, compact uses truncate and says so once', async () => {
    const a = join(t.scratch.dir, 'a.jsonl');
    const b = join(t.scratch.dir, 'b.jsonl');
    await writeSession(a, agentTurns(1, 4, 300, 50));
    await writeSession(b, agentTurns(1, 4, 300, 50));
    const result = await runCli(['compact', a, b, '--force', '--keep-recent', '100', '--json'], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(result.stderr.match(/no summarizer configured/g)).toHaveLength(1);
    expect(jsonLines(result.stdout).map((record) => record.strategy)).toEqual(['truncate', 'truncate']);
  });

  test('--strategy summarize without a summarizer is a usage error', async () => {
    const session = join(t.scratch.dir, 'a.jsonl');
    await writeSession(session, agentTurns(1, 2, 300, 50));
    const result = await runCli(['compact', session, '--strategy', 'summarize'], { env: t.scratch.env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--strategy summarize needs a summarizer');
  });

  test('the XDG config file makes summarize the default; env overrides the file and flags override env', async () => {
    const fake = await t.start();
    await mkdir(join(t.scratch.configHome, 'session-compactor'), { recursive: true });
    await writeFile(
      join(t.scratch.configHome, 'session-compactor', 'config.json'),
      JSON.stringify({ base_url: fake.url, model: 'from-config', max_summary_tokens: 700, instructions: 'keep the SQL' }),
    );
    const args = async (name: string) => {
      const session = join(t.scratch.dir, `${name}.jsonl`);
      await writeSession(session, agentTurns(1, 4, 300, 50));
      return ['compact', session, '--force', '--keep-recent', '100'];
    };

    expect((await runCli(await args('file'), { env: t.scratch.env })).exitCode).toBe(0);
    expect(fake.requests[0]!.body).toMatchObject({ model: 'from-config', max_tokens: 700 });
    expect(fake.requests[0]!.user).toContain('<focus>\nkeep the SQL\n</focus>');

    await runCli(await args('env'), { env: { ...t.scratch.env, COMPACTOR_MODEL: 'from-env', COMPACTOR_MAX_SUMMARY_TOKENS: '600' } });
    expect(fake.requests[1]!.body).toMatchObject({ model: 'from-env', max_tokens: 600 });

    await runCli([...(await args('flag')), '--model', 'from-flag'], { env: { ...t.scratch.env, COMPACTOR_MODEL: 'from-env' } });
    expect(fake.requests[2]!.body.model).toBe('from-flag');
  });

  test('an invalid config file is an error naming the file', async () => {
    const dir = join(t.scratch.configHome, 'session-compactor');
    await mkdir(dir, { recursive: true });
    const session = join(t.scratch.dir, 'a.jsonl');
    await writeSession(session, agentTurns(1, 2, 300, 50));

    await writeFile(join(dir, 'config.json'), JSON.stringify({ model: 'm', concurrency: 0 }));
    let result = await runCli(['compact', session], { env: t.scratch.env });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`compactor: ${join(dir, 'config.json')}: invalid config: concurrency: must be a whole number from 1 to 64, got 0`);

    await writeFile(join(dir, 'config.json'), JSON.stringify({ model: 'm', api_key: 'sk-nope' }));
    result = await runCli(['compact', session], { env: t.scratch.env });
    expect(result.stderr).toContain('invalid config: API keys are not read from files; name the variable holding it with api_key_env');
    expect(result.stderr).not.toContain('sk-nope');

    await writeFile(join(dir, 'config.json'), '{"model": ');
    result = await runCli(['compact', session], { env: t.scratch.env });
    expect(result.stderr).toContain(`${join(dir, 'config.json')}: config is not JSON`);

    result = await runCli(['compact', session, '--config', join(dir, 'missing.json')], { env: t.scratch.env });
    expect(result.stderr).toContain(`${join(dir, 'missing.json')}: cannot read config`);

    result = await runCli(['compact', session, '--force'], { env: { ...t.scratch.env, XDG_CONFIG_HOME: join(t.scratch.dir, 'none'), COMPACTOR_TIMEOUT: 'soon' } });
    expect(result.stderr).toMatch(/environment variable COMPACTOR_TIMEOUT: .*number/);
  });

  test('--instructions @file appends the focus to the prompt', async () => {
    const fake = await t.start();
    const session = join(t.scratch.dir, 'focus.jsonl');
    await writeSession(session, agentTurns(1, 4, 300, 50));
    const focusFile = join(t.scratch.dir, 'focus.txt');
    await writeFile(focusFile, 'Track every migration file.\n');
    const result = await runCli(['compact', session, '--force', '--keep-recent', '100', '--instructions', `@${focusFile}`, ...fakeFlags(fake)], { env: t.scratch.env });
    expect(result.exitCode).toBe(0);
    expect(fake.requests[0]!.user).toContain('<focus>\nTrack every migration file.\n</focus>');
    const missing = await runCli(['compact', session, '--force', '--instructions', '@/nonexistent/focus.txt', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/focus.txt: cannot read instructions');
  });

  test('--dry-run reads no API key: it needs none, even for api.openai.com or a named variable that is not set', async () => {
    const session = join(t.scratch.dir, 'plan.jsonl');
    await writeSession(session, agentTurns(1, 4, 300, 50));
    for (const extra of [[], ['--api-key-env', 'NOT_SET_ANYWHERE']]) {
      const result = await runCli(['compact', session, '--dry-run', '--force', '--keep-recent', '100', '--model', 'gpt-4o-mini', ...extra], { env: t.scratch.env });
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain(`would compact ${session}`);
    }
    // Without --dry-run the key is still required up front.
    const real = await runCli(['compact', session, '--force', '--model', 'gpt-4o-mini'], { env: t.scratch.env });
    expect(real.exitCode).toBe(2);
    expect(real.stderr).toContain('https://api.openai.com/v1 needs an API key: set OPENAI_API_KEY');
    expect(await listDir(t.scratch.dir)).toEqual(['plan.jsonl']);
  });

  test('the files in the sessions directory are only the session and its sidecar', async () => {
    const fake = await t.start();
    const session = join(t.scratch.dir, 'clean.jsonl');
    await writeSession(session, agentTurns(1, 4, 300, 50));
    await runCli(['compact', session, '--force', '--keep-recent', '100', ...fakeFlags(fake)], { env: t.scratch.env });
    expect(await listDir(t.scratch.dir)).toEqual(['clean.jsonl', 'clean_compaction.json']);
  });
});
