/**
 * fixtures/bug.jsonl is generated, not typed: the generator must reproduce it byte for byte,
 * and its content must be sized like the usage it reports.
 */
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSession } from '../../src/formats/index.js';
import { promptTokens } from '../../src/session/model.js';
import { estimateAll, sum } from '../../src/tokens/estimate.js';
import { FIXTURES, ROOT } from '../helpers/cli.js';

describe('fixtures/bug.jsonl', () => {
  it('is exactly what scripts/make-bug-fixture.js generates', async () => {
    const generated = await execa('node', [join(ROOT, 'scripts', 'make-bug-fixture.js')], { stripFinalNewline: false });
    expect(generated.stdout).toBe(await readFile(join(FIXTURES, 'bug.jsonl'), 'utf8'));
  });

  it('has content whose chars/4 matches the reported growth between calls within 10%', async () => {
    const session = await readSession(join(FIXTURES, 'bug.jsonl'));
    const tokens = estimateAll(session.messages);
    const calls = session.messages.flatMap((message, index) => (message.usage ? [{ index, input: promptTokens(message.usage) }] : []));
    expect(calls).toHaveLength(58);
    for (let i = 1; i < calls.length; i++) {
      const reported = calls[i]!.input - calls[i - 1]!.input;
      const estimated = sum(tokens, calls[i - 1]!.index, calls[i]!.index);
      expect(Math.abs(estimated - reported)).toBeLessThanOrEqual(reported * 0.1);
    }
  });

  it('uses realistic tools: file reads, edits and shell commands', async () => {
    const session = await readSession(join(FIXTURES, 'bug.jsonl'));
    const names = new Set(session.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_request' ? [b.name] : []))));
    expect([...names].sort()).toEqual(['bash', 'edit_file', 'read_file', 'write_file']);
  });
});
