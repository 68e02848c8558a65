/**
 * `context` writes its view in two reads (src/fork/view-stream.ts): the view decided on a lean
 * read's skeletons, then each message written as the session is read again. Checked here: the
 * written view is the one built whole from full messages on every fixture, with and without a
 * sidecar (truncate and prune), from the lean read alone or read twice; a request body written message by message is JSON.stringify of
 * the one built whole, on random views; the repair applied message by message is the one applied
 * to the whole span, and holds no more messages as the session grows.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCompactedView } from '../../src/fork/index.js';
import { writeCompactedView } from '../../src/fork/view-stream.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import type { RequestApi } from '../../src/session/request-body.js';
import { REQUEST_APIS, requestBody } from '../../src/session/request-body.js';
import { requestBodyWriter } from '../../src/session/request-body-stream.js';
import { applyViewRepair, planViewRepair, repairStream } from '../../src/session/view-repair.js';
import { FIXTURES, ROOT, runCli } from '../helpers/cli.js';
import { sessionFilesUnder } from '../helpers/session-files.js';

const IDS = ['a', 'b', 'c', 'd'];
const NAMES = ['Bash', 'Read', 'Edit'];

const text = fc.oneof(fc.constantFrom('', '  ', '\n', 'ok', 'x "quoted" \\ é 😀', '\u2028'), fc.string({ maxLength: 12 }));
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  text.map((value) => ({ type: 'text' as const, text: value })),
  text.map((value) => ({ type: 'thinking' as const, text: value })),
  fc.record({ id: fc.constantFrom(...IDS), name: fc.constantFrom(...NAMES), value: text }).map(({ id, name, value }) => ({
    type: 'tool_request' as const,
    id,
    name,
    arguments: { command: value, n: 1 },
  })),
  fc.record({ id: fc.constantFrom(...IDS), output: text, error: fc.boolean() }).map(({ id, output, error }) => ({
    type: 'tool_result' as const,
    tool_request_id: id,
    output,
    is_error: error,
  })),
);
const messages: fc.Arbitrary<Message[]> = fc
  .array(fc.record({ role: fc.constantFrom('user' as const, 'assistant' as const, 'system' as const), content: fc.array(block, { maxLength: 4 }) }), { maxLength: 14 })
  .map((list) => list.map(({ role, content }, index) => ({ id: `m${index}`, role, content, line: index + 1 })));

/** The body `api` takes for `view`, written message by message. */
function streamedBody(view: readonly Message[], api: RequestApi, options: { model: string; maxTokens?: number }): string {
  const pieces: string[] = [];
  const writer = requestBodyWriter(api, options, view.filter((message) => message.role === 'system'), (piece) => pieces.push(piece));
  for (const message of view) writer.message(message);
  writer.end();
  return pieces.join('');
}

