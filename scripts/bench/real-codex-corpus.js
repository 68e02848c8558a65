/**
 * The benchmark's Codex corpus: the repository's real Codex rollouts (fixtures/real/codex/ and
 * the agent fixtures' `sessions/` folders, reviews beside their parents, forks with their
 * parents) copied again and again under fresh ids until the corpus reaches the size asked for.
 * Each copy renames every uuid (thread ids, in names and lines alike) and every prefixed id
 * (`call_…`, `resp_…`, …) consistently within the copy, to ids of the same length, so that no
 * call of one copy passes for another's and the bytes keep their shape. Deterministic: a seeded
 * PRNG. Measuring is left to run.js.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRandom } from './corpus.js';
import { CODEX_PREFIXED, renamer } from './real-corpus.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every .jsonl file under `dir` (sorted). */
function jsonlFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .sort();
}

/** The real rollouts: each file's place in a copy (below its source) and its text. */
export function realRollouts() {
  const real = join(ROOT, 'fixtures', 'real', 'codex');
  const agents = join(ROOT, 'fixtures', 'agents', 'codex');
  const files = [...jsonlFiles(real).map((file) => ({ file, path: join('real', relative(real, file)) })), ...jsonlFiles(agents).map((file) => ({ file, path: relative(agents, file) }))];
  return files.map(({ file, path }) => ({ path, text: readFileSync(file, 'utf8') }));
}

/** Copies of the real rollouts under `dir/copy<N>/` until they hold `totalBytes`. Returns {files, bytes}. */
export function generateRealCodexCorpus(dir, totalBytes, { seed = 13 } = {}) {
  const r = createRandom(seed);
  const rollouts = realRollouts();
  let bytes = 0;
  let files = 0;
  for (let copy = 0; bytes < totalBytes; copy++) {
    const rename = renamer(r, CODEX_PREFIXED);
    const folder = join(dir, `copy${String(copy).padStart(4, '0')}`);
    for (const { path, text } of rollouts) {
      const target = join(folder, rename(path));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, rename(text));
      bytes += statSync(target).size;
      files++;
    }
  }
  return { files, bytes };
}
