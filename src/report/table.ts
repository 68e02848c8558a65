/**
 * Text tables for human output, uncoloured: each column as wide as its widest cell, one space of
 * padding each side, right-aligned unless asked. Linear in the cells (cli-table3, which drew these
 * before, lays out every cell against every earlier one: 20,000 turns took a minute); the output
 * is the same, character for character. Multi-line cells make their row as tall as their lines.
 * Cutting long tables is left to the callers.
 */
import { createRequire } from 'node:module';

export interface Column {
  readonly header: string;
  readonly align?: 'left' | 'right';
}

/** A table's columns and rows of text, for the terminal (renderTable) or a page (report/html.ts htmlTable). */
export interface TableData {
  readonly columns: readonly Column[];
  readonly rows: readonly (readonly string[])[];
}

const require = createRequire(import.meta.url);
let stringWidth: ((text: string) => number) | undefined;

const ANSI_COLOUR = /\u001b\[(?:\d*;){0,5}\d*m/g;
/**
 * Text one column a character: printable ASCII and the few other characters our own output
 * uses (the `…` of a shortened path, `→`, `—`, `·`, `×`), none of them wide, combining or
 * emoji. string-width's first call compiles its emoji pattern, a few ms of a small run.
 */
const NARROW = /^[\x20-\x7e\u00b7\u00d7\u2014\u2026\u2192]*$/;

/** Columns a line takes on a terminal: its length for narrow text, string-width otherwise (wide and combining characters). */
function widthOf(line: string): number {
  if (NARROW.test(line)) return line.length;
  stringWidth ??= require('string-width') as (text: string) => number;
  return stringWidth(line.includes('\u001b') ? line.replace(ANSI_COLOUR, '') : line);
}

export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const all = [columns.map((column) => column.header), ...rows];
  const cells = all.map((row) => row.map((cell) => String(cell).split('\n').map((line) => ({ line, width: widthOf(line) }))));
  const widths: number[] = [];
  for (const row of cells) {
    row.forEach((lines, x) => {
      for (const { width } of lines) if (width > (widths[x] ?? 0)) widths[x] = width;
      widths[x] ??= 0;
    });
  }
  const out: string[] = [];
  for (const row of cells) {
    const height = row.reduce((most, lines) => Math.max(most, lines.length), 0);
    for (let lineNum = 0; lineNum < height; lineNum++) {
      let text = '';
      row.forEach((lines, x) => {
        const width = widths[x]!;
        const cell = lines[lineNum];
        let content: string;
        if (cell === undefined) content = ' '.repeat(width);
        else {
          const gap = ' '.repeat(width - cell.width);
          // A column past the headers had no alignment in cli-table3: it padded on the right.
          const align = x < columns.length ? (columns[x]!.align ?? 'right') : 'left';
          content = align === 'right' ? gap + cell.line : cell.line + gap;
        }
        text += `${x === 0 ? '' : ' '} ${content} `;
      });
      out.push(text.trimEnd());
    }
  }
  return out.join('\n');
}
