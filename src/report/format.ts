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

/** Control characters: C0 (a newline and a tab too), DEL and C1. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same but for a line break and a tab, which text output uses itself. */
const CONTROLS_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function escapeControl(char: string): string {
  const code = char.charCodeAt(0);
  if (code === 0x0a) return '\\n';
  if (code === 0x09) return '\\t';
  if (code === 0x0d) return '\\r';
  return `\\x${code.toString(16).padStart(2, '0')}`;
}

/**
 * A name (a file's, a session's) as text output shows it: control characters escaped (`\x1b`,
 * `\n`), so a name can neither drive the terminal nor break a line. `--json` keeps it as it is.
 */
export function printable(name: string): string {
  return name.replace(CONTROLS, escapeControl);
}

/** Text output as written: every control character escaped but its own line breaks and tabs. */
export function printableText(text: string): string {
  return text.replace(CONTROLS_IN_TEXT, escapeControl);
}

/** `text` in at most `width` characters, its middle cut (`…`): `left` of every kept character from its start. */
function cutMiddle(text: string, width: number, left: number): string {
  if (text.length <= width) return text;
  if (width <= 1) return '…'.slice(0, width);
  const head = Math.floor((width - 1) * left);
  return `${text.slice(0, head)}…${text.slice(text.length - (width - 1 - head))}`;
}

/**
 * A path in at most `width` columns (control characters escaped), cut in the middle so that both
 * ends stay: the file's name, most of its folder (a Claude Code project's name ends it:
 * `-home-dev-src-shop`), and the start of the path. A name too long for its share is cut in its
 * own middle: `/ho…-home-dev-src-shop/4f1c…d0e1.jsonl`.
 */
export function fitPathMiddle(given: string, width: number): string {
  const path = printable(given);
  if (path.length <= width) return path;
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  const folder = path.slice(0, slash + 1);
  // The name gets what the folder leaves, and never less than its share.
  const nameWidth = Math.min(name.length, Math.max(12, Math.ceil(width * 0.45), width - folder.length));
  if (slash < 0 || width - nameWidth < 8) return cutMiddle(path, width, 0.4);
  // A name's end tells sessions apart (ids differ there as often as at the start): it keeps more of it.
  return cutMiddle(folder, width - nameWidth, 0.25) + cutMiddle(name, nameWidth, 0.3);
}

/** Shortens a path from the left so it fits `width` columns: `…/archive/bug.jsonl` (control characters escaped). */
export function fitPath(given: string, width: number): string {
  const path = printable(given);
  if (path.length <= width) return path;
  return `…${path.slice(path.length - width + 1)}`;
}

/**
 * The width text output may take: `COLUMNS` when set (a whole number, as shells export it), else
 * the terminal's, else 80 (a pipe).
 */
export function outputWidth(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  const columns = Number(env['COLUMNS']);
  if (Number.isInteger(columns) && columns >= 20) return columns;
  return stream.isTTY && stream.columns ? stream.columns : 80;
}

/** `path (details)` on one line, or the details on a second line when that would pass `width`. */
export function titleLine(given: string, details: string, width = 80): string {
  const path = printable(given);
  const line = `${path} (${details})`;
  return line.length <= width ? line : `${path}\n  (${details})`;
}
