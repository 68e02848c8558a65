/**
 * Compactions the agent recorded in its own file: `inspect` shows them, `estimate` and
 * `compact` start after the last one, `replay` sets their real effect beside ours.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jsonLines, runCli, scratchCopy } from '../helpers/cli.js';

const PI_BEFORE = join(FIXTURES, 'real/pi/pi-mono_before-compaction_v1.jsonl');

describe('inspect', () => {
  it('prints one line per recorded compaction under the table', async () => {
    const result = await runCli(['inspect', PI_BEFORE]);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    // tokensBefore of lines 360 and 629; first calls after: line 364 (10 + 25729) and 631 (10 + 28607)
    expect(lines.filter((line) => line.startsWith('agent compaction'))).toEqual([
      'agent compaction at line 360: 175,004 -> 25,739 tokens',
      'agent compaction at line 629: 185,014 -> 28,617 tokens',
    ]);
    // the table and these lines fit 80 columns (the first line is the session's path)
    expect(Math.max(...lines.slice(1).map((line) => line.length))).toBeLessThanOrEqual(80);
  });

  it('reports them in --json with the first kept message and the reported baseline drop', async () => {
    const record = jsonLines((await runCli(['inspect', '--json', PI_BEFORE])).stdout)[0]!;
    // kept entries: firstKeptEntryIndex 293 and 551 count the header as 0, so lines 294 and 552;
    // drop: last call before (line 359: 1 + 174218 + 519 = 174738) − 25739; (line 628: 1 + 182728 + 2186) − 28617
    expect(record['recorded_compactions']).toEqual([
      { line: 360, first_kept_message_id: 'L294', tokens_before: 175_004, tokens_after: 25_739, reported_drop: 148_999 },
      { line: 629, first_kept_message_id: 'L552', tokens_before: 185_014, tokens_after: 28_617, reported_drop: 156_298 },
    ]);
  });
});

describe('estimate and compact start after the last recorded compaction', () => {
  it('summarizes from pi’s first kept entry of its last compaction', async () => {
    const record = jsonLines((await runCli(['compact', '--dry-run', '--json', PI_BEFORE])).stdout)[0]!;
    // messages (non-aborted entries + compaction summaries) before line 552: 534; before line 941: 913.
    expect(record).toMatchObject({ status: 'would-compact', first_kept_message_id: 'L941', messages_summarized: 913 - 534 });
  });

  it('counts the context of the window after the compaction when no call followed it', async () => {
    // pi v3 fixture: the second compaction (line 9) is the last entry. The context is the last
    // call's prompt and output (12 + 7) plus the summary message, 36 characters: ceil(35 / 4) = 9.
    const record = jsonLines((await runCli(['estimate', '--json', join(FIXTURES, 'real/pi/agent-sessions_pi_small_v3.jsonl')])).stdout)[0]!;
    expect(record['context_tokens']).toBe(12 + 7 + 9);
  });
});

describe('replay', () => {
  let replay: Record<string, any>;
  beforeAll(async () => {
    // The 128,000 window (the model's catalog window is larger) makes us compact before pi does.
    replay = jsonLines((await runCli(['replay', '--json', '--context-limit', '128000', PI_BEFORE])).stdout)[0]!;
  });

  it('marks the turns in which the agent compacted, with their real effect', () => {
    const marked = (replay['turns'] as Record<string, any>[]).filter((turn) => turn['recorded_compactions'].length > 0);
    expect(marked.map((turn) => [turn['turn'], turn['baseline_before'], turn['recorded_compactions'][0]['line'], turn['recorded_compactions'][0]['reported_drop']])).toEqual([
      [12, 25_739, 360, 148_999],
      [26, 28_617, 629, 156_298],
    ]);
  });

  it('does not count ours over the agent’s: after its compaction the input is what it sent', () => {
    const turns = replay['turns'] as Record<string, any>[];
    // our simulated compaction in turn 9 is superseded by pi's own at line 360
    expect(turns[8]!['compactions'].length).toBeGreaterThan(0);
    expect(turns[11]!['baseline_after']).toBe(turns[11]!['baseline_before']);
    expect(turns[25]!['baseline_after']).toBe(turns[25]!['baseline_before']);
  });

  it('shows "agent" in the human table', async () => {
    const result = await runCli(['replay', PI_BEFORE]);
    const row = result.stdout.split('\n').find((line) => /^\s+12\s/.test(line))!;
    // turn, then the "before" baseline marked `a`: pi compacted itself in turn 12
    expect(row.trim().split(/\s+/)[1]).toMatch(/^[\d,]+a$/);
    expect(result.stdout).toContain('a = the agent compacted itself in that turn, "before" includes it');
  });
});

describe('a sidecar the agent compacted past', () => {
  let scratch: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    scratch = await scratchCopy('formats/pi-branch.jsonl');
  });
  afterAll(async () => {
    await scratch.cleanup();
  });

  it('no longer applies: compaction starts from the agent’s', async () => {
    const session = join(scratch.dir, 'pi-branch.jsonl');
    // A sidecar from before pi's compaction (line 11), keeping from e3.
    const full = await readFile(session, 'utf8');
    const first = await runCli(['compact', '--json', '--force', '--allow-no-gain', '--keep-recent', '0', session]);
    expect(jsonLines(first.stdout)[0]!['first_kept_message_id']).toBe('e13');
    const sidecarPath = join(scratch.dir, 'pi-branch_compaction.json');
    const sidecar = JSON.parse(await readFile(sidecarPath, 'utf8'));
    const { hashMessages } = await import('../../src/session/hash.js');
    const { readSession } = await import('../../src/formats/index.js');
    const messages = (await readSession(session)).messages;
    await writeFile(sidecarPath, JSON.stringify({ ...sidecar, first_kept_message_id: 'e3', first_kept_index: 1, summarized_hash: hashMessages(messages, 0, 1) }));
    const result = await runCli(['estimate', '--json', session]);
    expect(result.stderr).toContain('the agent compacted the session past this sidecar; starting from its compaction');
    expect(jsonLines(result.stdout)[0]!['context_tokens']).toBe(311);
    expect(await readFile(session, 'utf8')).toBe(full);
  });
});
