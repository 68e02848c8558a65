import { describe, expect, it } from 'vitest';
import { collectFileOps, formatFileOps, mergeFileOps } from '../../src/compaction/file-ops.js';
import type { Message } from '../../src/session/model.js';

const call = (name: string, args: Record<string, unknown>): Message => ({
  id: name + JSON.stringify(args),
  role: 'assistant',
  line: 1,
  content: [{ type: 'tool_request', id: 't', name, arguments: args }],
});

describe('file-op tracking', () => {
  it('classifies read, write and edit tools across agents', () => {
    const ops = collectFileOps([
      call('Read', { file_path: 'a.ts' }),
      call('read_file', { path: 'b.ts' }),
      call('Edit', { file_path: 'c.ts', old_string: 'x', new_string: 'y' }),
      call('write', { path: 'd.ts', content: '' }),
      call('bash', { command: 'cat e.ts' }),
      call('apply_patch', { input: '*** Begin Patch\n*** Update File: f.ts\n@@\n*** Add File: g.ts\n*** End Patch' }),
      call('str_replace_based_edit_tool', { command: 'view', path: 'h.ts' }),
    ]);
    expect(ops).toEqual({ read: ['a.ts', 'b.ts', 'h.ts'], modified: ['c.ts', 'd.ts', 'f.ts', 'g.ts'] });
  });

  it('promotes a file read earlier and modified later to modified only, across compactions', () => {
    const first = collectFileOps([call('read_file', { path: 'a.ts' }), call('read_file', { path: 'b.ts' })]);
    const second = collectFileOps([call('edit_file', { path: 'a.ts' })]);
    expect(mergeFileOps(first, second)).toEqual({ read: ['b.ts'], modified: ['a.ts'] });
  });

  it('formats the read and modified lists as tagged sections', () => {
    expect(formatFileOps({ read: ['a'], modified: ['b', 'c'] })).toBe('<read-files>\na\n</read-files>\n\n<modified-files>\nb\nc\n</modified-files>');
    expect(formatFileOps({ read: [], modified: [] })).toBe('');
  });
});
