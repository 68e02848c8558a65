/**
 * `prune` (opencode's approach): no summary. The conversation is kept and every tool output
 * before the keep window is replaced by a placeholder (src/compaction/prune.ts); the previous
 * compaction's pruned outputs are carried over by the core.
 */
import { pruneOutputs } from '../compaction/prune.js';
import type { PruneStrategy } from '../compaction/strategy.js';

export const pruneStrategy: PruneStrategy = {
  name: 'prune',
  kind: 'prune',
  prune: ({ messages, text, from, to, count }) => pruneOutputs(messages, text, from, to, count),
};
