/**
 * A harness compacting in-process uses the package entry point: read, estimate, cut,
 * summarize, persist, and build the provider view, with nothing but the exports; or one call
 * (`compactFile`, `forkFile`) from a path to the typed outcome.
 */
import { mkdtemp, rm, copyFile, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as compactor from '../dist/index.js';
import { FIXTURES } from './helpers/cli.js';

describe('the library entry point', () => {
  it('compacts a session in-process end to end', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compactor-lib-'));
    try {
      const path = join(dir, 'bug.jsonl');
      await copyFile(join(FIXTURES, 'bug.jsonl'), path);
      const session = await compactor.readSession(path);
      const tokens = compactor.estimateAll(session.messages);
      const subject = { sessionName: 'bug.jsonl', messages: session.messages, tokens, previous: null };
      const policy = { ...compactor.DEFAULT_POLICY, contextLimit: 80_000 };
      const plan = compactor.planCompaction(subject, policy);
      expect(plan.kind).toBe('compact');
      if (plan.kind !== 'compact') return;
      const state = await compactor.runCompaction(subject, plan, compactor.truncateStrategy);
      await compactor.saveSidecar(path, state);
      const loaded = await compactor.loadSidecar(path);
      expect(loaded).toEqual(state);
      const view = compactor.buildProviderContext(session.messages, loaded);
      expect(view).toHaveLength(2 + session.messages.length - state.first_kept_index);
      expect(compactor.estimateAll(view).reduce((a, b) => a + b, 0)).toBeLessThan(tokens.reduce((a, b) => a + b, 0));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('compactFile compacts a copy in one call, then finds it up to date; a dry run plans only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compactor-lib-'));
    try {
      const path = join(dir, 'bug.jsonl');
      await copyFile(join(FIXTURES, 'bug.jsonl'), path);
      const before = await readFile(path);
      const policy = { context_limit: 80_000 };
      const planned = await compactor.compactFile(path, { policy, dryRun: true });
      expect(planned).toMatchObject({ status: 'would-compact', session: path, dryRun: true, messagesSummarized: 49 });
      await expect(stat(compactor.sidecarPath(path))).rejects.toThrow();
      const outcome = await compactor.compactFile(path, { policy });
      expect(outcome.status).toBe('compacted');
      expect(outcome).toMatchObject({ session: path, strategy: 'truncate', tokensBefore: 96_212, contextWindow: 80_000, sidecar: compactor.sidecarPath(path) });
      const state = outcome.status === 'compacted' ? outcome.state : null;
      expect(await compactor.loadSidecar(path)).toEqual(state);
      expect(state!.tokens_after).toBeLessThan(96_212);
      expect(outcome.status === 'failed' ? null : compactor.compactRecord(outcome)).toMatchObject({ status: 'compacted', tokens_after: state!.tokens_after });
      expect(await compactor.compactFile(path, { policy })).toMatchObject({ status: 'up-to-date', session: path });
      expect(await readFile(path)).toEqual(before);
      const missing = await compactor.compactFile(join(dir, 'none.jsonl'), { policy });
      expect(missing).toMatchObject({ status: 'failed', session: join(dir, 'none.jsonl') });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('forkFile compacts a copy and writes its fork in one call', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compactor-lib-'));
    try {
      const path = join(dir, 'bug.jsonl');
      await copyFile(join(FIXTURES, 'bug.jsonl'), path);
      const before = await readFile(path);
      const out = join(dir, 'forks');
      const outcome = await compactor.forkFile(path, { policy: { context_limit: 80_000 }, outDir: out });
      expect(outcome.status).toBe('forked');
      const fork = outcome.status === 'forked' ? outcome.fork : null;
      expect(fork!.fork.startsWith(out)).toBe(true);
      expect(outcome).toMatchObject({ compaction: { status: 'compacted', session: path } });
      const forked = await compactor.readSession(fork!.fork);
      expect(forked.messages.length).toBeLessThan((await compactor.readSession(path)).messages.length);
      expect(await readFile(path)).toEqual(before);
      // A session under the trigger, never compacted: nothing to compact, so nothing to fork.
      const fresh = join(dir, 'fresh.jsonl');
      await copyFile(join(FIXTURES, 'bug.jsonl'), fresh);
      const small = await compactor.forkFile(fresh, { policy: { context_limit: 10_000_000 }, outDir: join(dir, 'none') });
      expect(small).toMatchObject({ status: 'not-forked', compaction: { status: 'skipped', session: fresh } });
      await expect(stat(join(dir, 'none'))).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
