/**
 * The provider rules every view keeps (src/session/view-rules.ts), the repair of a session's own
 * tool-pairing breakage in its views (src/session/view-repair.ts), and the run-time checks: a view
 * or a summarizer input that breaks a rule is our bug and fails the session with one line.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompactionSubject } from '../../src/compaction/compact.js';
import { planCompaction, runCompaction, subjectView } from '../../src/compaction/compact.js';
import { findCutPoint } from '../../src/compaction/cut-point.js';
import { DEFAULT_POLICY } from '../../src/compaction/policy.js';
import { hashMessages } from '../../src/session/hash.js';
import type { ContentBlock, Message } from '../../src/session/model.js';
import { buildProviderContext } from '../../src/compaction/provider-view.js';
import { slimMessage } from '../../src/read/slim.js';
import { answersMessageId, applyViewRepair, applyViewRepairSplit, MISSING_RESULT_OUTPUT, planViewRepair } from '../../src/session/view-repair.js';
import { assertViewRules, viewViolations, ViewRuleError } from '../../src/session/view-rules.js';
import type { Strategy, SummaryInput } from '../../src/compaction/strategy.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { runCli } from '../helpers/cli.js';

let line = 0;
beforeEach(() => {
  line = 0;
});

const message = (id: string, role: Message['role'], ...content: ContentBlock[]): Message => ({ id, role, content, line: ++line });
const say = (text: string): ContentBlock => ({ type: 'text', text });
const call = (id: string, name = 'Bash'): ContentBlock => ({ type: 'tool_request', id, name, arguments: { command: `echo ${id}` } });
const result = (id: string, output = `output of ${id}`): ContentBlock => ({ type: 'tool_result', tool_request_id: id, output, is_error: false });
const u = (id: string, ...content: ContentBlock[]) => message(id, 'user', ...content);
const a = (id: string, ...content: ContentBlock[]) => message(id, 'assistant', ...content);

const rules = (messages: readonly Message[]) => viewViolations(messages).map((violation) => [violation.rule, violation.messageId, violation.toolCallId ?? null]);

describe('viewViolations', () => {
  it('finds nothing in a conversation whose calls are answered in place', () => {
    const messages = [u('u1', say('list')), a('a1', say('looking'), call('t1'), call('t2')), u('r1', result('t1'), result('t2')), a('a2', say('two files'))];
    expect(viewViolations(messages)).toEqual([]);
  });

  it('accepts results split over several user messages and text after them', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1'), call('t2')), u('r1', result('t1')), u('r2', result('t2'), say('[interrupted]')), u('u2', say('more'))];
    expect(viewViolations(messages)).toEqual([]);
  });

  it('reports a call with no result before the next assistant message, naming the call and its tool', () => {
    const messages = [u('u1', say('go')), a('a1', call('toolu_1', 'Bash')), a('a2', say('done'))];
    const [violation] = viewViolations(messages);
    expect(violation).toMatchObject({ rule: 'unanswered-call', messageId: 'a1', index: 1, line: 2, toolCallId: 'toolu_1' });
    expect(violation!.message).toBe('tool call "toolu_1" (Bash) has no result before the next assistant message');
  });

  it('reports a call left open at the end of the view (the last message mid-call)', () => {
    expect(rules([u('u1', say('go')), a('a1', call('t1'))])).toEqual([['unanswered-call', 'a1', 't1']]);
  });

  it('reports a result with no call before it, and a result that comes after the next assistant message', () => {
    expect(rules([u('u1', say('go')), a('a1', say('hm')), u('r1', result('ghost'))])).toEqual([['result-without-call', 'r1', 'ghost']]);
    const late = [u('u1', say('go')), a('a1', call('t1'), call('t2')), u('r1', result('t2')), a('a2', say('waiting')), u('r2', result('t1'))];
    expect(rules(late)).toEqual([
      ['unanswered-call', 'a1', 't1'],
      ['result-without-call', 'r2', 't1'],
    ]);
    expect(viewViolations(late)[1]!.message).toContain('its call is in an earlier assistant message');
  });

  it('reports a second result for one call, and results after other content', () => {
    expect(rules([a('a1', call('t1')), u('r1', result('t1')), u('r2', result('t1'))])).toEqual([['second-result', 'r2', 't1']]);
    expect(rules([a('a1', call('t1')), u('u1', say('wait')), u('r1', result('t1'))])).toEqual([['result-after-content', 'r1', 't1']]);
    expect(rules([a('a1', call('t1')), u('r1', say('first'), result('t1'))])).toEqual([['result-after-content', 'r1', 't1']]);
  });

  it('reports duplicate tool call ids and duplicate message ids', () => {
    const messages = [a('a1', call('t1')), u('r1', result('t1')), a('a1', call('t1')), u('r2', result('t1'))];
    expect(rules(messages)).toEqual([
      ['duplicate-message-id', 'a1', null],
      ['duplicate-call-id', 'a1', 't1'],
    ]);
  });

  it('reports calls and results in the wrong role', () => {
    expect(rules([u('u1', call('t1')), a('a1', result('t1'))])).toEqual([
      ['misplaced-block', 'u1', 't1'],
      ['misplaced-block', 'a1', 't1'],
    ]);
  });

  it('reports a message with nothing in it, but not one whose text we do not hold', () => {
    expect(rules([u('u1', say('go')), a('a1'), u('u2', say('  \n'))])).toEqual([
      ['empty-message', 'a1', null],
      ['empty-message', 'u2', null],
    ]);
    // A usage-only log records the size of a message and no text; a slim message has its text dropped.
    const sized: Message = { id: 'k1', role: 'assistant', content: [], line: 1, knownTokens: 40 };
    expect(viewViolations([u('u1', say('go')), sized, slimMessage(a('a2', say('answer')))])).toEqual([]);
  });

  it('accepts consecutive messages of one role (providers merge them)', () => {
    expect(viewViolations([u('u1', say('a')), u('u2', say('b')), a('a1', say('c')), a('a2', say('d'))])).toEqual([]);
  });
});

describe('ViewRuleError', () => {
  it('is one line naming the session, what broke, where, the rule, and that it is our bug', () => {
    const messages = [u('u1', say('go')), a('a1', call('toolu_01VV', 'Bash')), a('a2', say('done')), u('r1', result('ghost'))];
    expect(() => assertViewRules(messages, 'the compacted view', 'x.jsonl')).toThrow(ViewRuleError);
    try {
      assertViewRules(messages, 'the compacted view', 'x.jsonl');
    } catch (error) {
      expect((error as Error).message).toBe(
        'x.jsonl: the compacted view breaks the provider\'s rules: tool call "toolu_01VV" (Bash) has no result before the next assistant message (line 2) [rule unanswered-call], and 1 more violation; this is a bug in compactor, please report it',
      );
    }
  });
});

describe('the view repairs what the session itself broke', () => {
  const missing = (id: string) => ({ type: 'tool_result', tool_request_id: id, output: MISSING_RESULT_OUTPUT, is_error: true });
  const view = (messages: Message[]) => buildProviderContext(messages, null);

  it('leaves a sound session alone: the same message objects', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('r1', result('t1')), a('a2', say('ok'))];
    const repaired = view(messages);
    expect(repaired).toEqual(messages);
    expect(repaired.every((m, i) => m === messages[i])).toBe(true);
  });

  it('answers an interrupted call with an error result right after its message', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('u2', say('stop, do something else')), a('a2', say('ok'))];
    const repaired = view(messages);
    expect(repaired.map((m) => m.id)).toEqual(['u1', 'a1', answersMessageId(messages[1]!), 'u2', 'a2']);
    expect(repaired[2]).toMatchObject({ role: 'user', line: 2, content: [missing('t1')] });
    expect(viewViolations(repaired)).toEqual([]);
    // Without the repair the provider would refuse it.
    expect(rules(messages)).toEqual([['unanswered-call', 'a1', 't1']]);
  });

  it('answers a call in the last message (a session that stopped mid-call)', () => {
    const messages = [u('u1', say('go')), a('a1', say('running'), call('t1'))];
    expect(view(messages).at(-1)).toMatchObject({ role: 'user', content: [missing('t1')] });
    expect(viewViolations(view(messages))).toEqual([]);
  });

  it('answers only the missing one of parallel calls, before the results that are there', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1'), call('t2'), call('t3')), u('r1', result('t1')), u('r3', result('t3')), a('a2', say('ok'))];
    const repaired = view(messages);
    expect(repaired.map((m) => m.id)).toEqual(['u1', 'a1', 'a1#results', 'r1', 'r3', 'a2']);
    expect(repaired[2]!.content).toEqual([missing('t2')]);
    expect(viewViolations(repaired)).toEqual([]);
  });

  it('moves a late result up to its call, and leaves out the message it emptied', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1'), call('t2')), u('r2', result('t2')), a('a2', say('one more')), u('r1', result('t1', 'slow output'))];
    const repaired = view(messages);
    expect(repaired.map((m) => m.id)).toEqual(['u1', 'a1', 'a1#results', 'r2', 'a2']);
    expect(repaired[2]!.content).toEqual([result('t1', 'slow output')]);
    expect(viewViolations(repaired)).toEqual([]);
  });

  it('moves a result that comes after other content up before it', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('u2', say('note')), u('r1', result('t1'), say('trailing'))];
    const repaired = view(messages);
    expect(repaired.map((m) => [m.id, m.content.map((block) => block.type)])).toEqual([
      ['u1', ['text']],
      ['a1', ['tool_request']],
      ['a1#results', ['tool_result']],
      ['u2', ['text']],
      ['r1', ['text']],
    ]);
    expect(viewViolations(repaired)).toEqual([]);
  });

  it('leaves out a message with nothing in it (a prompt that was only an image the reader skipped)', () => {
    const messages = [u('u1', say('go')), u('img'), a('a1', say(' ')), a('a2', say('ok'))];
    expect(view(messages).map((m) => m.id)).toEqual(['u1', 'a2']);
  });

  it('leaves out a result with no call and a second result, keeping the rest of their messages', () => {
    const messages = [u('u1', say('go')), u('r0', result('ghost'), say('and this')), a('a1', call('t1')), u('r1', result('t1')), u('r2', result('t1'))];
    const repaired = view(messages);
    expect(repaired.map((m) => m.id)).toEqual(['u1', 'r0', 'a1', 'r1']);
    expect(repaired[1]!.content).toEqual([say('and this')]);
    expect(viewViolations(repaired)).toEqual([]);
  });

  it('gives a reused call id a new one, with its result', () => {
    const messages = [a('a1', call('c')), u('r1', result('c')), a('a2', call('c')), u('r2', result('c')), a('a3', call('c'))];
    const repaired = view(messages);
    const ids = repaired.flatMap((m) => m.content.map((block) => (block.type === 'tool_request' ? block.id : block.type === 'tool_result' ? block.tool_request_id : '')));
    expect(ids).toEqual(['c', 'c', 'c@2', 'c@2', 'c@3', 'c@3']);
    expect(viewViolations(repaired)).toEqual([]);
  });

  it('decides over the context window: a result whose call is before it is left out', () => {
    // The agent's own compaction kept messages from r1 on: its call is not in the window.
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('r1', result('t1'), say('then')), a('a2', say('ok'))];
    const window = messages.slice(2);
    expect(rules(window)).toEqual([['result-without-call', 'r1', 't1']]);
    expect(viewViolations(buildProviderContext(window, null))).toEqual([]);
  });

  it('splits a repaired span where a split turn starts, a result moved across the split staying with its call', () => {
    // The result of t1 comes only after the next prompt (u2), which starts the split turn.
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('u0', say('  ')), u('u2', say('next')), u('r1', result('t1')), a('a2', say('ok'))];
    const [history, prefix] = applyViewRepairSplit(messages, 0, planViewRepair(messages), 3);
    expect(history.map((m) => m.id)).toEqual(['u1', 'a1', 'a1#results']);
    expect(prefix.map((m) => m.id)).toEqual(['u2', 'a2']);
    expect([...viewViolations(history), ...viewViolations(prefix)]).toEqual([]);
    // A blank message where the turn starts is left out, and the split still falls there.
    const blankStart = [u('u1', say('go')), a('a1', say('ok')), u('u2', say('')), a('a2', call('t1')), u('r1', result('t1'))];
    const [before, after] = applyViewRepairSplit(blankStart, 0, planViewRepair(blankStart), 2);
    expect([before.map((m) => m.id), after.map((m) => m.id)]).toEqual([['u1', 'a1'], ['a2', 'r1']]);
  });

  it('never hides a cut that separates a call from its result: the validator still sees it', () => {
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('r1', result('t1')), a('a2', say('ok'))];
    const kept = applyViewRepair(messages.slice(2), 2, planViewRepair(messages));
    expect(rules(kept)).toEqual([['result-without-call', 'r1', 't1']]);
  });
});

describe('compaction keeps the rules, and says so when it would not', () => {
  const session = () => [
    u('u1', say('x'.repeat(4000))),
    a('a1', call('t1')),
    u('u2', say('never mind that, ' + 'y'.repeat(4000))),
    a('a2', say('z'.repeat(4000))),
    u('u3', say('next')),
    a('a3', say('done')),
  ];
  const subject = (messages: Message[]): CompactionSubject => ({ sessionName: 's.jsonl', messages, tokens: estimateAll(messages), previous: null });
  const recording = (seen: SummaryInput[]): Strategy => ({ ...truncateStrategy, summarize: (input) => (seen.push(input), truncateStrategy.summarize(input)) });

  it('hands the summarizer an interrupted call with its placeholder result', async () => {
    const s = subject(session());
    const plan = planCompaction(s, { ...DEFAULT_POLICY, force: true, keepRecentTokens: 10 });
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    const seen: SummaryInput[] = [];
    const state = await runCompaction(s, plan, recording(seen));
    expect(seen[0]!.history.map((m) => m.id)).toEqual(['u1', 'a1', 'a1#results', 'u2']);
    expect(seen[0]!.history[2]!.content).toEqual([{ type: 'tool_result', tool_request_id: 't1', output: MISSING_RESULT_OUTPUT, is_error: true }]);
    expect(viewViolations(seen[0]!.history)).toEqual([]);
    expect(viewViolations(subjectView(s, state))).toEqual([]);
  });

  it('fails, naming the rule, when a cut would hand the summarizer a result without its call', async () => {
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('r1', result('t1')), a('a2', say('ok')), u('u2', say('more')), a('a3', say('fine'))];
    const s = subject(messages);
    const cut = findCutPoint(messages, s.tokens, { keepRecentTokens: 1 });
    if (cut.kind !== 'cut') throw new Error('expected a cut');
    // A plan no rule would make: the span starts at the result, its call left behind.
    const plan = { kind: 'compact' as const, contextTokens: 100, cut: { ...cut, index: 4, splitTurnStart: null }, start: 2 };
    await expect(runCompaction(s, plan, truncateStrategy)).rejects.toThrow(
      /^the summarizer's input breaks the provider's rules: tool result for "t1" has no call to answer: .* \[rule result-without-call\]; this is a bug in compactor, please report it$/,
    );
  });
});

describe('at run time, through the CLI', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compactor-view-rules-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const record = (m: Message) => JSON.stringify({ id: m.id, role: m.role, content: m.content });
  /** A canonical session of tool loops, long enough to compact at a small budget. */
  const toolSession = (): Message[] => {
    const messages: Message[] = [u('u1', say('start'))];
    for (let i = 1; i <= 6; i++) messages.push(a(`a${i}`, say(`step ${i}`), call(`t${i}`)), u(`r${i}`, result(`t${i}`, 'o'.repeat(2000))));
    messages.push(a('done', say('finished')));
    return messages;
  };

  async function write(messages: Message[]): Promise<string> {
    const path = join(dir, 's.jsonl');
    await writeFile(path, messages.map(record).join('\n') + '\n');
    return path;
  }

  /** Points the sidecar's first kept message at `index` (a cut no rule makes), keeping it fresh. */
  async function tamper(path: string, messages: Message[], index: number): Promise<string> {
    const sidecar = join(dir, 's_compaction.json');
    const state = JSON.parse(await readFile(sidecar, 'utf8')) as Record<string, unknown>;
    const read = messages.map((m, i) => ({ ...m, line: i + 1 }));
    const tampered = { ...state, first_kept_message_id: messages[index]!.id, first_kept_index: index, summarized_hash: hashMessages(read, 0, index) };
    await writeFile(sidecar, JSON.stringify(tampered, null, 2));
    return sidecar;
  }

  it('context prints the repaired view of an interrupted session, exit 0', async () => {
    const messages = [u('u1', say('go')), a('a1', call('t1')), u('u2', say('stop'))];
    const path = await write(messages);
    const result = await runCli(['context', path]);
    expect(result.exitCode, result.stderr).toBe(0);
    const ids = result.stdout.trim().split('\n').map((l) => (JSON.parse(l) as Message).id);
    expect(ids).toEqual(['u1', 'a1', 'a1#results', 'u2']);
  });

  it('context fails with one line and prints nothing when the sidecar\'s view breaks a rule', async () => {
    const messages = toolSession();
    const path = await write(messages);
    expect((await runCli(['compact', '--strategy', 'truncate', '--force', '--keep-recent', '600', path])).exitCode).toBe(0);
    await tamper(path, messages, 4); // r2: a result whose call is summarized
    const result = await runCli(['context', path]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `compactor: error: ${path}: the compacted view breaks the provider's rules: tool result for "t2" has no call to answer: no tool call before it has this id (line 5) [rule result-without-call]; this is a bug in compactor, please report it`,
    );
  });

  it('compact fails the session with one line and writes nothing when the summarizer\'s input would break a rule', async () => {
    const messages = toolSession();
    const path = await write(messages);
    expect((await runCli(['compact', '--strategy', 'truncate', '--force', '--keep-recent', '6000', path])).exitCode).toBe(0);
    const sidecar = await tamper(path, messages, 4);
    const before = await readFile(sidecar, 'utf8');
    // Over the trigger, so the second compaction builds on the tampered sidecar (a forced one after
    // a compaction of ours takes only the keep budget's cut, which this budget does not give).
    const result = await runCli(['compact', '--strategy', 'truncate', '--context-limit', '1500', '--reserve', '0', '--keep-recent', '600', path]);
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `compactor: error: ${path}: the summarizer's input breaks the provider's rules: tool result for "t2" has no call to answer: no tool call before it has this id (line 5) [rule result-without-call]; this is a bug in compactor, please report it\n`,
    );
    expect(await readFile(sidecar, 'utf8')).toBe(before);
  });
});
