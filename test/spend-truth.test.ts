/**
 * Spend as billed, every call exactly once, on every session file under fixtures/real/ and
 * fixtures/agents/: read alone, it equals a count made by hand from the file's JSON lines
 * (helpers/agent-fixtures.ts, by rules written there, not by walking a conversation as the
 * readers do: Claude Code one call per `message.id` over the file and its `subagents/`
 * transcripts, the output of the line with a `stop_reason`, copied `forkedFrom` lines and
 * `<synthetic>` ones left out; Codex one call per `token_usage_record`, which the `token_count`
 * totals must confirm, else one per change of those totals, plus the review rollouts beside it,
 * a fork's lines that repeat its parent's rollout left out;
 * pi one call per assistant entry with usage, whatever its branch or stop reason, but for a
 * fork's entries older than its header; Gemini CLI one per message with `tokens`, thoughts as
 * output, tool-use prompt as input). The agents' sessions, read as a batch by
 * `inspect`, equal what their manifests say the provider billed while each ran (a session being
 * its file and the files its agent wrote beside it). Forks are billed once whichever way they
 * are read. The comparison with ccusage is in ccusage.test.ts.
 */
import { copyFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { priceSession } from '../src/commands/pricing.js';
import { readSession } from '../src/formats/index.js';
import { estimateAll } from '../src/tokens/estimate.js';
import { isProviderCall } from '../src/session/model.js';
import { providerCalls } from '../src/tokens/provider-calls.js';
import type { Spend } from './helpers/agent-fixtures.js';
import { agentFixtures, AGENT_FIXTURES, expectedSpend, fixtureAgent, sessionFiles, spendByHand } from './helpers/agent-fixtures.js';
import { FIXTURES, jsonLines, runCli, scratchCopy, sessionRecords } from './helpers/cli.js';

/** Every session file under a folder: `.jsonl` files and Gemini CLI's chat documents. */
function sessionFilesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...sessionFilesUnder(path));
    else if (name.endsWith('.jsonl') || (name.endsWith('.json') && dir.includes('gemini-cli'))) found.push(path);
  }
  return found;
}

const FILES = [...sessionFilesUnder(join(FIXTURES, 'real')), ...sessionFilesUnder(AGENT_FIXTURES)];

type Counted = Omit<Spend, 'prompt'>;

/** Our spend of a file read on its own, as inspect prices it (the library's ledgers). */
async function spendReadAlone(path: string): Promise<Counted> {
  const session = await readSession(path);
  const calls = providerCalls(session.messages, estimateAll(session.messages), session.recordedCompactions);
  const { spend } = (await priceSession(session, calls, { model: undefined, overrides: {}, contextLimit: undefined })).ledgers;
  return {
    requests: spend.requests,
    input: spend.inputTokens - spend.cacheReadTokens - spend.cacheWriteTokens,
    cacheRead: spend.cacheReadTokens,
    cacheWrite: spend.cacheWriteTokens,
    cacheWrite1h: spend.cacheWrite1hTokens,
    output: spend.outputTokens,
  };
}

/** An `inspect --json` ledger in the helpers' terms: `input` without the cached parts. */
function fromLedger(ledger: Record<string, number>): Counted {
  const cacheRead = ledger['cache_read_input_tokens']!;
  const cacheWrite = ledger['cache_creation_input_tokens']!;
  return {
    requests: ledger['requests']!,
    input: ledger['input_tokens']! - cacheRead - cacheWrite,
    cacheRead,
    cacheWrite,
    cacheWrite1h: ledger['cache_creation_1h_input_tokens']!,
    output: ledger['output_tokens']!,
  };
}

const withoutPrompt = ({ prompt: _prompt, ...spend }: Spend): Counted => spend;

function addCounted(a: Counted, b: Counted): Counted {
  return {
    requests: a.requests + b.requests,
    input: a.input + b.input,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheWrite1h: a.cacheWrite1h + b.cacheWrite1h,
    output: a.output + b.output,
  };
}

describe('every session file, read alone: spend equals a count made by hand', () => {
  it('finds the real and the agent-written sessions of all four agents', () => {
    expect(new Set(FILES.map(fixtureAgent))).toEqual(new Set(['claude-code', 'codex', 'pi', 'gemini-cli']));
    expect(FILES.length).toBeGreaterThanOrEqual(28);
  });

  it.each(FILES.map((path) => [relative(FIXTURES, path), path] as const))('%s', async (_name, path) => {
    expect(await spendReadAlone(path)).toEqual(withoutPrompt(spendByHand(fixtureAgent(path), path)));
  });
});

describe('fixtures/agents read as one batch: each session is billed what its manifest says', () => {
  it('every session, its file and the files beside it, exactly', async () => {
    const result = await runCli(['inspect', '--json', AGENT_FIXTURES]);
    expect(result.exitCode).toBe(0);
    const spendOf = new Map(sessionRecords(result.stdout).map((record) => [record['session'] as string, fromLedger(record['spend'])]));
    for (const { dir, manifest } of agentFixtures()) {
      const { perFile } = expectedSpend(manifest);
      const covered: string[] = [];
      for (const [session, ours] of spendOf) {
        if (!session.startsWith(`${dir}/`)) continue;
        const files = sessionFiles(manifest.agent, session).map((file) => relative(dir, file));
        const expected = files.map((file) => withoutPrompt(perFile[file]!)).reduce(addCounted);
        expect(ours, relative(AGENT_FIXTURES, session)).toEqual(expected);
        covered.push(...files);
      }
      // Every file the manifest bills belongs to one session: its own, or the one it was written beside.
      expect(covered.sort(), dir).toEqual(Object.keys(perFile).sort());
    }
  });
});

