#!/usr/bin/env node
/**
 * Prints the plain closing line CI reads ("N passed, N failed[, N skipped]") from vitest's JSON
 * report, so a run that executed no test can never pass for one that did.
 */
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
const line = `${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`;
process.stdout.write(`tests: ${line}\n`);
if (report.numTotalTests === 0) {
  process.stderr.write('no test ran\n');
  process.exit(1);
}
