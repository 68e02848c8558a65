/**
 * The fidelity measure's rules (README "Fidelity"), and audits of compactions an agent recorded
 * in its session (Session.recordedCompactions). Recorded compactions come only from the
 * Claude Code, Codex and pi readers, so these build the session model by hand.
 */
import { describe, expect, it } from 'vitest';
import { auditRecorded } from '../../src/audit/compactions.js';
import { measureRetention, normalizeForMatch } from '../../src/audit/fidelity.js';
import type { Fact } from '../../src/compaction/facts.js';
import { collectFacts } from '../../src/compaction/facts.js';
import type { ContentBlock, Message, Session } from '../../src/session/model.js';

let line = 0;
const message = (id: string, role: Message['role'], content: ContentBlock[]): Message => ({ id, role, content, line: ++line });
const text = (id: string, role: Message['role'], body: string) => message(id, role, [{ type: 'text', text: body }]);
const directive = (text: string): Fact => ({ kind: 'directive', text, messageId: 'x' });

describe('collectFacts', () => {
  it('lists files, first command lines, error heads and user sentences, once each', () => {
    line = 0;
    const facts = collectFacts([
      text('u1', 'user', 'Fix the build.\nDo not touch the lockfile, please!\n```\nnpm ci --force is not allowed\n```\nok'),
      message('a1', 'assistant', [
        { type: 'tool_request', id: 't1', name: 'Read', arguments: { file_path: '/repo/src/app.ts' } },
        { type: 'tool_request', id: 't2', name: 'Bash', arguments: { command: 'npm run build\necho done' } },
        { type: 'tool_request', id: 't3', name: 'shell', arguments: { command: ['bash', '-lc', 'npm run build\necho done'] } },
      ]),
      message('r1', 'user', [
        { type: 'tool_result', tool_request_id: 't1', output: 'error: this line is file content, not an error', is_error: false },
        {
          type: 'tool_result',
          tool_request_id: 't2',
          output: ['> build', ...Array.from({ length: 7 }, (_, i) => `src/x${i}.ts(1,1): error TS2304: Cannot find name 'y${i}'.`)].join('\n'),
          is_error: true,
        },
        { type: 'tool_result', tool_request_id: 't3', output: 'Permission denied', is_error: true },
      ]),
    ]);
    expect(facts.map((fact) => `${fact.kind}: ${fact.text}`)).toEqual([
      // fenced code and one-word replies are not directives
      'directive: Fix the build.',
      'directive: Do not touch the lockfile, please!',
      'file: /repo/src/app.ts',
      'command: npm run build',
      // at most five error lines an output; a flagged failure without one gives its first line
      "error: src/x0.ts(1,1): error TS2304: Cannot find name 'y0'.",
      "error: src/x1.ts(1,1): error TS2304: Cannot find name 'y1'.",
      "error: src/x2.ts(1,1): error TS2304: Cannot find name 'y2'.",
      "error: src/x3.ts(1,1): error TS2304: Cannot find name 'y3'.",
      "error: src/x4.ts(1,1): error TS2304: Cannot find name 'y4'.",
      'error: Permission denied',
    ]);
  });
});

