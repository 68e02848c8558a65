/**
 * Files read and modified, taken from tool calls and carried across compactions:
 * a file read and later modified is listed as modified only. Pure.
 */
import type { Message, ToolRequestBlock } from '../session/model.js';

export interface FileOps {
  readonly read: readonly string[];
  readonly modified: readonly string[];
}

export const NO_FILE_OPS: FileOps = { read: [], modified: [] };

/** Tool names (lower-cased) across agents, by what they do to a file. */
const READ_TOOLS = new Set(['read', 'read_file', 'readfile', 'view', 'cat', 'open_file', 'notebookread']);
const MODIFY_TOOLS = new Set([
  'write',
  'write_file',
  'writefile',
  'edit',
  'edit_file',
  'multiedit',
  'str_replace',
  'str_replace_editor',
  'str_replace_based_edit_tool',
  'create_file',
  'notebookedit',
  'apply_patch',
]);
export const PATH_ARGUMENTS = ['path', 'file_path', 'filePath', 'filepath', 'notebook_path', 'filename', 'file'];
/** apply_patch bodies name their files on these lines (Codex). */
export const PATCH_FILE_LINE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;

function pathsOf(block: ToolRequestBlock): string[] {
  const paths: string[] = [];
  for (const key of PATH_ARGUMENTS) {
    const value = block.arguments[key];
    if (typeof value === 'string' && value.length > 0) paths.push(value);
  }
  for (const value of Object.values(block.arguments)) {
    if (typeof value !== 'string' || !value.includes('*** ')) continue;
    for (const match of value.matchAll(PATCH_FILE_LINE)) paths.push(match[1]!.trim());
  }
  return paths;
}

/** What a tool call does to files, or null when it is not a file tool. */
export function classifyToolRequest(block: ToolRequestBlock): { kind: 'read' | 'modified'; paths: string[] } | null {
  const name = block.name.toLowerCase();
  // str_replace_based_edit_tool's `view` command reads, its other commands write.
  if (name.startsWith('str_replace') && block.arguments['command'] === 'view') return { kind: 'read', paths: pathsOf(block) };
  if (READ_TOOLS.has(name)) return { kind: 'read', paths: pathsOf(block) };
  if (MODIFY_TOOLS.has(name)) return { kind: 'modified', paths: pathsOf(block) };
  return null;
}

/** Files touched by the tool calls of these messages. */
export function collectFileOps(messages: readonly Message[]): FileOps {
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
