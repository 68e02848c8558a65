/**
 * Text tables for human output (cli-table3), uncoloured and sized to the terminal.
 */
import Table from 'cli-table3';

export interface Column {
  readonly header: string;
  readonly align?: 'left' | 'right';
}

export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const table = new Table({
    head: columns.map((column) => column.header),
    colAligns: columns.map((column) => column.align ?? 'right'),
    style: { head: [], border: [], compact: true, 'padding-left': 1, 'padding-right': 1 },
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '',
      right: '', 'right-mid': '', middle: ' ',
    },
  });
  for (const row of rows) table.push([...row]);
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}
