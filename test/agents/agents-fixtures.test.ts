/**
 * The session files the real agents wrote (fixtures/agents/, made by tools/agents/make-fixtures.js):
 * each file holds exactly the usage the scripted provider reported for the calls billed in it,
 * counted straight from the file's lines (opencode: from its database or JSON storage, one
 * `step-finish` part a call, tools/agents/opencode-db.js); our reader reads every one; no file
 * carries the key.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { opencodeSessions, stepUsage } from '../../tools/agents/opencode-db.js';
import { agentFixtures, callUsage, expectedSpend, usageInFile } from '../helpers/agent-fixtures.js';

const fixtures = agentFixtures();

describe('fixtures/agents', () => {
  it('holds the scenarios of all four agents (opencode in both its storages)', () => {
    const agents = new Set(fixtures.map((fixture) => fixture.manifest.agent));
    expect([...agents].sort()).toEqual(['claude-code', 'codex', 'opencode', 'opencode-json', 'pi']);
    expect(fixtures.length).toBeGreaterThanOrEqual(8);
  });

  describe.each(fixtures.map((fixture) => [fixture.name, fixture] as const))('%s', (_name, { dir, manifest }) => {
    /** opencode's sessions are addresses in its store (`opencode.db#<id>`), every other agent's its files. */
    const stored = manifest.sessions?.map((session) => session.address) ?? [];
    const transcripts = [...manifest.files.filter((file) => file.path.endsWith('.jsonl')), ...stored.map((path) => ({ path }))];

    it('says which agent version wrote it and how', () => {
      expect(manifest.package).toMatch(/@\d+\.\d+\.\d+$/);
      expect(manifest.version).toContain(manifest.package.split('@').pop());
      expect(manifest.commands.length).toBeGreaterThan(0);
      expect(transcripts.length).toBeGreaterThan(0);
    });

    it('each file records exactly the usage scripted for the calls billed in it, and copies only calls billed elsewhere', () => {
      if (manifest.agent === 'opencode' || manifest.agent === 'opencode-json') {
        // opencode records no response id: its steps, in order, are the calls billed in the session, in order.
        for (const session of opencodeSessions(dir)) {
          const billed = manifest.calls.filter((call) => call.billedIn === session.address).map(callUsage);
          const recorded = session.steps.map(({ tokens }) => stepUsage(tokens));
          expect(recorded, session.address).toEqual(billed);
        }
        return;
      }
      for (const file of transcripts) {
        const recorded = usageInFile(manifest.agent, readFileSync(join(dir, file.path), 'utf8'), join(dir, file.path));
        const billed = manifest.calls.filter((call) => call.billedIn === file.path && call.usage !== null);
        const copied = new Set(manifest.calls.filter((call) => call.copiedTo.includes(file.path)).map((call) => call.responseId));
        if ([...recorded.keys()].some((id) => id.startsWith('token_count '))) {
          // A version that records no response id (Codex before 0.153): its calls, in order.
          expect([...recorded.values()], file.path).toEqual(billed.map(callUsage));
          continue;
        }
        for (const call of billed) expect(recorded.get(call.responseId), `${file.path}: ${call.label}`).toEqual(callUsage(call));
        const unaccounted = [...recorded.keys()].filter((id) => !billed.some((call) => call.responseId === id) && !copied.has(id));
        expect(unaccounted, file.path).toEqual([]);
      }
    });

    it('calls no file recorded are the ones the agent keeps no usage for', () => {
      for (const call of manifest.calls.filter((call) => call.billedIn === null)) {
        // compaction summaries (Claude Code, pi), replies cut before their usage arrived, opencode's title
        expect(call.kind === 'compaction' || call.hung || (stored.length > 0 && call.kind === 'side'), String(call.label)).toBe(true);
      }
    });

    it("the manifest's expected spend is the sum of its calls", () => {
      const { perFile, notRecorded } = expectedSpend(manifest);
      for (const [path, spend] of Object.entries(perFile)) {
        const { prompt, ...stored } = spend;
        expect(manifest.expectedSpend[path], path).toEqual(stored);
        expect(prompt).toBe(spend.input + spend.cacheRead + spend.cacheWrite);
      }
      const { prompt: _prompt, ...unrecorded } = notRecorded;
      expect(manifest.expectedSpend['(not recorded in any file)']).toEqual(unrecorded);
    });

    it('our reader reads every session file', async () => {
      for (const file of transcripts) {
        const session = await readSession(join(dir, file.path));
        expect(session.messages.length, file.path).toBeGreaterThan(0);
      }
    });

    it('no file carries the API key', () => {
      for (const file of manifest.files) {
        const text = readFileSync(join(dir, file.path), 'utf8');
        for (const leak of ['"test"', 'Bearer test', 'API_KEY=test']) expect(text.includes(leak), `${file.path} holds ${leak}`).toBe(false);
      }
    });
  });
});
