/**
 * What the HTML pages share: escaping, tables, and for their inline SVG charts round axis steps
 * and a legend laid out in rows below a plot, never on it. Pure; each chart is drawn by its own
 * module.
 */
import type { TableData } from './table.js';

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A table as HTML, each cell's text escaped; `link`, when it gives one for a cell, makes that
 * cell a link to it.
 */
export function htmlTable(table: TableData, link?: (row: number, column: number) => string | null): string {
  const align = (column: number) => (table.columns[column]?.align === 'left' ? 'l' : 'r');
  const head = table.columns.map((column, i) => `<th class="${align(i)}">${escapeHtml(column.header.trim())}</th>`).join('');
  const cell = (text: string, row: number, column: number) => {
    const href = link?.(row, column) ?? null;
    const content = escapeHtml(text.trim());
    return `<td class="${align(column)}">${href === null ? content : `<a href="${escapeHtml(href)}">${content}</a>`}</td>`;
  };
  const body = table.rows.map((cells, row) => `<tr>${cells.map((text, column) => cell(text, row, column)).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A round step for about five axis ticks over [0, max]. */
export function tickStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(Math.max(1e-9, rough)));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough) ?? power * 10;
}

/** A number as an SVG attribute: one decimal, no `-0`. */
export function px(value: number): string {
  const fixed = value.toFixed(1);
  return fixed === '-0.0' ? '0.0' : fixed;
}

/** One legend entry: its swatch (SVG drawn in a 24 x 12 box) and its label. */
export interface LegendEntry {
  readonly swatch: string;
  readonly label: string;
}

/** Characters of an 11 px system-ui label, about, for laying out the rows. */
const CHAR_WIDTH = 6.4;

/**
 * The entries in rows of at most `width` pixels, from (x, y) down: the legend's SVG and the height
 * it takes. Each entry is as wide as its label, so long names wrap to a new row, not over the next.
 */
export function legendRows(entries: readonly LegendEntry[], x: number, y: number, width: number): { readonly svg: string; readonly height: number } {
  const rowHeight = 18;
  let column = 0;
  let row = 0;
  const parts: string[] = [];
  for (const entry of entries) {
    const entryWidth = 30 + entry.label.length * CHAR_WIDTH + 18;
    if (column > 0 && column + entryWidth > width) {
      column = 0;
      row++;
    }
    parts.push(`<g class="legend-entry" transform="translate(${px(x + column)},${px(y + row * rowHeight)})">${entry.swatch}<text x="30" y="10">${escapeHtml(entry.label)}</text></g>`);
    column += entryWidth;
  }
  const rows = entries.length === 0 ? 0 : row + 1;
  return { svg: `<g class="legend">${parts.join('')}</g>`, height: rows * rowHeight };
}
