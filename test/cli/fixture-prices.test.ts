/**
 * Every model a fixture's calls name has a price, or is in docs/audit.md's list of models
 * without one, with why; and every session gets its agent's window, never the 128,000 fallback
 * but where no agent wrote the file (our canonical format, plain API logs, tracing logs).
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { FIXTURES, fixtureSessionFiles, ROOT, runCli, sessionRecords } from '../helpers/cli.js';

/** The models docs/audit.md lists as unpriced: the first column of the table under "Models without a price". */
function documentedUnpriced(): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'audit.md'), 'utf8');
  const section = text.slice(text.indexOf('**Models without a price.**'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('\n|')));
  return new Set([...table.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]!));
}

const AGENTLESS = new Set(['canonical', 'anthropic-messages', 'openai-chat', 'tracing']);

it('every model in every fixture has a price and every session its agent window, or docs/ says why not', async () => {
  const files = fixtureSessionFiles();
  const result = await runCli(['inspect', '--json', ...files]);
  expect(result.exitCode, result.stderr).toBe(0);
  const records = sessionRecords(result.stdout);
  expect(records.length).toBeGreaterThanOrEqual(50);
  const unpriced = documentedUnpriced();
  expect(unpriced.size).toBeGreaterThan(0);
  const seenUnpriced = new Set<string>();
  for (const record of records) {
    const name = relative(FIXTURES, String(record['session']));
    for (const entry of record['pricing']['models'] as Record<string, unknown>[]) {
      if (entry['model'] === null || entry['source'] !== null) continue;
      expect(unpriced.has(String(entry['model'])), `${name}: ${String(entry['model'])} has no price and docs/audit.md does not say why`).toBe(true);
      seenUnpriced.add(String(entry['model']));
    }
    const window = record['pricing']['context_window_source'];
    if (!AGENTLESS.has(record['format'])) expect(window, `${name}: ${record['format']}`).not.toBe('fallback');
  }
  // The list names no model the fixtures no longer hold.
  expect([...unpriced].sort()).toEqual([...seenUnpriced].sort());
});
