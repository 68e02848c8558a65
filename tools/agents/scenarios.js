/**
 * What each agent is asked and what the scripted provider answers, one scenario per fixture:
 * the script (replies and the usage each reports) and `play`, the agent commands that consume
 * it. `expects` names the structures the session files must hold afterwards (structures.js
 * checks them), so a scenario that stopped doing what it says fails the generator.
 * The smoke scenarios are the small ones the CI tests run for real.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeCode, codex, pi } from './agents.js';
import { sessionFiles } from './play.js';

const lines = (path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

/** Resolves once `test()` holds, checking every 100 ms (for at most 60 s). */
async function until(test) {
  for (let waited = 0; !test(); waited += 100) {
    if (waited > 60_000) throw new Error(`gave up waiting for ${test}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A prompt long enough (~100 estimated tokens) that pi keeps whole turns when it compacts. */
const long = (text) => `${text} ${'Keep the answer short and plain. '.repeat(12).trim()}`;

const bash = (command) => ({ name: 'Bash', input: { command, description: `Run ${command}` } });
const exec = (cmd) => ({ name: 'exec_command', input: { cmd } });
const piBash = (command) => ({ name: 'bash', input: { command } });

// ---- Claude Code ----------------------------------------------------------------------------

const CLAUDE_MODEL = ['--model', claudeCode.model];
const claudeFile = (ctx, sessionId) => join(claudeCode.sessionsDir(ctx.home), claudeCode.projectSlug(ctx.cwd), `${sessionId}.jsonl`);

const claudeTools = {
  agent: 'claude-code',
  name: 'tools-subagent',
  summary:
    'Three parallel Bash calls with hooks (SessionStart, UserPromptSubmit, PreToolUse and PostToolUse on Bash, Stop) in one ' +
    'response (thinking + text + three tool_use blocks), ' +
    'then a resumed session (--resume) in which the model starts a general-purpose subagent (Agent tool) that runs a Bash call of its own.',
  expects: ['parallel-tool-calls', 'hooks', 'thinking', 'cache-write-1h', 'resumed', 'subagent'],
  script: [
    {
      thinking: 'Three independent commands: run them together.',
      text: 'Running three commands.',
      toolCalls: [bash('echo one'), bash('echo two'), bash('echo three')],
      usage: { input: 1200, cacheWrite1h: 9000, cacheWrite5m: 300, output: 77 },
      label: 'three parallel Bash calls',
    },
    { text: 'All three printed.', usage: { input: 50, cacheRead: 9300, cacheWrite1h: 400, output: 12 }, label: 'answer' },
    {
      text: 'A subagent will count them.',
      toolCalls: [{ name: 'Agent', input: { description: 'Count files', prompt: 'Count the files in this folder.', subagent_type: 'general-purpose' } }],
      usage: { input: 40, cacheRead: 9700, cacheWrite1h: 150, output: 30 },
      label: 'main: Agent call',
    },
    { toolCalls: [bash('ls | wc -l')], usage: { input: 2100, cacheWrite5m: 6000, output: 25 }, label: 'subagent: Bash call' },
    { text: 'There are two files.', usage: { input: 30, cacheRead: 6000, cacheWrite5m: 80, output: 9 }, label: 'subagent: answer' },
    { text: 'The subagent counted two files.', usage: { input: 25, cacheRead: 9850, cacheWrite1h: 60, output: 11 }, label: 'main: answer' },
  ],
  async play(ctx) {
    const session = 'c0de0001-0000-4000-8000-000000000001';
    await claudeParallelRun(ctx, session);
    await ctx.run(['-p', 'Ask a subagent to count the files here.', ...CLAUDE_MODEL, '--resume', session, '--allowedTools', 'Bash']);
  },
};

/** The first prompt of tools-subagent: one response with three parallel Bash calls, then an answer. */
function claudeParallelRun(ctx, session) {
  return ctx.run(['-p', 'Print one, two and three with three commands at once.', ...CLAUDE_MODEL, '--session-id', session, '--allowedTools', 'Bash']);
}


const claudeBranches = {
  agent: 'claude-code',
  name: 'branches-compact-abort',
  summary:
    'Two prompts; the second is then edited (--resume --resume-session-at the first answer), which leaves the first ' +
    'version as an abandoned branch; a manual /compact; a prompt after it; a turn killed (SIGINT) while its reply streams ' +
    '(the text block arrived, the tool_use block never finished: Claude Code records nothing of it); finally ' +
    '--fork-session into a new session file that repeats the parent chain.',
  expects: ['resumed', 'abandoned-branch', 'compaction-manual', 'aborted', 'fork'],
  script: [
    { text: 'The first answer.', usage: { input: 900, cacheWrite1h: 8000, output: 20 }, label: 'answer 1' },
    { text: 'The second answer.', usage: { input: 30, cacheRead: 8900, cacheWrite1h: 50, output: 21 }, label: 'answer 2 (abandoned by the edit)' },
    { text: 'The edited second answer.', usage: { input: 35, cacheRead: 8900, cacheWrite5m: 40, output: 22 }, label: 'answer 2, edited' },
    { kind: 'compaction', text: '<summary>The user asked two questions and got two answers.</summary>', usage: { input: 9100, output: 140 }, label: '/compact summary (not recorded in the file)' },
    { text: 'The answer after compaction.', usage: { input: 1500, cacheWrite1h: 7000, output: 18 }, label: 'answer after /compact' },
    {
      text: 'Starting a long command.',
      toolCalls: [bash('sleep 30')],
      hang: { afterParts: 1 },
      usage: { input: 40, cacheRead: 8500, output: 60 },
      label: 'reply cut by SIGINT (only message_start usage reached the agent; nothing recorded)',
    },
    { text: 'The answer in the fork.', usage: { input: 45, cacheRead: 8900, cacheWrite1h: 30, output: 16 }, label: 'answer in the forked session' },
  ],
  async play(ctx) {
    const session = 'c0de0002-0000-4000-8000-000000000002';
    const fork = 'c0de0002-0000-4000-8000-0000000000f0';
    await ctx.run(['-p', 'First question.', ...CLAUDE_MODEL, '--session-id', session]);
    await ctx.run(['-p', 'Second question.', ...CLAUDE_MODEL, '--resume', session]);
    const firstAnswer = lines(claudeFile(ctx, session)).find((line) => line.type === 'assistant');
    await ctx.run(['-p', 'Second question, edited.', ...CLAUDE_MODEL, '--resume', session, '--resume-session-at', firstAnswer.uuid]);
    await ctx.run(['-p', '/compact', ...CLAUDE_MODEL, '--resume', session]);
    await ctx.run(['-p', 'Third question.', ...CLAUDE_MODEL, '--resume', session]);
    await ctx.run(['-p', 'Fourth question, to be interrupted.', ...CLAUDE_MODEL, '--resume', session, '--allowedTools', 'Bash'], { interrupt: 'SIGINT' });
    await ctx.run(['-p', 'A question in a fork.', ...CLAUDE_MODEL, '--resume', session, '--fork-session', '--session-id', fork]);
  },
};

const claudeAutoCompact = {
  agent: 'claude-code',
  name: 'auto-compact',
  summary:
    'With CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000 (threshold 167k, blocking limit 177k), a reply reports a 172k-token ' +
    'context, so the next resumed prompt auto-compacts first (the summary call is billed but not recorded), then answers. ' +
    'The first reply stays small: Claude Code takes the first call as the fixed prefix and will not compact when that ' +
    'prefix alone is above the threshold.',
  env: { CLAUDE_CODE_AUTO_COMPACT_WINDOW: '200000' },
  expects: ['resumed', 'compaction-auto', 'cache-write-1h'],
  script: [
    { text: 'A short answer.', usage: { input: 100, cacheWrite1h: 19_900, output: 40 }, label: 'answer at 20k context' },
    { text: 'A long answer.', usage: { input: 100, cacheRead: 19_900, cacheWrite1h: 151_960, output: 40 }, label: 'answer at 172k context' },
    { kind: 'compaction', text: '<summary>A long session about two questions.</summary>', usage: { input: 172_050, output: 310 }, label: 'auto-compact summary (not recorded in the file)' },
    { text: 'The answer after compaction.', usage: { input: 2_000, cacheWrite1h: 6_000, output: 15 }, label: 'answer after auto-compact' },
  ],
  async play(ctx) {
    const session = 'c0de0003-0000-4000-8000-000000000003';
    await ctx.run(['-p', 'A short question.', ...CLAUDE_MODEL, '--session-id', session]);
    await ctx.run(['-p', 'A question with a long answer.', ...CLAUDE_MODEL, '--resume', session]);
    await ctx.run(['-p', 'Another question.', ...CLAUDE_MODEL, '--resume', session]);
  },
};

// ---- Codex ----------------------------------------------------------------------------------

const CODEX_FLAGS = ['--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];

const codexTools = {
  agent: 'codex',
  name: 'tools-resume-abort',
  summary:
    'codex exec with two parallel exec_command calls; codex exec resume (cached input); a resumed turn killed ' +
    '(SIGINT) while its reply streams, which the Responses API bills without reporting usage.',
  expects: ['parallel-tool-calls', 'cached-input', 'resumed', 'aborted'],
  script: [
    { text: 'Running two commands.', toolCalls: [exec('echo one'), exec('echo two')], usage: { input: 3000, output: 50, reasoning: 10 }, label: 'parallel calls' },
    { text: 'Both printed.', usage: { input: 200, cacheRead: 3000, output: 12 }, label: 'answer' },
    { text: 'Again: one more command.', toolCalls: [exec('echo three')], usage: { input: 150, cacheRead: 3200, output: 20 }, label: 'resumed: one call' },
    { text: 'Printed three.', usage: { input: 90, cacheRead: 3350, output: 8 }, label: 'resumed: answer' },
    { text: 'Starting.', toolCalls: [exec('sleep 30')], hang: { afterParts: 1 }, usage: { input: 60, cacheRead: 3440, output: 30 }, label: 'reply cut by SIGINT (no usage reported)' },
  ],
  async play(ctx) {
    const first = await codexParallelRun(ctx);
    const id = codex.sessionId(first.stdout + first.stderr);
    await ctx.run(['exec', 'resume', ...CODEX_FLAGS, id, 'Now print three.']);
    await ctx.run(['exec', 'resume', ...CODEX_FLAGS, id, 'Start a long command.'], { interrupt: 'SIGINT' });
  },
};

/** The first prompt of tools-resume-abort: two parallel exec_command calls, then an answer. */
function codexParallelRun(ctx) {
  return ctx.run(['exec', ...CODEX_FLAGS, 'Print one and two with two commands at once.']);
}

const codexCompact = {
  agent: 'codex',
  name: 'auto-compact',
  summary:
    'model_auto_compact_token_limit = 20000; a reply reports 25k input, so the resumed turn compacts first ' +
    '(a `compaction` request, recorded with its usage), then answers.',
  setup: { autoCompactLimit: 20_000 },
  expects: ['resumed', 'compacted', 'cached-input'],
  script: [
    { text: 'A long answer.', usage: { input: 5_000, cacheRead: 20_000, output: 40 }, label: 'answer at 25k input' },
    { kind: 'compaction', text: 'Summary: one question, one long answer.', usage: { input: 25_040, output: 120 }, label: 'compaction summary' },
    { text: 'The answer after compaction.', usage: { input: 700, output: 10 }, label: 'answer after compaction' },
  ],
  async play(ctx) {
    const first = await ctx.run(['exec', ...CODEX_FLAGS, 'A question with a long answer.']);
    const id = codex.sessionId(first.stdout + first.stderr);
    await ctx.run(['exec', 'resume', ...CODEX_FLAGS, id, 'Another question.']);
  },
};

const codexReview = {
  agent: 'codex',
  name: 'review',
  summary:
    'codex exec review --uncommitted in a git repository with one changed file: the parent session records the ' +
    'review mode items, the review itself runs in a subagent session (source subagent: review) that holds the billed call.',
  git: true,
  expects: ['review'],
  script: [
    {
      text: JSON.stringify({ findings: [], overall_correctness: 'patch is correct', overall_explanation: 'The change prints 2 instead of 1.', overall_confidence_score: 0.9 }),
      usage: { input: 1_800, cacheRead: 200, output: 45 },
      label: 'review answer',
    },
  ],
  async play(ctx) {
    await ctx.run(['exec', 'review', ...CODEX_FLAGS, '--uncommitted']);
  },
};

/** A fork scenario's parent: two parallel calls, then an answer. */
const CODEX_PARENT_STEPS = [
  { text: 'Running two commands.', toolCalls: [exec('echo one'), exec('echo two')], usage: { input: 3000, output: 50, reasoning: 10 }, label: 'parent: parallel calls' },
  { text: 'Both printed.', usage: { input: 200, cacheRead: 3000, output: 12 }, label: 'parent: answer' },
];

/** A fork's own turn: one call, then an answer; `cached`: the prompt it starts from, all cached. */
const codexForkSteps = (cached) => [
  { text: 'In the fork: one command.', toolCalls: [exec('echo four')], usage: { input: 140, cacheRead: cached, output: 18 }, label: 'fork: one call' },
  { text: 'Printed four.', usage: { input: 70, cacheRead: cached + 160, output: 7 }, label: 'fork: answer' },
];

const FORK_PROMPT = 'In a fork: print four.';

/** A fork scenario's parent session: the first prompt, then `codex exec resume` with `prompt`; its id. */
async function codexParent(ctx, prompt) {
  const first = await codexParallelRun(ctx);
  const id = codex.sessionId(first.stdout + first.stderr);
  await ctx.run(['exec', 'resume', ...CODEX_FLAGS, id, prompt]);
  return id;
}

const codexExecFork = {
  agent: 'codex',
  name: 'exec-fork',
  summary:
    'codex exec with two parallel exec_command calls; codex exec resume (one more answer); codex exec fork of that ' +
    'session, which since 0.148 refers to the parent\'s history (history_base) instead of copying it, then one tool ' +
    'call and an answer in the fork.',
  expects: ['parallel-tool-calls', 'cached-input', 'resumed', 'forked', 'fork-refers-to-history'],
  script: [...CODEX_PARENT_STEPS, { text: 'Nothing else to run.', usage: { input: 120, cacheRead: 3200, output: 9 }, label: 'parent, resumed: answer' }, ...codexForkSteps(3300)],
  async play(ctx) {
    const id = await codexParent(ctx, 'Anything else?');
    await ctx.run(['exec', 'fork', ...CODEX_FLAGS, id, FORK_PROMPT]);
  },
};

/** The rollouts under the agent's sessions folder, with their first line (the session_meta). */
const codexRollouts = (ctx) =>
  sessionFiles(codex, ctx.home)
    .filter((file) => file.path.endsWith('.jsonl'))
    .map((file) => ({ ...file, meta: lines(file.absolute)[0]?.payload ?? {} }));

const codexTuiFork = {
  agent: 'codex',
  name: 'tui-fork-0.142',
  bin: 'codex0142',
  summary:
    'Codex 0.142, which writes a call\'s usage (token_count) only after the call\'s tool results and no per-response ' +
    'record: codex exec with two parallel exec_command calls; codex exec resume with one more call; then `codex fork` ' +
    'in its terminal UI (a pseudo-terminal), which copies the parent\'s rollout into the fork\'s (its session_meta ' +
    'and token counts included, restamped), and a prompt typed there: one tool call and an answer.',
  expects: ['parallel-tool-calls', 'cached-input', 'resumed', 'usage-after-tool-results', 'forked', 'fork-copies-history'],
  script: [
    ...CODEX_PARENT_STEPS,
    { text: 'Again: one more command.', toolCalls: [exec('echo three')], usage: { input: 150, cacheRead: 3200, output: 20 }, label: 'parent, resumed: one call' },
    { text: 'Printed three.', usage: { input: 90, cacheRead: 3350, output: 8 }, label: 'parent, resumed: answer' },
    ...codexForkSteps(3440),
  ],
  async play(ctx) {
    const id = await codexParent(ctx, 'Now print three.');
    await ctx.terminal(['fork', '--dangerously-bypass-approvals-and-sandbox', id], async (terminal) => {
      // The fork's rollout (with its copy of the parent) is written as the terminal UI starts.
      await until(() => codexRollouts(ctx).some((file) => file.meta.forked_from_id === id));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      terminal.type(FORK_PROMPT);
      await new Promise((resolve) => setTimeout(resolve, 300));
      terminal.type('\r');
      const fork = () => codexRollouts(ctx).find((file) => file.meta.forked_from_id === id);
      const answered = () => {
        const all = lines(fork().absolute);
        const asked = all.findIndex((line) => line.payload?.type === 'message' && JSON.stringify(line.payload.content).includes(FORK_PROMPT));
        return asked >= 0 && all.slice(asked).some((line) => line.payload?.type === 'task_complete');
      };
      await until(() => ctx.provider.pending() === 0 && answered());
    });
  },
};

// ---- pi -------------------------------------------------------------------------------------

const piTools = {
  agent: 'pi',
  name: 'print-continue',
  summary:
    'pi -p: two parallel bash calls and an answer; pi -p --continue (which leaves no mark in the file but a second ' +
    'prompt): one more call, with a cache write reported.',
  expects: ['parallel-tool-calls', 'cached-input', 'several-turns'],
  script: [
    { text: 'Running two commands.', toolCalls: [piBash('echo one'), piBash('echo two')], usage: { input: 3000, output: 50 }, label: 'parallel calls' },
    { text: 'Both printed.', usage: { input: 200, cacheRead: 3000, output: 12 }, label: 'answer' },
    { text: 'One more.', toolCalls: [piBash('echo three')], usage: { input: 120, cacheRead: 3200, cacheWrite5m: 64, output: 15 }, label: 'continued: one call' },
    { text: 'Printed three.', usage: { input: 40, cacheRead: 3400, output: 7 }, label: 'continued: answer' },
  ],
  async play(ctx) {
    await piParallelRun(ctx);
    await ctx.run(['-p', '--continue', ...pi.args('Now print three.')]);
  },
};

/** The first prompt of print-continue: two parallel bash calls, then an answer. */
function piParallelRun(ctx) {
  return ctx.run(['-p', ...pi.args('Print one and two with two commands at once.')]);
}

const piRpc = {
  agent: 'pi',
  name: 'rpc-branch-compact-abort-fork',
  summary:
    'pi --mode rpc: a tool turn and a second prompt; `/branch-at` (an extension command calling the tree navigation) ' +
    'back to the first answer, which summarises the branch left (a summary call, not recorded with usage) and leaves it ' +
    'abandoned in the same file; a reply near the window (contextWindow 32000, reserve 16384) so pi auto-compacts after ' +
    'it; a manual `compact`; a turn aborted while its reply streams (stopReason aborted, no usage); a `fork` from the last ' +
    'prompt into a new session file that repeats the path before it.',
  setup: { contextWindow: 32_000, keepRecentTokens: 50 },
  expects: ['parallel-tool-calls', 'branch', 'branch-summary', 'compaction', 'aborted', 'fork'],
  script: [
    { text: 'Running two commands.', toolCalls: [piBash('echo one'), piBash('echo two')], usage: { input: 3000, output: 50 }, label: 'parallel calls' },
    { text: 'Both printed.', usage: { input: 200, cacheRead: 3000, output: 12 }, label: 'answer' },
    { text: 'An answer on the branch to be left.', usage: { input: 150, cacheRead: 3200, output: 11 }, label: 'answer on the abandoned branch' },
    { kind: 'compaction', text: '## Goal\nA question that was left.', usage: { input: 500, output: 40 }, label: 'branch summary (not recorded with usage)' },
    { text: 'A long answer.', usage: { input: 4_000, cacheRead: 16_000, output: 30 }, label: 'answer above the compaction threshold' },
    { kind: 'compaction', text: '## Goal\nPrint numbers.\n## Progress\nDone.', usage: { input: 900, output: 60 }, label: 'auto-compaction summary (not recorded with usage)' },
    { text: 'A short answer.', usage: { input: 300, cacheRead: 1_200, output: 9 }, label: 'answer after auto-compaction' },
    { kind: 'compaction', text: '## Goal\nPrint numbers.\n## Progress\nAnswered twice.', usage: { input: 700, output: 55 }, label: 'manual compaction summary (not recorded with usage)' },
    { text: 'Starting.', toolCalls: [piBash('sleep 30')], hang: { afterParts: 1 }, usage: { input: 50, cacheRead: 1_300, output: 20 }, label: 'reply aborted mid-stream (no usage reported)' },
    { text: 'The answer in the fork.', usage: { input: 400, cacheRead: 1_000, output: 14 }, label: 'answer in the fork' },
  ],
  async play(ctx) {
    const agent = ctx.rpc(['--mode', 'rpc', ...pi.args()]);
    const answered = (type) => (event) => event.type === 'response' && event.command === type;
    const ended = (event) => event.type === 'agent_end';
    const compacted = (event) => event.type === 'compaction_end';
    const call = async (command, ...tests) => {
      const [response, ...rest] = await agent.exchange({ id: command.type, ...command }, answered(command.type), ...tests);
      if (!response.success) throw new Error(`pi rpc ${command.type} failed: ${JSON.stringify(response).slice(0, 300)}`);
      return [response, ...rest];
    };
    await call({ type: 'prompt', message: long('Print one and two with two commands at once.') }, ended);
    const [state] = await call({ type: 'get_state' });
    const firstAnswer = lines(state.data.sessionFile).filter((entry) => entry.message?.role === 'assistant').at(-1);
    await call({ type: 'prompt', message: long('A question to be left behind.') }, ended);
    await call({ type: 'prompt', message: `/branch-at ${firstAnswer.id}` });
    await until(() => lines(state.data.sessionFile).some((entry) => entry.type === 'branch_summary'));
    await call({ type: 'prompt', message: long('Tell me more.') }, ended, compacted);
    await call({ type: 'prompt', message: long('One more question.') }, ended);
    await call({ type: 'compact' });
    await call({ type: 'prompt', message: long('Start a long command.') });
    await ctx.provider.hung();
    await call({ type: 'abort' }, ended);
    const [forkable] = await call({ type: 'get_fork_messages' });
    await call({ type: 'fork', entryId: forkable.data.messages.at(-1).entryId });
    await call({ type: 'prompt', message: long('A question in the fork.') }, ended);
    return agent.close();
  },
};

/** The first prompt of a scenario (its first two replies) as the scenario CI runs for real. */
const smokeOf = (full, play, expects) => ({
  agent: full.agent,
  name: 'smoke',
  summary: `The first prompt of ${full.name}: one response with parallel tool calls, then an answer.`,
  expects,
  script: full.script.slice(0, 2),
  play,
});
const claudeSmoke = smokeOf(claudeTools, (ctx) => claudeParallelRun(ctx, 'c0de0000-0000-4000-8000-000000000000'), ['parallel-tool-calls', 'hooks', 'cache-write-1h']);
const codexSmoke = smokeOf(codexTools, codexParallelRun, ['parallel-tool-calls', 'cached-input']);
const piSmoke = smokeOf(piTools, piParallelRun, ['parallel-tool-calls', 'cached-input']);

export const SCENARIOS = [claudeSmoke, claudeTools, claudeBranches, claudeAutoCompact, codexSmoke, codexTools, codexCompact, codexReview, codexExecFork, codexTuiFork, piSmoke, piTools, piRpc];

/** The scenario the CI test runs for an agent. */
export const smokeScenario = (agent) => SCENARIOS.find((scenario) => scenario.agent === agent && scenario.name === 'smoke');
