/**
 * The files beside a session that count in its spend travel with it as data: the walk finds them
 * once per folder (SessionFolders) and hands them to the read, which counts what it is handed.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionFolders } from '../../src/formats/companions.js';
import { readSession } from '../../src/formats/index.js';
import { expandInputFiles } from '../../src/pipeline/inputs.js';
import { FIXTURES } from '../helpers/cli.js';

const PROJECT = join(FIXTURES, 'formats', 'claude-code-project');
const SESSION_A = join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000a.jsonl');
const SESSION_B = join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000b.jsonl');
const A_TRANSCRIPTS = ['agent-a1b2c3d.jsonl', 'agent-acompact-0a1b2c.jsonl'].map((name) => join(PROJECT, 'c0ffee00-0000-4000-8000-00000000000a', 'subagents', name));
const REVIEWS = join(FIXTURES, 'agents', 'codex', 'review', 'sessions', '2026', '11', '25');
const PARENT = join(REVIEWS, 'rollout-2026-11-25T03-33-15-01a210c3-c394-7631-8d41-89de0a358a1e.jsonl');
const REVIEW = join(REVIEWS, 'rollout-2026-11-25T03-33-15-01a210c3-c63b-7ca2-b654-0474e14af6d9.jsonl');

describe('what a walk finds beside a session', () => {
  it('names a Claude Code session its transcripts, and a Codex rollout its reviews', () => {
    const folders = new SessionFolders();
    // 2.1.x keeps a session's transcripts in its own folder, 2.0.x beside it, naming the session.
    expect(folders.companionsOf(SESSION_A)).toEqual({ subagentTranscripts: A_TRANSCRIPTS, reviewRollouts: [] });
    expect(folders.companionsOf(SESSION_B)).toEqual({ subagentTranscripts: [join(PROJECT, 'agent-5e5e5e5.jsonl')], reviewRollouts: [] });
    expect(folders.companionsOf(PARENT)).toEqual({ subagentTranscripts: [], reviewRollouts: [REVIEW] });
    // The review's own rollout is no parent of reviews.
    expect(folders.companionsOf(REVIEW)?.reviewRollouts).toEqual([]);
    // Nothing beside stdin or a store's session.
    expect(folders.companionsOf('-')).toBeUndefined();
  });

  it('goes with each session a walk expands, as its sniffed format does', async () => {
    const inputs = await expandInputFiles([PROJECT]);
    const byPath = new Map(inputs.map((input) => [input.path, input.companions]));
    expect(byPath.get(SESSION_A)?.subagentTranscripts).toEqual(A_TRANSCRIPTS);
    expect(byPath.get(SESSION_B)?.subagentTranscripts).toEqual([join(PROJECT, 'agent-5e5e5e5.jsonl')]);
  });

  it('is what the read counts: a session handed none has no transcripts\' calls', async () => {
    const found = await readSession(SESSION_A, 'claude-code');
    const handedNone = await readSession(SESSION_A, 'claude-code', { companions: { subagentTranscripts: [], reviewRollouts: [] } });
    const subagentCalls = (session: typeof found) => session.offContext.filter((call) => call.cause === 'subagent').length;
    expect(subagentCalls(found)).toBeGreaterThan(0);
    expect(subagentCalls(handedNone)).toBe(0);
  });
});
