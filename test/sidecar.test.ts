import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planCompaction, runCompaction } from '../src/compaction/compact.js';
import { DEFAULT_POLICY } from '../src/compaction/policy.js';
import type { CompactionState } from '../src/compaction/state.js';
import { InputError } from '../src/errors.js';
import type { Message } from '../src/session/model.js';
import { checkFreshness } from '../src/sidecar/staleness.js';
import { createTempSweeper, loadSidecar, saveSidecar, sidecarPath } from '../src/sidecar/store.js';
import { truncateStrategy } from '../src/strategies/truncate.js';
import { estimateAll } from '../src/tokens/estimate.js';
import { resetIds, turn } from './support/sessions.js';

let dir: string;
beforeEach(async () => {
  resetIds();
  dir = await mkdtemp(join(tmpdir(), 'compactor-sidecar-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function compacted(messages: Message[]): Promise<CompactionState> {
  const subject = { sessionName: 'session.jsonl', messages, tokens: estimateAll(messages), previous: null };
  const plan = planCompaction(subject, { ...DEFAULT_POLICY, force: true, keepRecentTokens: 50 });
  if (plan.kind !== 'compact') throw new Error('expected a compaction');
  return runCompaction(subject, plan, truncateStrategy);
}

describe('sidecar store', () => {
  it('puts the sidecar beside the session, named after it', () => {
    expect(sidecarPath('/a/b/rollout-1.jsonl')).toBe('/a/b/rollout-1_compaction.json');
    expect(sidecarPath('notes')).toBe('notes_compaction.json');
  });

  it('saves and loads a state unchanged, leaving no temporary file', async () => {
    const session = join(dir, 'session.jsonl');
    const state = await compacted([...turn(2), ...turn(2)]);
    await saveSidecar(session, state);
    expect(await loadSidecar(session)).toEqual(state);
    expect(await readdir(dir)).toEqual(['session_compaction.json']);
  });

  it('returns null when there is no sidecar', async () => {
    const session = join(dir, 'session.jsonl');
    await saveSidecar(session, await compacted([...turn(2), ...turn(2)]));
    await rm(sidecarPath(session));
    expect(await loadSidecar(session)).toBeNull();
  });

  it.each([
    ['not JSON', '{"format_version": 1,', /corrupt sidecar \(not valid JSON\)/],
    ['from a newer version', JSON.stringify({ format_version: 2 }), /format version 2 is newer/],
    ['missing fields', JSON.stringify({ format_version: 1, session: 'session.jsonl' }), /invalid sidecar: strategy/],
  ])('refuses a sidecar that is %s, naming the file', async (_, text, message) => {
    const session = join(dir, 'session.jsonl');
    await writeFile(sidecarPath(session), text);
    const error = await loadSidecar(session).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).location).toMatch(message);
    expect((error as InputError).location.startsWith(sidecarPath(session))).toBe(true);
  });

  it('refuses a pruned sidecar that holds a summary: it is neither kind', async () => {
    const session = join(dir, 'session.jsonl');
    const state = await compacted([...turn(2), ...turn(2)]);
    const pruned = { tool_request_id: 't1', message_id: 'm1', tool: 'Read', arguments: '{}', tokens: 10 };
    await writeFile(sidecarPath(session), JSON.stringify({ ...state, pruned_outputs: [pruned] }));
    const error = await loadSidecar(session).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).location).toMatch(/invalid sidecar: summary: a pruned sidecar \(pruned_outputs set\) holds no summary/);
    // The same with no summary is a prune's sidecar, loaded as one.
    await writeFile(sidecarPath(session), JSON.stringify({ ...state, summary: '', turn_prefix_summary: null, pruned_outputs: [pruned] }));
    expect((await loadSidecar(session))?.pruned_outputs).toEqual([pruned]);
  });

  it('refuses a sidecar written for another session', async () => {
    const state = await compacted([...turn(2), ...turn(2)]);
    await writeFile(sidecarPath(join(dir, 'session.jsonl')), JSON.stringify({ ...state, session: 'other.jsonl' }));
    await expect(loadSidecar(join(dir, 'session.jsonl'))).rejects.toThrow(/belongs to "other.jsonl"/);
  });

  it('writes pretty JSON ending in a newline', async () => {
    const session = join(dir, 'session.jsonl');
    await saveSidecar(session, await compacted([...turn(2), ...turn(2)]));
    const text = await readFile(sidecarPath(session), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "summary": ');
  });
});

describe('createTempSweeper', () => {
  it("removes a session's own leftovers only, also when names hold the sidecar suffix", async () => {
    // Sessions whose names are prefixes of each other, or hold `_compaction.json.` themselves.
    const sessions = ['s.jsonl', 's.1.jsonl', 'x_compaction.json.7.jsonl', 'x.jsonl'].map((name) => join(dir, name));
    const dead = 999999999;
    const names = [
      's_compaction.json.123', // s's temp
      `s_compaction.json.lock.${dead}`, // s's lock staging, its process gone
      `s_compaction.json.lock.${process.pid}`, // a live process's staging: left alone
      's_compaction.json.lock', // the lock itself: never swept
      's_compaction.json.12a', // not a temp
      's.1_compaction.json.5', // s.1's temp
      'x_compaction.json.7_compaction.json.42', // the third session's temp
      'x_compaction.json.8', // x's temp
    ];
    for (const name of names) await writeFile(join(dir, name), '');
    const sweep = createTempSweeper();
    expect(sweep(sessions[0]!)).toEqual([join(dir, 's_compaction.json.123'), join(dir, `s_compaction.json.lock.${dead}`)]);
    expect(sweep(sessions[1]!)).toEqual([join(dir, 's.1_compaction.json.5')]);
    expect(sweep(sessions[2]!)).toEqual([join(dir, 'x_compaction.json.7_compaction.json.42')]);
    expect(sweep(sessions[3]!)).toEqual([join(dir, 'x_compaction.json.8')]);
    // Listed once: what a sweep removed is not removed again, and nothing new is looked at.
    await writeFile(join(dir, 's_compaction.json.77'), '');
    expect(sweep(sessions[0]!)).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual(
      [`s_compaction.json.lock.${process.pid}`, 's_compaction.json.lock', 's_compaction.json.12a', 's_compaction.json.77'].sort(),
    );
  });
});

describe('checkFreshness', () => {
  it('is fresh for the session it was written for', async () => {
    const messages = [...turn(2), ...turn(2)];
    const state = await compacted(messages);
    expect(checkFreshness(state, messages)).toEqual({ kind: 'fresh', firstKeptIndex: state.first_kept_index });
  });

  it('stays fresh when messages are appended', async () => {
    const messages = [...turn(2), ...turn(2)];
    const state = await compacted(messages);
    expect(checkFreshness(state, [...messages, ...turn(1)]).kind).toBe('fresh');
  });

  it('is stale when a summarized message changed', async () => {
    const messages = [...turn(2), ...turn(2)];
    const state = await compacted(messages);
    const edited = messages.map((m, i) => (i === 0 ? { ...m, content: [{ type: 'text' as const, text: 'edited' }] } : m));
    expect(checkFreshness(state, edited)).toEqual({ kind: 'stale', reason: 'the summarized messages changed since it was written' });
  });

  it('is stale when its first kept message is gone', async () => {
    const messages = [...turn(2), ...turn(2)];
    const state = await compacted(messages);
    expect(checkFreshness(state, messages.slice(0, state.first_kept_index)).kind).toBe('stale');
  });
});
