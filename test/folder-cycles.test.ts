/**
 * Dependencies between src folders point one way: the folder import graph (every relative import
 * and re-export of every file under src/, mapped to the top-level folder it lives in) has no
 * cycle. A failure lists each cycle with the imports that close it.
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

/** Folder → folder → the imports (file → specifier) that draw that edge. */
export function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), match[1]!);
      if (!target.startsWith(SRC + sep)) continue;
      const to = folderOf(target.replace(/\.js$/, '.ts'));
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      const edge = `${relative(SRC, file)} → ${match[1]}`;
      if (!edges.get(to)?.includes(edge)) edges.set(to, [...(edges.get(to) ?? []), edge]);
    }
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan's). */
export function folderCycles(graph: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
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
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('src folders', () => {
  it('import each other in one direction only', () => {
    const graph = folderGraph();
    const report = folderCycles(graph).map((cycle) => {
      const edges = cycle.flatMap((from) =>
        cycle.filter((to) => graph.get(from)?.has(to)).map((to) => `  ${from} → ${to}: ${graph.get(from)!.get(to)!.join(', ')}`),
      );
      return [`cycle: ${cycle.join(', ')}`, ...edges].join('\n');
    });
    expect(report.join('\n')).toBe('');
  });
});
