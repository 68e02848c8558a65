#!/usr/bin/env node
// The command line as bundled by scripts/build-cli.js (one file and a few chunks, not ~75 modules).
import { main } from '../dist/cli-bundle.js';

await main();
