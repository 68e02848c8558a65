#!/usr/bin/env node
/**
 * The scanner's step of `npm run build`: compiles the AssemblyScript sources in assembly/ into
 * dist/scan/scanner.wasm with the compiler the package's devDependencies install (assemblyscript,
 * from the npm registry), so a fresh clone builds it with `npm ci` alone and the package ships it
 * in dist/. src/scan/scanner.ts loads it; docs/scanner.md says what it does.
 *
 * Options: optimized for speed (-O3), the runtime without a collector (the scanner allocates only
 * its names, once, and the buffers src/scan/ reserves), no run-time assertions, SIMD on (Node 20
 * runs WebAssembly SIMD; a runtime without it fails WebAssembly.validate and reads in JavaScript).
 */
import asc from 'assemblyscript/asc';
import { mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'scan', 'scanner.wasm');

mkdirSync(dirname(OUT), { recursive: true });
const { error, stderr } = await asc.main([join(ROOT, 'assembly', 'index.ts'), '--outFile', OUT, '-O3', '--runtime', 'stub', '--noAssert', '--enable', 'simd'], {});
if (error) {
  process.stderr.write(stderr.toString());
  throw new Error(`build-scan: ${error.message}`);
}
process.stdout.write(`build-scan: ${relative(ROOT, OUT)}\n`);
