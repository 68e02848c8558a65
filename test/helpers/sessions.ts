/**
 * Canonical sessions written by tests: a synthetic agent session of any length (read, edit,
 * results), so LLM tests can make transcripts of a chosen size relative to a summarizer window.
 */
import { appendFile, writeFile } from 'node:fs/promises';

export type CanonicalRecord = Record<string, unknown>;

/** Deterministic filler text of `chars` characters, different per seed. */
export function filler(seed: string, chars: number): string {
  const line = `${seed}: lorem ipsum dolor sit amet, consectetur adipiscing elit. `;
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars);
}

/**
 * Turns `from`..`from + count - 1`: each a user request, an assistant tool call (read, or
 * edit on every third turn), its result of `resultChars`, and an assistant answer.
 */
export function agentTurns(from: number, count: number, resultChars = 3_000, answerChars = 400): CanonicalRecord[] {
  const records: CanonicalRecord[] = [];
  for (let turn = from; turn < from + count; turn++) {
    const path = `src/module${turn}.ts`;
    const edit = turn % 3 === 0;
    records.push({ id: `u${turn}`, role: 'user', content: `TURN-${turn} request: please fix bug ${turn} in ${path}` });
    records.push({
      id: `a${turn}`,
      role: 'assistant',
      content: [
        { type: 'text', text: `Looking at ${path}.` },
        edit
          ? { type: 'tool_request', id: `t${turn}`, name: 'edit_file', arguments: { path, old: 'bug', new: 'fix' } }
          : { type: 'tool_request', id: `t${turn}`, name: 'read_file', arguments: { path } },
      ],
    });
    records.push({ id: `r${turn}`, role: 'user', content: [{ type: 'tool_result', tool_request_id: `t${turn}`, output: filler(`result ${turn}`, resultChars) }] });
    records.push({ id: `b${turn}`, role: 'assistant', content: `ANSWER-${turn}: fixed. ${filler(`answer ${turn}`, answerChars)}` });
  }
  return records;
}

const lines = (records: readonly CanonicalRecord[]) => records.map((record) => `${JSON.stringify(record)}\n`).join('');

export async function writeSession(path: string, records: readonly CanonicalRecord[]): Promise<void> {
  await writeFile(path, lines(records), 'utf8');
}

export async function appendToSession(path: string, records: readonly CanonicalRecord[]): Promise<void> {
  await appendFile(path, lines(records), 'utf8');
}
