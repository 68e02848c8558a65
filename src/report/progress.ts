/**
 * The progress bar for long batches: on stderr, only on a terminal, never in CI or with --json,
 * so stdout stays machine-readable. While it is drawn, whatever the run prints (results on
 * stdout, warnings and logs on stderr) goes above it through `printAbove`: the bar is cleared,
 * the lines written, the bar drawn again below them, so neither overwrites the other. When it
 * stops, its line is cleared and the cursor left there, for the lines that come after.
 */
import type CliProgress from 'cli-progress';
import { createRequire } from 'node:module';
import { lazyReadline } from '../lazy-builtins.js';

/** cli-progress is loaded only when a bar is drawn (on a terminal, for a batch): start-up stays short. */
const require = createRequire(import.meta.url);

export interface Progress {
  /** One more session done. */
  tick(label: string): void;
  stop(): void;
}

const SILENT: Progress = { tick: () => {}, stop: () => {} };

/** The bar on the screen now, if any: what `printAbove` steps around. */
let drawn: { readonly clear: () => void; readonly redraw: () => void } | null = null;
/** Nested printAbove calls clear and redraw once. */
let depth = 0;

export function shouldShowProgress(json: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  return !json && Boolean(process.stderr.isTTY) && !env['CI'];
}

/**
 * Runs `print`, which writes whole lines, above the bar when one is drawn. Output that goes to a
 * file or a pipe (`stream` not a terminal) never meets the bar and is written as it is.
 */
export function printAbove(print: () => void, stream: NodeJS.WriteStream = process.stderr): void {
  const bar = drawn;
  if (!bar || !stream.isTTY || depth > 0) {
    print();
    return;
  }
  depth++;
  bar.clear();
  try {
    print();
  } finally {
    depth--;
    bar.redraw();
  }
}

/** `text` (whole lines) on `stream`, above the bar when one is drawn. */
export function writeAbove(stream: NodeJS.WriteStream, text: string): void {
  printAbove(() => stream.write(text), stream);
}

export function createProgress(total: number, enabled: boolean): Progress {
  if (!enabled || total < 2) return SILENT;
  const stream = process.stderr;
  const cliProgress = require('cli-progress') as typeof CliProgress;
  // A MultiBar of one: unlike SingleBar it saves and restores no cursor position, which lines
  // printed in between would make wrong. Wrapping stays on, so lines printed above are whole.
  const bars = new cliProgress.MultiBar(
    {
      stream,
      format: '{bar} {value}/{total} sessions | {label}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: true,
      linewrap: true,
    },
    cliProgress.Presets.shades_classic,
  );
  // A MultiBar's bars are GenericBars (the typings say SingleBar), whose render can be forced.
  const bar: CliProgress.GenericBar = bars.create(total, 0, { label: '' });
  const clear = () => {
    const readline = lazyReadline();
    readline.cursorTo(stream, 0);
    readline.clearLine(stream, 0);
  };
  drawn = { clear, redraw: () => bar.render(true) };
  bar.render(true);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    drawn = null;
    bars.stop();
    process.removeListener('exit', stop);
  };
  // An exit in the middle (a second Ctrl-C) still gives the cursor back.
  process.once('exit', stop);
  return {
    tick: (label) => bar.increment(1, { label: label.length > 30 ? `…${label.slice(-29)}` : label }),
    stop,
  };
}
