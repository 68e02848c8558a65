/**
 * The scanner's entry (src/scan/ loads it): the Claude Code and Codex line scanners, the layout of
 * their records, and where JavaScript may put its buffers (above the scanner's own static data).
 */
export { full, lineNumber, recordsEnd, scanClaude, valueLines } from './claude';
export * from './layout';
export { codexFull, codexLineNumber, codexRecordsEnd, codexValueLines, scanCodex } from './codex';
export * from './codex-layout';

/** Room of `bytes` for JavaScript's buffers (input and records), 16-byte aligned; memory grows to fit. */
export function reserve(bytes: usize): usize {
  return heap.alloc(bytes + 16) + 15 & ~15;
}
