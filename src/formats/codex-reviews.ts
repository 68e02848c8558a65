/**
 * Codex review rollouts: since 0.169 `codex review` runs the review as a subagent thread of its
 * own, written to a rollout beside the session's (`source: {subagent: "review"}`,
 * `parent_thread_id`: the session's thread id), which holds the review's billed calls. The parent
 * rollout records only that a review ran and its outcome.
 *
 * Their calls are the parent session's spend, as `review` (codex.ts reads them with it), and a
 * walk that meets one beside its parent leaves it to the parent (pipeline/inputs.ts), as it does
 * Claude Code's subagent transcripts, and hands them to the parent's read (formats/companions.ts).
 * Only a rollout in the parent's own folder is looked for, by both sides, so they always agree;
 * one without its parent beside it is a session of its own. This file only finds them.
 */
import { readdirSync } from 'node:fs';
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

/** The rollouts of a folder by thread id and by name, and its review rollouts by the thread they review. */
interface FolderIndex {
  readonly byThread: ReadonlyMap<string, string>;
  /** The thread id of each rollout, by its file name. */
  readonly threadOf: ReadonlyMap<string, string>;
  readonly reviews: ReadonlyMap<string, readonly string[]>;
}

function readFolderIndex(folder: string): FolderIndex {
  const byThread = new Map<string, string>();
  const threadOf = new Map<string, string>();
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
    if (meta.id !== null) threadOf.set(name, meta.id);
    if (meta.id !== null && !byThread.has(meta.id)) byThread.set(meta.id, path);
    if (meta.reviewOf !== null) reviews.set(meta.reviewOf, [...(reviews.get(meta.reviewOf) ?? []), path]);
  }
  return { byThread, threadOf, reviews };
}

/**
 * The rollout folders one run has looked into, each read once (the first line of every rollout
 * in it). Made by the walk (formats/companions.ts), which hands each session its review
 * rollouts; it lives as long as the walk.
 */
export class RolloutFolders {
  private readonly folders = new Map<string, FolderIndex>();

  private index(folder: string): FolderIndex {
    let index = this.folders.get(folder);
    if (!index) this.folders.set(folder, (index = readFolderIndex(folder)));
    return index;
  }

  /**
   * For a rollout whose first line names it a review of another thread: the rollout of that thread
   * in the same folder, or null when there is none (then it is a session of its own). Undefined:
   * not a review rollout. `first` gives the first line; it is asked for only when the name is a
   * rollout's (a named file may be a pipe that must not be read here).
   */
  reviewParent(path: string, first: () => unknown): string | null | undefined {
    if (!ROLLOUT_FILE.test(basename(path))) return undefined;
    const meta = rolloutMeta(first());
    if (!meta?.reviewOf) return undefined;
    return this.index(dirname(path)).byThread.get(meta.reviewOf) ?? null;
  }

  /**
   * The review rollouts beside the rollout of thread `threadId` at `path` (by default the thread
   * its first line names), sorted; none unless `path` is the rollout reviewParent names for them
   * (the first of that thread in the folder).
   */
  reviewRolloutsOf(path: string, threadId?: string): string[] {
    if (!ROLLOUT_FILE.test(basename(path))) return [];
    const index = this.index(dirname(path));
    const thread = threadId ?? index.threadOf.get(basename(path));
    if (thread === undefined) return [];
    const own = index.byThread.get(thread);
    if (own === undefined || basename(own) !== basename(path)) return [];
    return [...(index.reviews.get(thread) ?? [])];
  }
}

/** The review rollouts of one rollout, its folder read for it alone (a read the walk did not hand them to). */
export function reviewRolloutsOf(path: string, threadId: string): string[] {
  return new RolloutFolders().reviewRolloutsOf(path, threadId);
}