describe('a request body written message by message', () => {
  it('is JSON.stringify of the body built whole, for every API', () => {
    fc.assert(
      fc.property(messages, fc.constantFrom(...REQUEST_APIS), fc.option(fc.integer({ min: 1, max: 9000 }), { nil: undefined }), (view, api, maxTokens) => {
        const options = { model: 'm"odel', ...(maxTokens !== undefined ? { maxTokens } : {}) };
        expect(streamedBody(view, api, options)).toBe(JSON.stringify(requestBody(view, api, options)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('the repair applied message by message', () => {
  it('gives the repair of the whole span', () => {
    fc.assert(
      fc.property(messages, fc.nat(), (session, at) => {
        const from = session.length === 0 ? 0 : at % (session.length + 1);
        const repair = planViewRepair(session);
        const streamed: Message[] = [];
        const stream = repairStream<Message>(from, session.length, repair, (message) => streamed.push(message));
        session.slice(from).forEach((message, offset) => stream.push(message, from + offset));
        expect(streamed).toEqual(applyViewRepair(session.slice(from), from, repair));
        expect(stream.holding).toBe(0);
      }),
      { numRuns: 1000 },
    );
  });

  it('holds as many messages at once whatever the length of the session', () => {
    // Every turn: a call, a prompt before its result (the result moves up to the call), the result.
    const session = (turns: number): Message[] =>
      Array.from({ length: turns }, (_, turn): Message[] => [
        { id: `a${turn}`, role: 'assistant', content: [{ type: 'tool_request', id: `c${turn}`, name: 'Bash', arguments: {} }], line: 3 * turn + 1 },
        { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: 'go on' }], line: 3 * turn + 2 },
        { id: `r${turn}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: `c${turn}`, output: 'done', is_error: false }], line: 3 * turn + 3 },
      ]).flat();
    const mostHeld = (turns: number) => {
      const messages = session(turns);
      const stream = repairStream<Message>(0, messages.length, planViewRepair(messages), () => {});
      let most = 0;
      messages.forEach((message, index) => {
        stream.push(message, index);
        most = Math.max(most, stream.holding);
      });
      return most;
    };
    expect(mostHeld(10)).toBeGreaterThan(0);
    expect(mostHeld(10_000)).toBe(mostHeld(10));
  });
});


/** What writeCompactedView wrote: the model, the system messages and the view, or the error. */
async function written(path: string, redact: boolean, keptTextBudget?: number): Promise<{ model: string | undefined; system: Message[]; view: Message[] } | string> {
  const out = { model: undefined as string | undefined, system: [] as Message[], view: [] as Message[] };
  let ended = false;
  try {
    await writeCompactedView(path, { redact, smallFileBytes: 0, ...(keptTextBudget !== undefined ? { keptTextBudget } : {}) }, {
      start: ({ model, system }) => {
        out.model = model;
        out.system = [...system];
      },
      message: (message) => out.view.push(message),
      end: () => (ended = true),
    });
  } catch (error) {
    return String(error);
  }
  expect(ended).toBe(true);
  return out;
}

describe('the view written in two reads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compactor-context-stream-'));
    for (const variant of ['none', 'truncate', 'prune']) await cp(FIXTURES, join(dir, variant), { recursive: true });
    for (const strategy of ['truncate', 'prune']) {
      const result = await runCli(['compact', '--strategy', strategy, '--force', '--allow-no-gain', '--keep-recent', '300', '--jobs', '1', join(dir, strategy)]);
      expect(result.stderr).not.toContain('failed');
    }
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is the view built whole from full messages, on every fixture, with and without a sidecar', async () => {
    let compared = 0;
    for (const path of sessionFilesUnder(dir)) {
      // The default budget writes a compacted view from the lean read; none reads every session twice.
      for (const [redact, budget] of [[false, undefined], [true, undefined], [false, -1]] as const) {
        const whole = await loadCompactedView(path, { redact }).then(
          ({ loaded, view }) => ({ model: loaded.session.model, view }),
          (error: unknown) => String(error),
        );
        const streamed = await written(path, redact, budget);
        if (typeof whole === 'string' || typeof streamed === 'string') {
          expect(streamed, path).toEqual(whole);
          continue;
        }
        expect(streamed.view, path).toEqual(whole.view);
        expect(streamed.model, path).toEqual(whole.model);
        expect(streamed.system, path).toEqual(whole.view.filter((message) => message.role === 'system'));
        for (const api of REQUEST_APIS) {
          const options = { model: whole.model ?? 'unknown' };
          expect(streamedBody(streamed.view, api, options), `${path} ${api}`).toBe(JSON.stringify(requestBody(whole.view, api, options)));
        }
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  }, 300_000);
});

describe('the view written to stdout', () => {
  it('is written before the next piece is taken: nothing is left queued behind a pipe', async () => {
    const module = pathToFileURL(join(ROOT, 'dist', 'report', 'text-out.js')).href;
    const script = `import { textOut } from ${JSON.stringify(module)};
      const out = textOut();
      for (let i = 0; i < 128; i++) out.write('x'.repeat(65536));
      out.close();
      process.stderr.write(String(process.stdout.writableLength));`;
    const result = await execa('node', ['--input-type=module', '-e', script]);
    expect(result.stdout.length).toBe(128 * 65536);
    expect(result.stderr).toBe('0');
  });
});