describe('matching', () => {
  it('ignores case, quotes, backticks, emphasis and spacing', () => {
    expect(normalizeForMatch('Run `npm test` — **"Never"**\n\tskip  it')).toBe('run npm test — never skip it');
  });

  it('keeps a path by its last two segments, a command and an error only verbatim', () => {
    const facts: Fact[] = [
      { kind: 'file', text: '/Users/me/repo/src/core/session.ts', messageId: 'x' },
      { kind: 'file', text: '/Users/me/repo/README.md', messageId: 'x' },
      { kind: 'command', text: 'npm run check', messageId: 'x' },
      { kind: 'error', text: "TypeError: Cannot read properties of undefined (reading 'id')", messageId: 'x' },
    ];
    const after = [text('s', 'user', 'Edited core/session.ts and the readme. Ran the checks: npm check failed with a TypeError.')];
    const report = measureRetention(facts, after);
    expect(report.counts).toEqual({
      file: { found: 2, kept: 1 },
      command: { found: 1, kept: 0 },
      error: { found: 1, kept: 0 },
      directive: { found: 0, kept: 0 },
    });
    expect(report.retention).toBe(0.25);
  });

  it('keeps a directive paraphrased in prose, but not scattered words nor words in tool calls', () => {
    const facts = [directive('Only write end-to-end tests for the session class, never unit tests.')];
    const close = measureRetention(facts, [text('s', 'user', 'The user wants only end-to-end tests for the session class (no unit tests).')]);
    expect(close.retention).toBe(1);
    const filler = 'and then some other unrelated words go here to spread things apart '.repeat(3);
    const scattered = measureRetention(facts, [text('s', 'user', `Only write ${filler} end-to-end ${filler} session class ${filler} unit tests`)]);
    expect(scattered.retention).toBe(0);
    const inToolCall = measureRetention(facts, [
      message('a', 'assistant', [{ type: 'tool_request', id: 't', name: 'Write', arguments: { file_path: 'tests/session-class/end-to-end/only-unit-tests.ts' } }]),
    ]);
    expect(inToolCall.retention).toBe(0);
    expect(inToolCall.missing).toEqual(facts);
  });
});

describe('auditRecorded', () => {
  it('audits each recorded compaction against its summary and the messages kept until it happened', () => {
    line = 0;
    const messages: Message[] = [
      text('m1', 'user', 'Migrate the config loader to zod. Keep the old env variable names.'),
      message('m2', 'assistant', [{ type: 'tool_request', id: 't1', name: 'bash', arguments: { command: 'npm test -- config' } }]),
      message('m3', 'user', [{ type: 'tool_result', tool_request_id: 't1', output: 'FAIL config.test.ts\nexit code: 1', is_error: true }]),
      message('m4', 'assistant', [{ type: 'tool_request', id: 't2', name: 'edit', arguments: { path: '/w/app/src/config/load.ts' } }]),
      message('m5', 'user', [{ type: 'tool_result', tool_request_id: 't2', output: 'edited', is_error: false }]),
      text('m6', 'user', 'Now also validate the port range.'),
    ];
    line = 20; // the compaction entry sits on line 20 of the file
    const summary = '## Goal\nMigrate the config loader to zod, keeping the old env variable names.\n\n<modified-files>\nsrc/config/load.ts\n</modified-files>';
    const after: Message[] = [
      // some readers keep the summary as a user message: it is no fact of a later compaction
      text('m7', 'user', 'The conversation history before this point was compacted into the following summary:\n' + summary),
      text('m8', 'user', 'And document it.'),
    ];
    line = 30;
    const second = `${summary}\nAlso: validate the port range.`;
    const session: Session = {
      path: 'x.jsonl',
      format: 'test',
      messages: [...messages, ...after, text('m9', 'assistant', 'Documented.')],
      recordedCompactions: [
        { firstKeptIndex: 5, atIndex: 5, summary, tokensBefore: 1234, line: 20 },
        { firstKeptIndex: 7, atIndex: 7, summary: second, line: 30 },
      ],
      offContext: [],
      warnings: [],
    };
    const [first, next] = auditRecorded(session);
    expect(first).toMatchObject({ source: 'recorded', strategy: 'recorded', number: 1, firstKeptIndex: 5, endIndex: 6, tokensBefore: 1234, tokensAfter: null });
    expect(first!.report.counts).toEqual({
      file: { found: 1, kept: 1 },
      command: { found: 1, kept: 0 },
      error: { found: 1, kept: 0 },
      directive: { found: 2, kept: 2 },
    });
    expect(first!.report.missing.map((fact) => fact.text)).toEqual(['npm test -- config', 'FAIL config.test.ts']);
    expect(first!.report.retention).toBe(0.6);

    expect(next).toMatchObject({ number: 2, firstKeptIndex: 7, endIndex: 8, tokensBefore: null });
    // the span is everything before m8: m6's request is new, m7 (the first summary) is skipped
    expect(next!.report.counts.directive).toEqual({ found: 3, kept: 3 });
    expect(next!.report.retention).toBe(4 / 6);
  });
});
