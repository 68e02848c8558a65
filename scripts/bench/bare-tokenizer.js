#!/usr/bin/env node
/**
 * The tokenizer row's yardstick, as its own process on one core: the bare parse loop, then
 * gpt-tokenizer's countTokens on exactly the texts compactor's estimator counts in a canonical
 * session (text, thinking, tool name + JSON arguments, tool output). Usage:
 * node bare-tokenizer.js o200k|cl100k FILE_LIST
 */
import { readFileSync } from 'node:fs';
import { parseEveryLine } from './bare-lines.js';

const [name, list] = process.argv.slice(2);
const { countTokens } = await import(name === 'cl100k' ? 'gpt-tokenizer/encoding/cl100k_base' : 'gpt-tokenizer/encoding/o200k_base');
const plain = { disallowedSpecial: new Set() };
const count = (text) => (text.length === 0 ? 0 : countTokens(text, plain));

function blockText(block) {
  if (block.type === 'tool_request') return block.name + JSON.stringify(block.arguments);
  if (block.type === 'tool_result') return block.output;
  return block.text;
}

let tokens = 0;
for (const file of readFileSync(list, 'utf8').split('\n').filter(Boolean)) {
  parseEveryLine(file, ({ content }) => {
    if (typeof content === 'string') tokens += count(content);
    else for (const block of content) tokens += count(blockText(block));
  });
}
process.stdout.write(`${JSON.stringify({ tokens })}\n`);
