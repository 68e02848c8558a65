#!/usr/bin/env node
'use strict';
// The command line as bundled by scripts/build-cli.js, compiled with a V8 code cache (code-cache.js).
const { join } = require('node:path');

const first = process.argv[2];
if (process.argv.length === 3 && first === '--version') {
  // Needs nothing of the bundle (src/cli.ts main() answers it alike, before loading yargs).
  process.stdout.write(`${require('../package.json').version}\n`);
} else {
  const { requireCached } = require('./code-cache.js');
  // Each command's runs share a cache; anything else (--help, flags first) shares `other`.
  const label = first !== undefined && /^[a-z]{1,16}$/.test(first) ? first : 'other';
  const isCommand = (cli) => label === 'other' || Object.hasOwn(cli.COMMANDS, label);
  requireCached(join(__dirname, '..', 'dist', 'cli-bundle.cjs'), label, isCommand).main();
}
