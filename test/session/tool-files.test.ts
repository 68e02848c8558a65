/**
 * What a tool call does to files: the lean read's slim messages ask only whether a call is a file
 * tool (fileToolKind), without listing its paths, which meant scanning every string argument for
 * apply_patch lines; both answers must agree on every kind of call.
 */
import { describe, expect, it } from 'vitest';
import type { ToolRequestBlock } from '../../src/session/model.js';
import { classifyToolRequest, fileToolKind } from '../../src/session/tool-files.js';

const call = (name: string, args: Record<string, unknown>): ToolRequestBlock => ({ type: 'tool_request', id: 'toolu_1', name, arguments: args });

const CALLS: readonly ToolRequestBlock[] = [
  call('Read', { file_path: '/a.ts' }),
  call('Write', { file_path: '/b.ts', content: '*** Update File: c.ts\nbody' }),
  call('Edit', { file_path: '/b.ts', old_string: 'x', new_string: 'y' }),
  call('apply_patch', { input: '*** Begin Patch\n*** Add File: d.ts\n+x\n*** End Patch' }),
  call('str_replace_based_edit_tool', { command: 'view', path: '/e.ts' }),
  call('str_replace_based_edit_tool', { command: 'str_replace', path: '/e.ts' }),
  call('Bash', { command: 'cat /f.ts', description: '*** Update File: g.ts' }),
  call('NotebookRead', { notebook_path: '/n.ipynb' }),
  call('read_file', {}),
  call('mcp__tool', { path: '/h.ts' }),
];

describe('fileToolKind', () => {
  it('says what classifyToolRequest says a call does, for file tools and others', () => {
    for (const block of CALLS) expect(fileToolKind(block)).toBe(classifyToolRequest(block)?.kind ?? null);
    expect(CALLS.map(fileToolKind)).toEqual(['read', 'modified', 'modified', 'modified', 'read', 'modified', null, 'read', 'read', null]);
  });
});
