/**
 * Plays one scenario for real: prepares the project folder and a throw-away HOME, starts the
 * scripted provider, lets the agent run the scenario's commands against it, and says which
 * session file holds each billed call. Used by the fixture generator and by the CI tests;
 * what to do with the files (copy them, read them) is the caller's.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { AGENTS, filesUnder } from './agents.js';
import { startScriptedProvider } from './provider.js';
import { commandLine, runAgent, startRpcAgent, startTerminalAgent } from './run.js';

/** How long after a reply stalls the agent is interrupted: time for it to write what it got. */
const SETTLE_BEFORE_INTERRUPT_MS = 1000;

/** Git identity and dates fixed, so the project's commit (which Codex records) never changes. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.invalid',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.invalid',
  GIT_AUTHOR_DATE: '2025-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2025-01-01T00:00:00Z',
};

/** A small project the agents work in; with `git`, one commit and an uncommitted change (for a review). */
export function prepareProject(cwd, { git = false } = {}) {
  rmSync(cwd, { recursive: true, force: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'README.md'), '# Demo\n\nA project for agent fixtures.\n');
  writeFileSync(join(cwd, 'app.py'), 'print(1)\n');
  if (!git) return;
  const gitRun = (...args) => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
  gitRun('init', '-q', '-b', 'main');
  gitRun('add', '.');
  gitRun('commit', '-q', '-m', 'Initial commit');
  writeFileSync(join(cwd, 'app.py'), 'print(2)\n');
}

/**
 * The session files an agent wrote under its home (transcripts, and Claude's subagent
 * metadata), with paths relative to the folder above its sessions folder: `projects/…` for
 * Claude Code (a CLAUDE_CONFIG_DIR), `sessions/…` for Codex (a CODEX_HOME) and pi (an agent dir).
 */
export function sessionFiles(agent, home) {
  const sessions = agent.sessionsDir(home);
  const base = dirname(sessions);
  return filesUnder(sessions)
    .filter((path) => path.endsWith('.jsonl') || path.endsWith('.meta.json'))
    .map((path) => ({ path: relative(base, join(sessions, path)), absolute: join(sessions, path) }));
}

/**
 * The files among `texts` that hold a call: those naming its response id, else (an agent version
 * that records no response id, Codex before 0.153) those naming one of its output items.
 */
function holdersOf(call, texts) {
  const holding = (id) => texts.filter((file) => file.text.includes(`"${id}"`));
  const byResponse = holding(call.responseId);
  if (byResponse.length > 0) return byResponse;
  const byItems = new Map();
  for (const id of call.itemIds ?? []) for (const file of holding(id)) byItems.set(file.path, file);
  return [...byItems.values()];
}

/**
 * Plays `scenario` with the installed `tools` in `cwd` (prepared afresh), with the binary
 * `scenario.bin` names (the agent's own by default). Returns { agent, bin, home, provider
 * (closed), commands, calls, files, env }: `calls` are the provider's billed calls, each with
 * `billedIn` (the session file, relative to the agent's sessions folder, that recorded it when
 * it was made, or null) and `copiedTo` (files that repeat it later, a fork).
 */
export async function playScenario(scenario, { tools, cwd, home = mkdtempSync(join(tmpdir(), `compactor-${scenario.agent}-home-`)) }) {
  const agent = AGENTS[scenario.agent];
  const binName = scenario.bin ?? agent.bin;
  const bin = tools[binName];
  if (!bin) throw new Error(`${scenario.agent}/${scenario.name}: no installed binary ${binName}`);
  prepareProject(cwd, { git: scenario.git });
  const provider = await startScriptedProvider({ script: scenario.script, kindOf: (request) => agent.kindOf(request) });
  const commands = [];
  const attributed = new Map();
  const env = agent.env(home, provider, scenario.env);
  /** Gives every call answered so far the file that holds its response id now. */
  const attribute = (final) => {
    const texts = sessionFiles(agent, home).map((file) => ({ ...file, text: readFileSync(file.absolute, 'utf8') }));
    for (const call of provider.calls) {
      if (attributed.has(call.n)) continue;
      const holders = holdersOf(call, texts);
      if (holders.length > 1) throw new Error(`${scenario.agent}/${scenario.name}: call ${call.responseId} first appears in several files at once: ${holders.map((file) => file.path).join(', ')}`);
      if (holders.length === 1) attributed.set(call.n, holders[0].path);
      else if (final) attributed.set(call.n, null);
    }
  };
  try {
    agent.setup(home, provider, scenario.setup);
    const ctx = {
      home,
      cwd,
      provider,
      async run(args, { interrupt } = {}) {
        const interruptWhen = interrupt ? provider.hung().then(() => new Promise((resolve) => setTimeout(resolve, SETTLE_BEFORE_INTERRUPT_MS))) : undefined;
        const result = await runAgent({ bin, args, env, cwd, interruptWhen, interruptSignal: interrupt });
        commands.push({ command: commandLine(agent.bin, args), ...(interrupt ? { interrupt } : {}), exit: result.code, signal: result.signal });
        const tail = `${result.stderr}\n${result.stdout}`.trim().split('\n').slice(-6).join('\n');
        if (result.timedOut) throw new Error(`${commandLine(agent.bin, args)} timed out; last output:\n${tail}`);
        if (interrupt && !result.interrupted) throw new Error(`${commandLine(agent.bin, args)} ended before it could be interrupted; last output:\n${tail}`);
        if (!interrupt && result.code !== 0) throw new Error(`${commandLine(agent.bin, args)} exited ${result.code ?? result.signal}; last output:\n${tail}`);
        attribute(true);
        return result;
      },
      /** Runs the agent's terminal UI; `drive(terminal)` types into it, and it is quit once `drive` resolves. */
      async terminal(args, drive) {
        const terminal = startTerminalAgent({ bin, args, env, cwd });
        const record = { command: commandLine(agent.bin, args), terminal: true, typed: [] };
        commands.push(record);
        try {
          await drive({
            type(text) {
              record.typed.push(text);
              terminal.type(text);
            },
            get output() {
              return terminal.output;
            },
          });
        } finally {
          const result = await terminal.close();
          Object.assign(record, { exit: result.code, signal: result.signal });
        }
        attribute(true);
      },
      rpc(args) {
        const session = startRpcAgent({ bin, args, env, cwd });
        const record = { command: commandLine(agent.bin, args), stdin: [] };
        commands.push(record);
        return {
          ...session,
          async exchange(command, ...tests) {
            record.stdin.push(command);
            const events = await session.exchange(command, ...tests);
            attribute(false); // a later fork copies earlier calls: say where each was first
            return events;
          },
          async close() {
            const result = await session.close();
            Object.assign(record, { exit: result.code, signal: result.signal });
            attribute(true);
            return result;
          },
        };
      },
    };
    await scenario.play(ctx);
    attribute(true);
  } finally {
    await provider.close();
  }
  const files = sessionFiles(agent, home);
  const calls = provider.calls.map((call) => {
    const billedIn = attributed.get(call.n) ?? null;
    const texts = files.filter((file) => file.path !== billedIn && file.path.endsWith('.jsonl')).map((file) => ({ ...file, text: readFileSync(file.absolute, 'utf8') }));
    const copiedTo = holdersOf(call, texts).map((file) => file.path);
    return { ...call, billedIn, copiedTo };
  });
  return { agent, bin: binName, home, provider, commands, calls, files, env };
}
