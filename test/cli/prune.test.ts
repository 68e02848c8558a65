/**
 * `--strategy prune` through the real CLI: what the sidecar records, what `context` sends,
 * replay's savings, switching strategies, and sidecars written before the new fields.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli, scratchCopy } from '../helpers/cli.js';
import { filler, removeAfterTest, SessionBuilder, writeSessions } from '../helpers/session-builder.js';


async function prunedBug(): Promise<{ dir: string; session: string; sidecar: Record<string, any> }> {
  const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
  const session = join(scratch.dir, 'bug.jsonl');
  const result = await runCli(['compact', '--strategy', 'prune', '--context-limit', '80000', session]);
  expect(result.exitCode).toBe(0);
  expect(result.stdout).toContain('96,212 -> 42,510 tokens');
  return { dir: scratch.dir, session, sidecar: JSON.parse(await readFile(join(scratch.dir, 'bug_compaction.json'), 'utf8')) };
}

describe('prune on fixtures/bug.jsonl', () => {
  it('records every tool output before the keep window, with its tool, arguments and tokens', async () => {
    const { sidecar } = await prunedBug();
    expect(sidecar).toMatchObject({
      strategy: 'prune',
      summary: '',
      turn_prefix_summary: null,
      summary_tokens: 0,
      first_kept_index: 49,
      tokens_before: 96212,
      tokens_after: 42510,
      dropped_outputs: [],
    });
    // The cut is the earliest that gets the context under the trigger (no thrash): 22 outputs before it.
    expect(sidecar.pruned_outputs.map((p: any) => p.tool_request_id)).toEqual(
      Array.from({ length: 22 }, (_, i) => `call_${String(i + 1).padStart(3, '0')}`),
    );
    expect(sidecar.pruned_outputs[0]).toEqual({
      tool_request_id: 'call_001',
      message_id: 'msg-0003',
      tool: 'bash',
      arguments: 'command="rg -n \\"fn messages|assistant_response\\" crates/"',
      tokens: 301,
    });
    expect(sidecar.pruned_outputs[9]).toEqual({
      tool_request_id: 'call_010',
      message_id: 'msg-0023',
      tool: 'read_file',
      arguments: 'path="crates/coop-core/src/provider.rs"',
      tokens: 8001,
    });
  });

  it('estimate reads the pruned context back as the sidecar wrote it', async () => {
    const { session } = await prunedBug();
    const [record] = jsonLines((await runCli(['estimate', '--json', '--context-limit', '80000', session])).stdout);
    expect(record).toMatchObject({ compacted_before: true, context_tokens: 42510 });
  });

  it('estimate sizes a pruned message by what stays of its text (two outputs pruned, a note kept)', async () => {
    // Each user message carries two tool outputs and a note. Pruning replaces the outputs and
    // keeps the note: the saving is the outputs' tokens, not the whole message's (a read without
    // the text cannot size what stays).
    const lines = (n: number, label: string) => Array.from({ length: n }, (_, i) => `${label} line ${i}`).join('\n');
    const records: object[] = [{ id: 'm0', role: 'user', content: [{ type: 'text', text: 'start' }] }];
    for (let call = 0; call < 12; call++) {
      records.push({
        id: `a${call}`,
        role: 'assistant',
        content: [
          { type: 'tool_request', id: `x${call}`, name: 'bash', arguments: { command: 'ls' } },
          { type: 'tool_request', id: `y${call}`, name: 'bash', arguments: { command: 'cat' } },
        ],
        metadata: { input_tokens: 1000 + call * 3000, output_tokens: 10, model: 'claude-sonnet-4-5' },
      });
      records.push({
        id: `u${call}`,
        role: 'user',
        content: [
          { type: 'tool_result', tool_request_id: `x${call}`, output: lines(call % 2 ? 200 : 20, 'out x') },
          { type: 'tool_result', tool_request_id: `y${call}`, output: lines(150, 'out y') },
          { type: 'text', text: lines(100, 'note') },
        ],
      });
    }
    records.push({ id: 'end', role: 'assistant', content: [{ type: 'text', text: 'done' }], metadata: { input_tokens: 40000, output_tokens: 10, model: 'claude-sonnet-4-5' } });
    const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
    const session = join(scratch.dir, 'notes.jsonl');
    await writeFile(session, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const compacted = await runCli(['compact', '--json', '--strategy', 'prune', '--force', '--keep-recent', '2000', session]);
    const [result] = jsonLines(compacted.stdout);
    expect(result).toMatchObject({ status: 'compacted' });
    const sidecar = JSON.parse(await readFile(join(scratch.dir, 'notes_compaction.json'), 'utf8'));
    expect(sidecar.pruned_outputs.length).toBeGreaterThan(0);
    const [estimate] = jsonLines((await runCli(['estimate', '--json', session])).stdout);
    expect(estimate).toMatchObject({ compacted_before: true, context_tokens: result!.tokens_after });
    const [inspected] = jsonLines((await runCli(['inspect', '--json', session])).stdout);
    expect(JSON.stringify(inspected)).not.toContain('"error"');
  });

  it('context sends the whole conversation with the pruned outputs replaced', async () => {
    const { session } = await prunedBug();
    const result = await runCli(['context', session]);
    expect(result.exitCode).toBe(0);
    const view = jsonLines(result.stdout);
    const original = jsonLines(await readFile(session, 'utf8'));
    expect(view).toHaveLength(116);
    expect(view.map((m) => m.id)).toEqual(original.map((m) => m.id));
    expect(view[2]!.content).toEqual([
      {
        type: 'tool_result',
        tool_request_id: 'call_001',
        output: '[tool output pruned: bash(command="rg -n \\"fn messages|assistant_response\\" crates/"), 301 tokens removed]',
        is_error: false,
      },
    ]);
    // the requests stay; so does every message from the keep window on
    expect(view[1]!.content).toEqual(original[1]!.content);
    expect(view.slice(49).map((m) => m.content)).toEqual(original.slice(49).map((m) => m.content));
    const pruned = view.filter((m) => m.content.some?.((b: any) => b.type === 'tool_result' && b.output.startsWith('[tool output pruned: ')));
    expect(pruned).toHaveLength(22);
  });

  it('replay charges the pruned context to every later call', async () => {
    const result = await runCli(['replay', '--json', '--strategy', 'prune', '--context-limit', '80000', 'fixtures/bug.jsonl']);
    expect(result.exitCode).toBe(0);
    const [record] = jsonLines(result.stdout);
    expect(record!.totals).toMatchObject({ compactions: 2, input_tokens_before: 4277423, input_tokens_after: 2212923 });
  });
});

describe('prune and other strategies', () => {
  it('starts over when the sidecar was written by a summary, and the other way round', async () => {
    const { session, dir } = await prunedBug();
    const toExtract = await runCli(['compact', '--strategy', 'extract', '--context-limit', '80000', session]);
    expect(toExtract.exitCode).toBe(0);
    expect(toExtract.stderr).toContain('the sidecar was written by prune, which extract cannot build on; compacting from scratch');
    const extract = JSON.parse(await readFile(join(dir, 'bug_compaction.json'), 'utf8'));
    expect(extract).toMatchObject({ strategy: 'extract', compactions: 1, pruned_outputs: null });
    const back = await runCli(['compact', '--strategy', 'prune', '--context-limit', '80000', session]);
    expect(back.stderr).toContain('the sidecar was written by extract, which prune cannot build on; compacting from scratch');
    expect(JSON.parse(await readFile(join(dir, 'bug_compaction.json'), 'utf8'))).toMatchObject({ strategy: 'prune', compactions: 1 });
  });

  it('cuts long arguments in the placeholder and leaves outputs shorter than it alone', async () => {
    const content = `[server]\n${filler('port = 8080', 400)}`;
    const session = new SessionBuilder()
      .user('Write the config file and create the output directory.')
      .tool('write_file', { path: 'config.toml', content }, filler('wrote', 400))
      .tool('bash', { command: 'mkdir -p out' }, '')
      .assistant('Done.')
      .user('Now start the server.');
    const files = removeAfterTest(await writeSessions({ 'args.jsonl': session }));
    const path = files.path('args.jsonl');
    expect((await runCli(['compact', '--strategy', 'prune', '--force', '--keep-recent', '1', path])).exitCode).toBe(0);
    const sidecar = JSON.parse(await readFile(path.replace('.jsonl', '_compaction.json'), 'utf8'));
    const args = `path="config.toml", content=${JSON.stringify(`${content.slice(0, 80)}…`)}`;
    // the empty mkdir output is shorter than any placeholder: kept as it is
    expect(sidecar.pruned_outputs).toEqual([{ tool_request_id: 'call_1', message_id: 'm3', tool: 'write_file', arguments: args, tokens: 100 }]);
    const view = jsonLines((await runCli(['context', path])).stdout);
    expect(view[2]!.content[0].output).toBe(`[tool output pruned: write_file(${args}), 100 tokens removed]`);
    expect(view[4]!.content[0].output).toBe('');
  });
});

describe('sidecars written before dropped_outputs and pruned_outputs', () => {
  it('still load: absent means none', async () => {
    const scratch = removeAfterTest(await scratchCopy('bug.jsonl'));
    const session = join(scratch.dir, 'bug.jsonl');
    expect((await runCli(['compact', '--strategy', 'truncate', '--context-limit', '80000', session])).exitCode).toBe(0);
    const path = join(scratch.dir, 'bug_compaction.json');
    const sidecar = JSON.parse(await readFile(path, 'utf8'));
    delete sidecar.dropped_outputs;
    delete sidecar.pruned_outputs;
    await writeFile(path, JSON.stringify(sidecar));
    const context = await runCli(['context', session]);
    expect(context.exitCode).toBe(0);
    expect(jsonLines(context.stdout)[0]!.id).toBe('compaction-summary');
    const again = await runCli(['compact', '--json', '--strategy', 'truncate', '--context-limit', '80000', session]);
    expect(jsonLines(again.stdout)[0]).toMatchObject({ status: 'up-to-date' });
  });
});
