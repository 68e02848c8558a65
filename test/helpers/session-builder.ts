/**
 * Hand-built canonical sessions for tests that need a shape bug.jsonl does not have: written
 * as real JSONL files into a scratch directory and read back through the CLI.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_request'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'tool_result'; tool_request_id: string; output: string; is_error?: boolean };

export interface CanonicalRecord {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: Block[] | string;
  metadata?: Record<string, number>;
}

/** Builds records with ids m1, m2, … from a compact description. */
export class SessionBuilder {
  readonly records: CanonicalRecord[] = [];
  private calls = 0;

  user(text: string): this {
    this.records.push({ id: `m${this.records.length + 1}`, role: 'user', content: text });
    return this;
  }

  assistant(text: string): this {
    this.records.push({ id: `m${this.records.length + 1}`, role: 'assistant', content: [{ type: 'text', text }] });
    return this;
  }

  /** An assistant message calling one tool, then the user message carrying its result. */
  tool(name: string, args: Record<string, unknown>, output: string, isError = false): this {
    const id = `call_${++this.calls}`;
    this.records.push({ id: `m${this.records.length + 1}`, role: 'assistant', content: [{ type: 'tool_request', id, name, arguments: args }] });
    this.records.push({ id: `m${this.records.length + 1}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: id, output, is_error: isError }] });
    return this;
  }

  jsonl(): string {
    return this.records.map((record) => JSON.stringify(record)).join('\n') + '\n';
  }
}

/** Writes sessions into a fresh scratch directory; returns their paths and a cleanup. */
export async function writeSessions(files: Record<string, SessionBuilder>): Promise<{ dir: string; path: (name: string) => string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'compactor-test-'));
  for (const [name, builder] of Object.entries(files)) await writeFile(join(dir, name), builder.jsonl());
  return { dir, path: (name) => join(dir, name), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Text of `n` characters made of numbered lines, for outputs that must be large. */
export function filler(label: string, n: number): string {
  let out = '';
  for (let i = 1; out.length < n; i++) out += `${label} line ${i}\n`;
  return out.slice(0, n);
}

/** Removes a scratch directory (from scratchCopy or writeSessions) when the current test ends. */
export function removeAfterTest<T extends { cleanup: () => Promise<void> }>(scratch: T): T {
  onTestFinished(scratch.cleanup);
  return scratch;
}
