/**
 * How numbers and paths look in human output. Plain text, no colour, so output reads the same
 * on a terminal, in a pipe and under NO_COLOR.
 */

/** Made on first use of a number the fast path leaves to it: building one loads ICU data (tens of ms). */
let integer: Intl.NumberFormat | undefined;

/** `1,234,567`: safe integers grouped by hand, anything else (fractions, -0, NaN, huge) by Intl. */
export function formatTokens(value: number): string {
  if (Number.isSafeInteger(value) && !Object.is(value, -0)) {
    const digits = String(Math.abs(value));
    let grouped = digits.slice(0, ((digits.length - 1) % 3) + 1);
    for (let at = grouped.length; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`;
    return value < 0 ? `-${grouped}` : grouped;
  }
  integer ??= new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
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
