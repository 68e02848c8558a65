/**
 * Runs each real agent (Claude Code, Codex CLI, pi, opencode; pinned in tools/agents/, installed
 * on first use into a cache outside the repository) once against the scripted provider and
 * checks what it wrote: one session (a file; for opencode a session in its SQLite database),
 * read by our reader, recording exactly the usage the provider reported, counted straight from
 * the file. An agent that cannot be installed or started fails the test; nothing is skipped.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { opencodeSessions, stepUsage } from '../../tools/agents/opencode-db.js';
import type { AgentTools } from '../../tools/agents/install.js';
import { agentTools } from '../../tools/agents/install.js';
import { playScenario } from '../../tools/agents/play.js';
import { smokeScenario } from '../../tools/agents/scenarios.js';
import type { AgentName } from '../helpers/agent-fixtures.js';
import { callUsage, spendOf, usageInFile } from '../helpers/agent-fixtures.js';
import { runCli, sessionRecords } from '../helpers/cli.js';

let tools: AgentTools;
const scratch: string[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `compactor-${name}-`));
  scratch.push(dir);
  return dir;
};

beforeAll(async () => {
  tools = await agentTools(); // about a minute and a half the first time (npm install)
}, 15 * 60_000);

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe.each(['claude-code', 'codex', 'pi'] as const)('%s, run for real', (agent: AgentName) => {
  it('writes one session file with exactly the scripted usage, which our reader reads', async () => {
    const scenario = smokeScenario(agent)!;
    const played = await playScenario(scenario, { tools, cwd: tempDir(`${agent}-project`), home: tempDir(`${agent}-home`) });

    // The agent asked for every scripted reply and nothing else, always with the test key.
    expect(played.provider.pending()).toBe(0);
    const modelRequests = played.provider.requests.filter((request) => request.role !== 'none');
    expect(modelRequests.map((request) => request.role)).toEqual(scenario.script.map(() => 'scripted'));
    expect(new Set(modelRequests.map((request) => request.key))).toEqual(new Set(['test']));

    const transcripts = played.files.filter((file) => file.path.endsWith('.jsonl'));
    expect(transcripts).toHaveLength(1);
    const file = transcripts[0]!;
    expect(played.calls.map((call) => call.billedIn)).toEqual(scenario.script.map(() => file.path));

    const recorded = usageInFile(agent, readFileSync(file.absolute, 'utf8'));
    expect(Object.fromEntries(recorded)).toEqual(Object.fromEntries(played.calls.map((call) => [call.responseId, callUsage(call)])));

    const session = await readSession(file.absolute);
    expect(session.messages.filter((message) => message.role === 'assistant').length).toBeGreaterThanOrEqual(scenario.script.length);
  }, 180_000);
});

describe('opencode, run for real', () => {
  it('writes one session into its SQLite database with exactly the scripted usage, which we read without changing the database', async () => {
    const scenario = smokeScenario('opencode')!;
    const home = tempDir('opencode-home');
    const played = await playScenario(scenario, { tools, cwd: tempDir('opencode-project'), home });

    // Every scripted reply was asked for, always with the test key; besides them only opencode's title request.
    expect(played.provider.pending()).toBe(0);
    const modelRequests = played.provider.requests.filter((request) => request.role !== 'none');
    expect(modelRequests.filter((request) => request.role !== 'side').map((request) => request.role)).toEqual(scenario.script.map(() => 'scripted'));
    expect(modelRequests.filter((request) => request.role === 'side')).toHaveLength(1);
    expect(new Set(modelRequests.map((request) => request.key))).toEqual(new Set(['test']));

    const data = join(home, '.local', 'share', 'opencode');
    const [session, ...others] = opencodeSessions(data);
    expect(others).toEqual([]);
    const scripted = played.calls.filter((call) => call.role === 'scripted');
    expect(scripted.map((call) => call.billedIn)).toEqual(scenario.script.map(() => session!.address));
    // Straight from opencode's rows: one step-finish a call, with the usage the provider reported.
    expect(session!.steps.map(({ tokens }) => stepUsage(tokens))).toEqual(
      scripted.map((call) => callUsage(call)),
    );

    const digest = () => Object.fromEntries(readdirSync(data).filter((name) => name.startsWith('opencode.db')).map((name) => [name, readFileSync(join(data, name)).toString('base64')]));
    const before = digest();
    const result = await runCli(['inspect', '--json', data]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(digest()).toEqual(before);
    const [record] = sessionRecords(result.stdout);
    expect(record!['session']).toBe(join(data, session!.address));
    const billed = spendOf(scripted.map((call) => callUsage(call)!));
    expect([record!['spend']['requests'], record!['spend']['input_tokens'], record!['spend']['output_tokens']]).toEqual([billed.requests, billed.prompt, billed.output]);
  }, 300_000);
});
