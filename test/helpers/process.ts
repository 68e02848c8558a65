/**
 * The built CLI as a child process the test can watch and signal while it runs (execa's
 * `runCli` only gives the result at the end): collects stdout and stderr, waits for a line to
 * appear, and resolves with the exit code and the signal that ended it.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { BIN, ROOT } from './cli.js';

export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once `pattern` appears on stderr (or rejects if the process ends first). */
  stderrMatches(pattern: RegExp): Promise<void>;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, CI: 'true', NO_COLOR: '1', ...env } });
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    for (const waiter of waiters.splice(0)) {
      if (waiter.pattern.test(err)) waiter.resolve();
      else waiters.push(waiter);
    }
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    stderrMatches: (pattern) =>
      pattern.test(err)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiters.push({ pattern, resolve })),
            exit.then(() => {
              if (!pattern.test(err)) throw new Error(`process ended before stderr matched ${pattern}: ${err}`);
            }),
          ]),
    exit,
  };
}
