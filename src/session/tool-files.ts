/**
 * Which tool calls touch files, and which files: the tool names of every agent that reads or
 * writes a file, and the arguments (or apply_patch lines) that name it. Pure; what is done with
 * the lists (compaction/file-ops.ts, growth, slim messages) is left to their callers.
 */
import type { ToolRequestBlock } from './model.js';

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

/** What a tool call does to files (not which ones), or null when it is not a file tool. */
export function fileToolKind(block: ToolRequestBlock): 'read' | 'modified' | null {
  const name = block.name.toLowerCase();
  // str_replace_based_edit_tool's `view` command reads, its other commands write.
  if (name.startsWith('str_replace') && block.arguments['command'] === 'view') return 'read';
  if (READ_TOOLS.has(name)) return 'read';
  if (MODIFY_TOOLS.has(name)) return 'modified';
  return null;
}

/** What a tool call does to files, and which files, or null when it is not a file tool. */
export function classifyToolRequest(block: ToolRequestBlock): { kind: 'read' | 'modified'; paths: string[] } | null {
  const kind = fileToolKind(block);
  return kind === null ? null : { kind, paths: pathsOf(block) };
}
