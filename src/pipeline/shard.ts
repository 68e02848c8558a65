/**
 * `--shard K/N`: this run takes only the sessions whose path hashes to shard K of N, so N
 * machines (a CI matrix, a Kubernetes Indexed Job) split an archive with no coordination.
 *
 * The hash is over the path relative to the input it was found under (a directory's files
 * relative to that directory, a glob's matches relative to its fixed leading part, a file by
 * its name), with `/` separators: the same archive mounted at different places on different
 * machines splits the same way, as long as every shard is given the same inputs. sha256, first
 * 48 bits, modulo N: stable across runs, machines and Node versions. K is 1-based;
 * `--shard auto` takes K from JOB_COMPLETION_INDEX (0-based, set by Kubernetes) + 1 and N from
 * COMPACTOR_SHARD_COUNT.
 */
import { lazyCrypto } from '../lazy-builtins.js';
import { UsageError } from '../errors.js';

export interface Shard {
  /** 1-based. */
  readonly index: number;
  readonly count: number;
}

export const SHARD_COUNT_VARIABLE = 'COMPACTOR_SHARD_COUNT';
export const SHARD_INDEX_VARIABLE = 'JOB_COMPLETION_INDEX';

function wholeNumber(text: string | undefined): number | null {
  return text !== undefined && /^\d+$/.test(text.trim()) ? Number(text.trim()) : null;
}

/** Parses `K/N` or `auto` (from the environment); undefined means no sharding. */
export function parseShard(value: string | undefined, env: NodeJS.ProcessEnv = process.env): Shard | null {
  if (value === undefined) return null;
  if (value === 'auto') {
    const index = wholeNumber(env[SHARD_INDEX_VARIABLE]);
    const count = wholeNumber(env[SHARD_COUNT_VARIABLE]);
    if (index === null) throw new UsageError(`--shard auto needs ${SHARD_INDEX_VARIABLE} (0-based, as a Kubernetes Indexed Job sets it)`);
    if (count === null || count < 1) throw new UsageError(`--shard auto needs ${SHARD_COUNT_VARIABLE}, the number of shards (the Job's completions)`);
    if (index >= count) throw new UsageError(`${SHARD_INDEX_VARIABLE}=${index} is not below ${SHARD_COUNT_VARIABLE}=${count}`);
    return { index: index + 1, count };
  }
  const match = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || count < 1 || index < 1 || index > count) {
    throw new UsageError(`--shard must be K/N with 1 <= K <= N (e.g. 2/8) or auto, got ${JSON.stringify(value)}`);
  }
  return { index, count };
}

/** The 1-based shard a session key belongs to among `count`. */
export function shardOf(key: string, count: number): number {
  const digest = lazyCrypto().createHash('sha256').update(key).digest();
  return (digest.readUIntBE(0, 6) % count) + 1;
}

/** The entries of one shard, in their given order. */
export function selectShard<T extends { readonly key: string }>(entries: readonly T[], shard: Shard | null): T[] {
  if (!shard) return [...entries];
  return entries.filter((entry) => shardOf(entry.key, shard.count) === shard.index);
}