describe('a fork is billed once', () => {
  const CLAUDE = join(AGENT_FIXTURES, 'claude-code/branches-compact-abort/projects/-tmp-compactor-agents-project');
  const PARENT = 'c0de0002-0000-4000-8000-000000000002.jsonl';
  const FORK = 'c0de0002-0000-4000-8000-0000000000f0.jsonl';
  const PI = join(AGENT_FIXTURES, 'pi/rpc-branch-compact-abort-fork/sessions/--tmp-compactor-agents-project--');
  const PI_FORK = '2026-11-25T03-33-43-536Z_01a210c4-33ef-70f5-adea-b3383b91144f.jsonl';

  it('Claude Code --fork-session marks nothing: read alone, the fork counts the call it copied; beside its parent, the parent does', async () => {
    const alone = jsonLines((await runCli(['inspect', '--json', join(CLAUDE, FORK)])).stdout)[0]!;
    expect(alone['spend']).toMatchObject({ requests: 2, input_tokens: 17_475 });
    const both = sessionRecords((await runCli(['inspect', '--json', CLAUDE])).stdout);
    expect(both.map((record) => [record['session'].split('/').pop(), record['spend'].requests])).toEqual([
      [PARENT, 4],
      [FORK, 1],
    ]);
    expect(both[1]!['context']['excluded_from_spend']).toEqual([
      expect.objectContaining({ cause: 'estimated', requests: 1 }),
      expect.objectContaining({ cause: 'copied', requests: 1, input_tokens: 8_500, output_tokens: 18, billed_in: [join(CLAUDE, PARENT)] }),
    ]);
  });

  it('in a batch the first session in order counts a call both hold; the later one names it', async () => {
    // Renamed so the fork sorts first: the batch cannot know which file is the fork.
    const { dir, cleanup } = await scratchCopy();
    try {
      mkdirSync(join(dir, 'p'));
      copyFileSync(join(CLAUDE, FORK), join(dir, 'p', '00000002-0000-4000-8000-0000000000f0.jsonl'));
      copyFileSync(join(CLAUDE, PARENT), join(dir, 'p', 'ffff0002-0000-4000-8000-000000000002.jsonl'));
      const result = await runCli(['inspect', '--detail', join(dir, 'p')]);
      expect(result.stdout).toContain('    copied: 1 call, 8,518 tokens, billed in another session:\n      00000002-0000-4000-8000-0000000000f0.jsonl\n');
      const output = (await runCli(['inspect', '--json', join(dir, 'p')])).stdout;
      expect(sessionRecords(output).map((record) => record['spend'].requests)).toEqual([2, 3]);
      // the roll-up adds up the sessions as printed: the call both hold, once
      expect(jsonLines(output).at(-1)!['rollup']['total']['requests']).toBe(5);
    } finally {
      await cleanup();
    }
  });

  it('pi: a fork names its parent in its header, and its copies are older than it: context, not spend, even read alone', async () => {
    const session = await readSession(join(PI, PI_FORK));
    const copies = session.messages.filter((message) => message.copiedFrom !== undefined);
    expect(copies.map((message) => [message.id, message.callKey?.split('@')[0]])).toEqual([
      ['a731873b', 'chatcmpl_scripted0001'],
      ['8cec79a0', 'chatcmpl_scripted0004'],
      ['d2d65642', 'chatcmpl_scripted0007'],
      ['5da8f464', 'chatcmpl_scripted0009'],
    ]);
    expect(new Set(copies.map((message) => message.copiedFrom))).toEqual(
      new Set(['/tmp/compactor-agents/home/.pi/agent/sessions/--tmp-compactor-agents-project--/2026-11-25T03-33-41-486Z_01a210c4-2bed-718e-9916-662ff877e86f.jsonl']),
    );
    expect(session.offContext).toEqual([]);
  });
});

describe('calls the context does not hold, with their cause', () => {
  const causes = async (path: string) => (await readSession(join(FIXTURES, path))).offContext.map((call) => [call.cause, call.line]);

  it('pi: the abandoned branch, and aborted replies that report usage', async () => {
    expect(await causes('agents/pi/rpc-branch-compact-abort-fork/sessions/--tmp-compactor-agents-project--/2026-11-25T03-33-41-486Z_01a210c4-2bed-718e-9916-662ff877e86f.jsonl')).toEqual([
      ['abandoned-branch', 10],
    ]);
    const aborted = await causes('real/pi/pi-mono_large-session_v1.jsonl');
    expect(aborted).toHaveLength(8);
    expect(new Set(aborted.map(([cause]) => cause))).toEqual(new Set(['aborted']));
  });

  it('Codex 0.169: the call that wrote the summary a compacted item holds, and a review run in a rollout of its own', async () => {
    expect(await causes('agents/codex/auto-compact/sessions/2026/11/25/rollout-2026-11-25T03-33-08-01a210c3-ac09-7f62-a686-dc40d42deed3.jsonl')).toEqual([['compaction', 18]]);
    const review = await readSession(join(AGENT_FIXTURES, 'codex/review/sessions/2026/11/25/rollout-2026-11-25T03-33-15-01a210c3-c394-7631-8d41-89de0a358a1e.jsonl'));
    expect(review.offContext.map((call) => [call.cause, call.file.split('/').pop(), call.line])).toEqual([
      ['review', 'rollout-2026-11-25T03-33-15-01a210c3-c63b-7ca2-b654-0474e14af6d9.jsonl', 11],
    ]);
    // What the parent holds is the review's outcome and Codex's rendering of it (an assistant
    // message, as Codex sends it back): no call of its own.
    expect(review.messages.map((message) => [message.id, message.role, message.rendered ?? false])).toEqual([
      ['L6', 'user', false],
      ['L8', 'assistant', true],
    ]);
    expect(review.messages.filter(isProviderCall)).toEqual([]);
  });
});
