/**
 * Dependencies point one way, between src folders and between the files of one folder: the folder
 * import graph (every relative import and re-export of every file under src/, mapped to the
 * top-level folder it lives in) has no cycle, and neither has the file import graph (with no
 * folder cycle, a file cycle can only lie inside one folder). A failure lists each cycle with the
 * imports that close it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'src');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** src/compaction/cut-point.ts → compaction; a file directly in src/ is a node of its own. */
function folderOf(file: string): string {
  return relative(SRC, file).split(sep)[0]!;
}

type Graph = Map<string, Map<string, string[]>>;

/** Node → node → the imports (file → specifier) that draw that edge, nodes named by `nodeOf` (a file's path under src/). */
function importGraph(nodeOf: (file: string) => string): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const from = nodeOf(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), match[1]!);
      if (!target.startsWith(SRC + sep)) continue;
      const to = nodeOf(target.replace(/\.js$/, '.ts'));
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      const edge = `${relative(SRC, file)} → ${match[1]}`;
      if (!edges.get(to)?.includes(edge)) edges.set(to, [...(edges.get(to) ?? []), edge]);
    }
  }
  return graph;
}

/** Folder → folder → the imports that draw that edge. */
export const folderGraph = (): Graph => importGraph(folderOf);

/** File → file (paths under src/) → the imports that draw that edge. */
export const fileGraph = (): Graph => importGraph((file) => relative(SRC, file));

/** Strongly connected components with more than one node (Tarjan's). */
export function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** Each cycle of `graph` with the imports that close it, one block of lines each. */
function cycleReport(graph: Graph): string {
  return cycles(graph)
    .map((cycle) => {
      const edges = cycle.flatMap((from) => cycle.filter((to) => graph.get(from)?.has(to)).map((to) => `  ${from} → ${to}: ${graph.get(from)!.get(to)!.join(', ')}`));
      return [`cycle: ${cycle.join(', ')}`, ...edges].join('\n');
    })
    .join('\n');
}

describe('src imports', () => {
  it('between folders go in one direction only', () => {
    expect(cycleReport(folderGraph())).toBe('');
  });

  it('between files go in one direction only (no circle inside a folder either)', () => {
    expect(cycleReport(fileGraph())).toBe('');
  });

  it('the file check sees a circle inside one folder', () => {
    // Two files of one folder importing each other: the folder graph has no edge for it, the file graph a cycle.
    const circle: Graph = new Map([
      ['audit/a.ts', new Map([['audit/b.ts', ['audit/a.ts → ./b.js']]])],
      ['audit/b.ts', new Map([['audit/a.ts', ['audit/b.ts → ./a.js']]])],
    ]);
    expect(cycles(circle)).toEqual([['audit/a.ts', 'audit/b.ts']]);
  });
});
