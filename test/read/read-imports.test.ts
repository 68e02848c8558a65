/**
 * read/ returns the session and what it measured: it imports neither the compaction core nor the
 * sidecar room. What a read must take of a sidecar comes in as a plain record
 * (sidecar/previous.ts sidecarReading), and the places a second read keeps in full as plain data
 * (compaction/text-reads.ts decides them; the caller hands them over).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const READ = resolve(import.meta.dirname, '..', '..', 'src', 'read');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

describe('read/', () => {
  it('imports neither compaction/ nor sidecar/', () => {
    const files = readdirSync(READ).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('index.ts');
    const imports = files.flatMap((name) => [...readFileSync(join(READ, name), 'utf8').matchAll(SPECIFIER)].map((match) => `${name} → ${match[1]}`));
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((line) => /\.\.\/(compaction|sidecar)\//.test(line))).toEqual([]);
  });
});
