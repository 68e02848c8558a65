/**
 * Runs one agent command to its end: spawned without a shell and without a TTY, with exactly
 * the environment given (plus PATH), its output collected, a hard time limit, and an optional
 * interrupt: once `interruptWhen` resolves the process gets `interruptSignal` (an aborted turn).
 * Also an agent driven over JSON lines (pi's RPC mode) and one driven in a terminal (a TUI).
 * The scripted provider runs in the same process, so nothing here may block the event loop.
 */
import { spawn } from 'node:child_process';

/**
 * Resolves {code, signal, stdout, stderr, interrupted, timedOut}; never rejects for a failing
 * command (the caller decides what a failure means), only when the binary cannot start.
 */
export function runAgent({ bin, args, env, cwd, timeoutMs = 120_000, input, interruptWhen, interruptSignal = 'SIGINT' }) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    let timedOut = false;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    if (input !== undefined) child.stdin.end(input);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    interruptWhen?.then(() => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      interrupted = true;
      child.kill(interruptSignal);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${bin}: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, interrupted, timedOut });
    });
  });
}

/** A command line for the manifest: the arguments quoted as a shell would need them. */
export function commandLine(name, args) {
  const quote = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${String(arg).replaceAll("'", "'\\''")}'`);
  return [name, ...args].map(quote).join(' ');
}

/**
 * Starts an agent that is driven over stdin/stdout JSON lines (pi's `--mode rpc`). Returns
 * { exchange(command, ...tests) → the events, one per test, that arrive after the command is
 * written (each test takes the first event it accepts, in any order), events, close() →
 * {code, signal, stderr} }.
 */
export function startRpcAgent({ bin, args, env, cwd, timeoutMs = 120_000 }) {
  const child = spawn(bin, args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const events = [];
  const waiters = [];
  let stderr = '';
  let buffer = '';
  let exited = null;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const settle = () => {
    for (const waiter of [...waiters]) {
      const event = events.slice(waiter.from).find(waiter.test);
      if (!event && !exited) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      if (event) waiter.resolve(event);
      else waiter.reject(new Error(`${bin} exited (${exited.code ?? exited.signal}) before an awaited event; stderr: ${stderr.slice(-400)}`));
    }
  };
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      try {
        events.push(JSON.parse(line));
      } catch {
        events.push({ type: 'unparsed', line });
      }
    }
    settle();
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const closed = new Promise((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      exited = { code, signal };
      settle();
      resolve({ code, signal, stderr });
    }),
  );
  return {
    events,
    exchange(command, ...tests) {
      const from = events.length;
      child.stdin.write(`${JSON.stringify(command)}\n`);
      return Promise.all(
        tests.map(
          (test) =>
            new Promise((resolve, reject) => {
              waiters.push({ from, test, resolve, reject });
              settle();
            }),
        ),
      );
    },
    close: () => {
      child.stdin.end();
      return closed;
    },
  };
}

/** How many Ctrl-C a terminal agent is sent, a second apart, before it is killed. */
const QUIT_KEYS = 5;

/**
 * Starts an agent's interactive terminal UI in a pseudo-terminal, made by util-linux `script`
 * (no native module): `type(text)` sends keystrokes (`\r` is Enter), `output` is what it drew so
 * far, `close()` presses Ctrl-C until it exits (killed after QUIT_KEYS) and resolves
 * {code, signal, output}.
 */
export function startTerminalAgent({ bin, args, env, cwd, timeoutMs = 120_000, columns = 100, rows = 40 }) {
  const terminal = { TERM: 'xterm-256color', COLUMNS: String(columns), LINES: String(rows) };
  const child = spawn('script', ['--quiet', '--return', '--command', commandLine(bin, args), '/dev/null'], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, ...terminal },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const closed = new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`cannot start script(1) for ${bin}: ${error.message}`)));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    get output() {
      return output;
    },
    type(text) {
      child.stdin.write(text);
    },
    async close() {
      for (let pressed = 0; pressed < QUIT_KEYS && running(); pressed++) {
        child.stdin.write('\x03');
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
      }
      if (running()) child.kill('SIGKILL');
      return closed;
    },
  };
}
