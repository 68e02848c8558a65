/**
 * A harness compacting in-process uses the package entry point: read, estimate, cut,
 * summarize, persist, and build the provider view, with nothing but the exports.
 */
import { mkdtemp, rm, copyFile } from 'node:fs/promises';
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
});
