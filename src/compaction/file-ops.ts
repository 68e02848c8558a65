/**
 * Files read and modified, taken from tool calls and carried across compactions:
 * a file read and later modified is listed as modified only. Pure.
 */
import type { AnyMessage } from '../session/model.js';
import { classifyToolRequest } from '../session/tool-files.js';

export interface FileOps {
  readonly read: readonly string[];
  readonly modified: readonly string[];
}

export const NO_FILE_OPS: FileOps = { read: [], modified: [] };

/** Files touched by the tool calls of these messages. */
export function collectFileOps(messages: readonly AnyMessage[]): FileOps {
  const read = new Set<string>();
  const modified = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type !== 'tool_request') continue;
      const op = classifyToolRequest(block);
      if (!op) continue;
      for (const path of op.paths) (op.kind === 'read' ? read : modified).add(path);
    }
  }
  return normalize(read, modified);
}

/** Previous compaction's lists merged with this span's; read-then-modified becomes modified. */
export function mergeFileOps(previous: FileOps, current: FileOps): FileOps {
  return normalize(new Set([...previous.read, ...current.read]), new Set([...previous.modified, ...current.modified]));
}

function normalize(read: Set<string>, modified: Set<string>): FileOps {
  return {
    read: [...read].filter((path) => !modified.has(path)).sort(),
    modified: [...modified].sort(),
  };
}

/** The `<read-files>` / `<modified-files>` tail every summary ends with. */
export function formatFileOps(ops: FileOps): string {
  const parts: string[] = [];
  if (ops.read.length > 0) parts.push(`<read-files>\n${ops.read.join('\n')}\n</read-files>`);
  if (ops.modified.length > 0) parts.push(`<modified-files>\n${ops.modified.join('\n')}\n</modified-files>`);
  return parts.join('\n\n');
}
