/**
 * `audit --strategy truncate` in two reads (src/pipeline/audit-session.ts, src/audit/simulated.ts):
 * the replay runs on the lean read's slim messages and each simulated compaction is audited as the
 * session is read again. The audits equal those of the session read in full (auditSidecar,
 * auditRecorded, auditReplay) on every fixture, with and without a truncate sidecar; and the second
 * read holds only the messages a compaction's view shows, the same number on a session ten times
 * longer (counted, never timed).
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRecorded, auditReplay, auditSidecar } from '../../src/audit/compactions.js';
import { FactPrefixes, simulatedAuditStream } from '../../src/audit/simulated.js';
import { FactCollector } from '../../src/compaction/facts.js';
import type { CompactionPolicy } from '../../src/compaction/policy.js';
import { auditInTwoReads } from '../../src/pipeline/audit-session.js';
import type { LoadedSession } from '../../src/read/index.js';
import { sessionInput } from '../../src/read/index.js';
import { skeletonOf } from '../../src/read/skeleton.js';
import { replayCompactions, replaySession } from '../../src/replay/simulate.js';
import type { AnyMessage, ContentBlock, Message } from '../../src/session/model.js';
import { truncateStrategy } from '../../src/strategies/truncate.js';
import { estimateAll } from '../../src/tokens/estimate.js';
import { fixturesWithTruncateSidecars, sessionFilesUnder } from '../helpers/session-files.js';
import { loadHeld } from '../helpers/held-read.js';

/** Small enough that most fixtures compact several times. */
const POLICY: CompactionPolicy = { contextLimit: 8_000, keepRecentTokens: 300, force: true, allowNoGain: true, cutRule: 'conservative', trigger: { kind: 'reserve', tokens: 2_000 } };

const simulate = async (loaded: LoadedSession<AnyMessage>, sessionName: string) => [
  {
    strategy: 'truncate',
    compactions: await replayCompactions({ read: 'lean', sessionName, messages: loaded.session.messages, tokens: loaded.tokens, policy: POLICY, strategy: truncateStrategy }),
  },
];

describe('audit --strategy truncate in two reads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fixturesWithTruncateSidecars('compactor-audit-strategy-stream-');
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('gives the audits of the session read in full and replayed, on every fixture', async () => {
    let streamed = 0;
    let simulated = 0;
    for (const path of sessionFilesUnder(dir)) {
      const whole = await loadHeld(path, { format: 'auto' }).then(
        async (loaded) => {
          const { messages } = loaded.session;
          const { previous } = loaded.subject;
          const replayed = await replaySession({ sessionName: loaded.subject.sessionName, messages, tokens: loaded.tokens, policy: POLICY, strategy: truncateStrategy });
          const audits = [
            ...(previous ? [auditSidecar(messages, previous.state, previous.firstKeptIndex)] : []),
            ...auditRecorded(loaded.session),
            ...auditReplay(messages, replayed, 'truncate'),
          ];
          return { audits, messages: messages.length, warnings: loaded.warnings };
        },
        (error: unknown) => String(error),
      );
      const two = await auditInTwoReads(sessionInput(path), 'auto', 0, simulate).then(
        (result) => result && { audits: result.audits, messages: result.loaded.session.messages.length, warnings: result.loaded.warnings },
        (error: unknown) => String(error),
      );
      if (two === null) continue;
      expect(two, path).toEqual(whole);
      streamed++;
      if (typeof two !== 'string' && two.audits.some((audit) => audit.source === 'simulated')) simulated++;
    }
    expect(streamed).toBeGreaterThan(60);
    expect(simulated).toBeGreaterThan(20);
  }, 300_000);

  it('reads a session written to a file in two reads, as the command does', async () => {
    const path = join(dir, 'long.jsonl');
    await writeFile(path, longSession(40).map((message) => JSON.stringify(message)).join('\n') + '\n');
    const result = await auditInTwoReads(sessionInput(path), 'auto', 0, simulate);
    expect(result?.audits.filter((audit) => audit.source === 'simulated').length).toBeGreaterThan(5);
  });
});

/** `turns` turns of a prompt, three tool loops with an error among them, and an answer. */
function longSession(turns: number): Message[] {
  const messages: Message[] = [];
  const push = (role: Message['role'], content: ContentBlock[]) => messages.push({ id: `m${messages.length + 1}`, role, content, line: messages.length + 1 });
  for (let t = 0; t < turns; t++) {
    push('user', [{ type: 'text', text: `Please fix the parser in module ${t}. Keep the tests green.` }]);
    for (let k = 0; k < 3; k++) {
      const id = `t${t}-${k}`;
      push('assistant', [{ type: 'tool_request', id, name: 'bash', arguments: { command: `cargo test -p m${t}` } }]);
      push('user', [{ type: 'tool_result', tool_request_id: id, output: `error[E0599]: no method in m${t}\n${'w'.repeat(2_000)}`, is_error: k === 2 }]);
    }
    push('assistant', [{ type: 'text', text: 'a'.repeat(300) }]);
  }
  return messages;
}

/** The most full messages the simulated audits hold at once over a second read of a session of `turns` turns. */
async function mostHeld(turns: number): Promise<{ most: number; audits: number }> {
  const messages = longSession(turns);
  const tokens = estimateAll(messages);
  const compactions = await replayCompactions({ sessionName: 'long', messages, tokens, policy: POLICY, strategy: truncateStrategy });
  const stream = simulatedAuditStream([{ strategy: 'truncate', compactions }], messages.map(skeletonOf), new FactPrefixes(new FactCollector(() => false)));
  let most = 0;
  messages.forEach((message, index) => {
    stream.push(message, index);
    most = Math.max(most, stream.holding);
  });
  return { most, audits: stream.finish().length };
}

describe('the simulated audits over a second read', () => {
  it('hold the same number of messages on a session ten times longer', async () => {
    const short = await mostHeld(40);
    const long = await mostHeld(400);
    expect(short.audits).toBeGreaterThan(5);
    expect(long.audits).toBeGreaterThan(10 * short.audits - 10);
    expect(long.most).toBe(short.most);
    expect(short.most).toBeLessThan(40);
  });
});
