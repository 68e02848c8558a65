/**
 * The progress bar for long batches: on stderr, only on a terminal, never in CI or with --json,
 * so stdout stays machine-readable.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  tick(label: string): void;
  stop(): void;
}

const SILENT: Progress = { tick: () => {}, stop: () => {} };

export function shouldShowProgress(json: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  return !json && Boolean(process.stderr.isTTY) && !env['CI'];
}

export function createProgress(total: number, enabled: boolean): Progress {
  if (!enabled || total < 2) return SILENT;
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: '{bar} {value}/{total} sessions | {label}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: true,
      linewrap: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { label: '' });
  return {
    tick: (label) => bar.increment(1, { label: label.length > 30 ? `…${label.slice(-29)}` : label }),
    stop: () => bar.stop(),
  };
}
