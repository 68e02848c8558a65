/**
 * How numbers and paths look in human output. Plain text, no colour, so output reads the same
 * on a terminal, in a pipe and under NO_COLOR.
 */

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatTokens(value: number): string {
  return integer.format(value);
}

/** `12.3k`, `4.3M`, `456M`: token counts short enough for six columns in 80 (exact below 10,000). */
export function formatTokensShort(value: number): string {
  if (value < 10_000) return formatTokens(value);
  const [divisor, unit] = value < 999_500 ? [1e3, 'k'] : value < 999_500_000 ? [1e6, 'M'] : [1e9, 'B'];
  const scaled = value / divisor;
  return `${scaled.toFixed(scaled < 99.95 ? 1 : 0)}${unit}`;
}

export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

export function formatUsd(value: number): string {
  const cents = Math.abs(value).toFixed(2);
  return `${value < 0 && cents !== '0.00' ? '-' : ''}$${cents}`;
}

/** Shortens a path from the left so it fits `width` columns: `…/archive/bug.jsonl`. */
export function fitPath(path: string, width: number): string {
  if (path.length <= width) return path;
  return `…${path.slice(path.length - width + 1)}`;
}

/** The terminal's width, or 80 in a pipe; never wider than 100 so tables stay readable. */
export function outputWidth(stream: NodeJS.WriteStream = process.stdout): number {
  return Math.min(stream.isTTY && stream.columns ? stream.columns : 80, 100);
}

/** `path (details)` on one line, or the details on a second line when that would pass `width`. */
export function titleLine(path: string, details: string, width = 80): string {
  const line = `${path} (${details})`;
  return line.length <= width ? line : `${path}\n  (${details})`;
}
