/**
 * Codex review rollouts: since 0.169 `codex review` runs the review as a subagent thread of its
 * own, written to a rollout beside the session's (`source: {subagent: "review"}`,
 * `parent_thread_id`: the session's thread id), which holds the review's billed calls. The parent
 * rollout records only that a review ran and its outcome.
 *
 * Their calls are the parent session's spend, as `review` (codex.ts reads them with it), and a
 * walk that meets one beside its parent leaves it to the parent (commands/inputs.ts), as it does
 * Claude Code's subagent transcripts. Only a rollout in the parent's own folder is looked for, by
 * both sides, so they always agree; one without its parent beside it is a session of its own.
 * This file only finds them.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { asRecord } from './convert.js';
import { peekJsonLines } from './json/jsonl-lines.js';

const ROLLOUT_FILE = /^rollout-.*\.jsonl$/;
/** A session_meta line holds the agent's whole instructions: tens of KB. */
const META_BYTES = 256 << 10;

/** A rollout's first line, when it is its session_meta: the thread id, and the parent thread of a review. */
interface RolloutMeta {
  readonly id: string | null;
  readonly reviewOf: string | null;
}

/** What the first line of a rollout says about it (null: not a session_meta line). */
export function rolloutMeta(first: unknown): RolloutMeta | null {
  const line = asRecord(first);
  const payload = asRecord(line?.['payload']);
  if (line?.['type'] !== 'session_meta' || !payload) return null;
  const id = typeof payload['id'] === 'string' && payload['id'] !== '' ? payload['id'] : null;
  const parent = payload['parent_thread_id'];
  const review = asRecord(payload['source'])?.['subagent'] === 'review' && typeof parent === 'string' && parent !== '';
  return { id, reviewOf: review ? (parent as string) : null };
}

function firstLine(path: string): unknown {
  try {
    return peekJsonLines(path, 1, META_BYTES).values[0];
  } catch {
    return undefined;
  }
}

/** The rollouts of a folder by thread id, and its review rollouts by the thread they review: read once per folder. */
interface FolderIndex {
  readonly mtimeMs: number;
  readonly byThread: ReadonlyMap<string, string>;
  readonly reviews: ReadonlyMap<string, readonly string[]>;
}

const folders = new Map<string, FolderIndex>();

function folderIndex(folder: string): FolderIndex {
  const mtimeMs = statSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? -1;
  const known = folders.get(folder);
  if (known && known.mtimeMs === mtimeMs) return known;
  const byThread = new Map<string, string>();
  const reviews = new Map<string, string[]>();
  let names: string[] = [];
  try {
    names = readdirSync(folder).filter((name) => ROLLOUT_FILE.test(name));
  } catch {
    // an unreadable folder has no rollouts to find
  }
  for (const name of names.sort()) {
    const path = join(folder, name);
    const meta = rolloutMeta(firstLine(path));
    if (!meta) continue;
    if (meta.id !== null && !byThread.has(meta.id)) byThread.set(meta.id, path);
    if (meta.reviewOf !== null) reviews.set(meta.reviewOf, [...(reviews.get(meta.reviewOf) ?? []), path]);
  }
  const index = { mtimeMs, byThread, reviews };
  folders.set(folder, index);
  return index;
}

/**
 * For a rollout whose first line names it a review of another thread: the rollout of that thread
 * in the same folder, or null when there is none (then it is a session of its own). Undefined:
 * not a review rollout. `first` gives the first line; it is asked for only when the name is a
 * rollout's (a named file may be a pipe that must not be read here).
 */
export function reviewParent(path: string, first: () => unknown): string | null | undefined {
  if (!ROLLOUT_FILE.test(basename(path))) return undefined;
  const meta = rolloutMeta(first());
  if (!meta?.reviewOf) return undefined;
  return folderIndex(dirname(path)).byThread.get(meta.reviewOf) ?? null;
}

/**
 * The review rollouts beside the rollout of thread `threadId` at `path`, sorted; none unless
 * `path` is the rollout reviewParent names for them (the first of that thread in the folder).
 */
export function reviewRolloutsOf(path: string, threadId: string): string[] {
  const index = folderIndex(dirname(path));
  const own = index.byThread.get(threadId);
  if (own === undefined || basename(own) !== basename(path)) return [];
  return [...(index.reviews.get(threadId) ?? [])];
}
