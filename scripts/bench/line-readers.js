#!/usr/bin/env node
/**
 * The line-reader row: the same files read by ndjson's parser (a stream of parsed values) and by
 * our own line reader (src/formats/json/jsonl-lines.ts, which we keep for its line numbers, truncated
 * last line and BOM/CRLF handling). One process per reader. Usage:
 * node line-readers.js ndjson|ours FILE_LIST
 */
import { createReadStream, readFileSync } from 'node:fs';
import ndjson from 'ndjson';
import { forEachJsonLine } from '../../dist/formats/json/jsonl-lines.js';

const [reader, list] = process.argv.slice(2);
let values = 0;
for (const file of readFileSync(list, 'utf8').split('\n').filter(Boolean)) {
  if (reader === 'ndjson') {
    await new Promise((resolve, reject) => {
      createReadStream(file)
        .pipe(ndjson.parse({ strict: true }))
        .on('data', () => values++)
        .on('end', resolve)
        .on('error', reject);
    });
  } else {
    await forEachJsonLine(file, () => values++);
  }
}
process.stdout.write(`${JSON.stringify({ reader, values })}\n`);
