/**
 * Our spend against ccusage's (20.x, its native binary, installed at run time from
 * tools/agents/ into a cache outside the repository; an install that fails fails this test) on
 * every real and agent-written Claude Code, Codex, pi, Gemini CLI and opencode session under fixtures/.
 * Each set of sessions is laid out as the agent keeps them, in a scratch folder ccusage is
 * pointed at, and ccusage runs once per folder (`claude session`, `codex session`, `pi session`,
 * `gemini session`, `opencode session` (its database and its JSON storage), all `--json --offline`,
 * HOME an empty folder so nothing else is found);
 * `inspect --json` reads all the folders at once. A session of ours is its file and the files
 * its agent wrote beside it (sessions' subagent transcripts, Codex review rollouts), so it is
 * compared with the ccusage rows of those files, summed. Tokens must be equal and cost within
 * 0.5%, except where ccusage counts otherwise: those cases are pinned below, both numbers, with
 * the reason (README "ccusage").
 */
import { execa } from 'execa';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentTools } from '../tools/agents/install.js';
import { agentTools } from '../tools/agents/install.js';
import type { SessionAgent } from './helpers/agent-fixtures.js';
import { AGENT_FIXTURES, sessionFiles } from './helpers/agent-fixtures.js';
import { FIXTURES, jsonLines, runCli, sessionRecords } from './helpers/cli.js';

interface Tokens {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly output: number;
}

interface Counted extends Tokens {
  /** Dollars; null where the model has no price. */
  readonly cost: number | null;
}

/** A folder laid out for one ccusage run, and where each session in it came from. */
interface Layout {
  readonly agent: SessionAgent | 'opencode';
  readonly dir: string;
  /** Layout path → the fixture it is a copy of (relative to fixtures/). */
  readonly fixtureOf: Map<string, string>;
}

/**
 * Where ccusage and ours count differently, per fixture: both numbers, pinned. Why, per case:
 * - a pi fork's header names its parent and its entries older than the fork were copied from
 *   it (billed there); ccusage counts every assistant entry of every file, copies included.
 *   `pi-mono_before-compaction_v1` is a v1 branch (`branchedFrom`) all of whose entries are
 *   copies, so its spend is nothing.
 * - Gemini CLI's `thoughts` are billed as output: we count them in `output`, ccusage bills them
 *   (its cost agrees) but leaves them out of its `outputTokens`.
 * - A Codex fork (`forked_from_id`) whose first two token counts fall in one second: ccusage takes
 *   them, and every other count of that second, for the parent's history replayed (which Codex
 *   before 0.148 copies in one burst). Codex 0.148 on copies nothing, so what ccusage drops are the
 *   fork's own calls (the scripted provider answers within milliseconds): its manifest bills them.
 */
const DIFFERS: Record<string, { readonly ours: Tokens; readonly ccusage: Tokens }> = {
  'agents/codex/exec-fork/sessions/2026/12/07/rollout-2026-12-07T21-17-25-01a2525e-5a6e-72c1-992d-2418e58e745d.jsonl': {
    ours: { input: 210, cacheRead: 6_760, cacheWrite: 0, output: 25 },
    ccusage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 },
  },
  'agents/pi/rpc-branch-compact-abort-fork/sessions/--tmp-compactor-agents-project--/2026-11-25T03-33-43-536Z_01a210c4-33ef-70f5-adea-b3383b91144f.jsonl': {
    ours: { input: 400, cacheRead: 1_000, cacheWrite: 0, output: 14 },
    ccusage: { input: 7_900, cacheRead: 21_200, cacheWrite: 0, output: 115 },
  },
  'real/pi/pi-mono_before-compaction_v1.jsonl': {
    ours: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 },
    ccusage: { input: 3_689, cacheRead: 54_693_675, cacheWrite: 1_685_320, output: 187_895 },
  },
  'real/gemini-cli/codemie-ai_codemie-code_gemini-session-37b7abef.json': {
    ours: { input: 25_301, cacheRead: 62_117, cacheWrite: 0, output: 4_355 },
    ccusage: { input: 25_301, cacheRead: 62_117, cacheWrite: 0, output: 1_441 },
  },
  'real/gemini-cli/jnarowski_agentcmd_gemini-session-981c87cb.json': {
    ours: { input: 57_420, cacheRead: 45_385, cacheWrite: 0, output: 6_456 },
    ccusage: { input: 57_420, cacheRead: 45_385, cacheWrite: 0, output: 1_551 },
  },
};

/**
 * Sessions whose costs are not compared, and why: ccusage's pi cost is the one pi wrote in each
 * reply (`usage.cost`), which the test provider's models.json leaves at 0; a model one side has
 * no price for, or the two catalogs price differently; tokens that differ (pinned above); opencode
 * 1.1's reasoning, which ccusage adds to an output that holds it already.
 */
const COST_NOT_COMPARED: Record<string, string> = {
  'real/gemini-cli/codemie-ai_codemie-code_gemini-session-37b7abef.json':
    'prices differ: ccusage has gemini-3-pro at $1.60 in, $9.60 out, $0.16 cached per million; our catalog lists it as gemini-3-pro-preview, $2, $12, $0.20',
  'agents/codex/exec-fork/sessions/2026/12/07/rollout-2026-12-07T21-17-25-01a2525e-5a6e-72c1-992d-2418e58e745d.jsonl': "tokens differ (ccusage drops the fork's own calls)",
  // 28 reasoning tokens at gpt-4.1's $8/M output: ccusage's cost is ours + $0.000224.
  'agents/opencode-json/tools-compact/storage#ses_dad8eed67ffeg8A4qw3lf5HA6L': 'opencode 1.1 keeps reasoning inside output and reports it again as reasoning; ccusage bills it twice',
  'agents/pi/print-continue/sessions/--tmp-compactor-agents-project--/2026-11-25T03-33-23-095Z_01a210c3-e416-7120-8e1f-efdc4edf5740.jsonl': 'pi wrote cost 0',
  'agents/pi/rpc-branch-compact-abort-fork/sessions/--tmp-compactor-agents-project--/2026-11-25T03-33-41-486Z_01a210c4-2bed-718e-9916-662ff877e86f.jsonl': 'pi wrote cost 0',
  'agents/pi/rpc-branch-compact-abort-fork/sessions/--tmp-compactor-agents-project--/2026-11-25T03-33-43-536Z_01a210c4-33ef-70f5-adea-b3383b91144f.jsonl': 'pi wrote cost 0',
  'real/pi/agent-sessions_pi_small_v3.jsonl': 'a test model neither prices (pi wrote cost 0)',
  'real/pi/pi-mono_before-compaction_v1.jsonl': 'tokens differ (a fork of copies)',
};

const NONE: Counted = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, cost: 0 };
const tokensOf = ({ input, cacheRead, cacheWrite, output }: Tokens): Tokens => ({ input, cacheRead, cacheWrite, output });

let tools: AgentTools;
let root: string;
const layouts: Layout[] = [];

/** Copies a fixture file or folder into a layout, recording where every session file came from. */
function place(layout: Layout, fixture: string, to: string): void {
  cpSync(join(FIXTURES, fixture), to, { recursive: true });
  const walk = (from: string, at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(from, entry.name), join(at, entry.name));
      else layout.fixtureOf.set(join(at, entry.name), join(from, entry.name));
    }
  };
  if (fixture.endsWith('.jsonl') || fixture.endsWith('.json')) layout.fixtureOf.set(to, fixture);
  else walk(fixture, to);
}

function newLayout(agent: Layout['agent'], name: string): Layout {
  const layout = { agent, dir: join(root, name), fixtureOf: new Map<string, string>() };
  mkdirSync(layout.dir, { recursive: true });
  layouts.push(layout);
  return layout;
}

const filesIn = (dir: string, suffix: RegExp) => readdirSync(join(FIXTURES, dir)).filter((name) => suffix.test(name)).sort();
const scenarios = (agent: string) => readdirSync(join(AGENT_FIXTURES, agent)).sort();

/**
 * Every fixture laid out as its agent keeps it: Claude Code `projects/<project>/<id>.jsonl`
 * (subagent transcripts in `<id>/subagents/`), Codex `sessions/YYYY/MM/DD/`, pi
 * `sessions/<folder>/`, Gemini CLI `tmp/<project>/chats/session-*.json`. The real files of one
 * agent share a folder; each agent-written scenario has its own, as the agent wrote it (the
 * scripted provider numbers its responses the same way in every scenario, so their ids repeat
 * across scenarios, which never happens with a real provider and which ccusage would
 * deduplicate).
 */
function layOut(): void {
  const claude = newLayout('claude-code', 'claude-real');
  for (const name of filesIn('real/claude-code', /\.jsonl$/)) {
    const project = join(claude.dir, 'projects', name.replace(/\.jsonl$/, ''));
    mkdirSync(project, { recursive: true });
    place(claude, `real/claude-code/${name}`, join(project, name));
  }
  place(claude, 'real/claude-code/marot_spotter', join(claude.dir, 'projects', 'marot_spotter'));
  for (const scenario of scenarios('claude-code')) place(newLayout('claude-code', `claude-${scenario}`), `agents/claude-code/${scenario}/projects`, join(root, `claude-${scenario}`, 'projects'));

  const codex = newLayout('codex', 'codex-real');
  mkdirSync(join(codex.dir, 'sessions', '2026', '01', '01'), { recursive: true });
  for (const name of filesIn('real/codex', /\.jsonl$/)) place(codex, `real/codex/${name}`, join(codex.dir, 'sessions', '2026', '01', '01', name));
  for (const scenario of scenarios('codex')) place(newLayout('codex', `codex-${scenario}`), `agents/codex/${scenario}/sessions`, join(root, `codex-${scenario}`, 'sessions'));

  const pi = newLayout('pi', 'pi-real');
  mkdirSync(join(pi.dir, 'sessions', 'real'), { recursive: true });
  for (const name of filesIn('real/pi', /\.jsonl$/)) place(pi, `real/pi/${name}`, join(pi.dir, 'sessions', 'real', name));
  for (const scenario of scenarios('pi')) place(newLayout('pi', `pi-${scenario}`), `agents/pi/${scenario}/sessions`, join(root, `pi-${scenario}`, 'sessions'));

  // opencode's data folder as it left it: the database and its WAL (1.18), or the JSON storage (1.1).
  for (const agent of ['opencode', 'opencode-json']) {
    for (const scenario of scenarios(agent)) {
      const layout = newLayout('opencode', `${agent}-${scenario}`);
      const from = join(AGENT_FIXTURES, agent, scenario);
      for (const name of readdirSync(from).filter((entry) => entry !== 'manifest.json')) cpSync(join(from, name), join(layout.dir, name), { recursive: true });
      const { sessions } = JSON.parse(readFileSync(join(from, 'manifest.json'), 'utf8')) as { sessions: { address: string }[] };
      for (const { address } of sessions) layout.fixtureOf.set(join(layout.dir, address), `agents/${agent}/${scenario}/${address}`);
    }
  }

  const gemini = newLayout('gemini-cli', 'gemini-real');
  for (const name of filesIn('real/gemini-cli', /\.json$/)) {
    const chats = join(gemini.dir, 'tmp', name.split('_')[0]!, 'chats');
    mkdirSync(chats, { recursive: true });
    place(gemini, `real/gemini-cli/${name}`, join(chats, `session-${name}`));
  }
}

/** One ccusage run over a layout: its sessions by ccusage's id, tokens and cost. */
async function ccusage(layout: Layout): Promise<Map<string, Counted>> {
  const home = mkdtempSync(join(root, 'home-'));
  const [args, env] =
    layout.agent === 'claude-code'
      ? [['claude', 'session'], { CLAUDE_CONFIG_DIR: layout.dir }]
      : layout.agent === 'codex'
        ? [['codex', 'session'], { CODEX_HOME: layout.dir }]
        : layout.agent === 'pi'
          ? [['pi', 'session', '--pi-path', join(layout.dir, 'sessions')], {}]
          : layout.agent === 'opencode'
            ? [['opencode', 'session'], { OPENCODE_DATA_DIR: layout.dir }]
            : [['gemini', 'session'], { GEMINI_DATA_DIR: layout.dir }];
  const result = await execa(tools.ccusage, [...args, '--json', '--offline'], { cwd: home, env: { HOME: home, NO_COLOR: '1', ...env }, extendEnv: false, reject: false });
  expect(result.exitCode, `${basename(layout.dir)}: ${String(result.stderr)}`).toBe(0);
  const rows = new Map<string, Counted>();
  for (const row of JSON.parse(String(result.stdout)).sessions as Record<string, any>[]) {
    rows.set(row['sessionId'], {
      input: row['inputTokens'],
      cacheRead: row['cacheReadTokens'],
      cacheWrite: row['cacheCreationTokens'],
      output: row['outputTokens'],
      cost: row['costUSD'] ?? row['totalCost'],
    });
  }
  return rows;
}

/**
 * ccusage's id for a session file: Claude Code the file's name (subagent transcripts it adds to
 * their session itself), Codex its path under `sessions/`, pi the name after its first `_`,
 * Gemini CLI the document's `sessionId`, opencode the session's id (after the `#` of its address).
 */
function ccusageIds(layout: Layout, session: string): string[] {
  if (layout.agent === 'claude-code') return [basename(session, '.jsonl')];
  if (layout.agent === 'codex') return sessionFiles('codex', session).map((file) => relative(join(layout.dir, 'sessions'), file).replace(/\.jsonl$/, ''));
  if (layout.agent === 'pi') return [basename(session, '.jsonl').replace(/^[^_]*_/, '')];
  if (layout.agent === 'opencode') return [session.split('#').pop()!];
  return [JSON.parse(readFileSync(session, 'utf8')).sessionId];
}

function sum(rows: readonly Counted[]): Counted {
  return rows.reduce(
    (total, row) => ({
      input: total.input + row.input,
      cacheRead: total.cacheRead + row.cacheRead,
      cacheWrite: total.cacheWrite + row.cacheWrite,
      output: total.output + row.output,
      cost: total.cost === null || row.cost === null ? null : total.cost + row.cost,
    }),
    NONE,
  );
}

/** An `inspect --json` spend in these terms: `input` without the cached parts. */
function oursOf(spend: Record<string, any>): Counted {
  const cacheRead = spend['cache_read_input_tokens'];
  const cacheWrite = spend['cache_creation_input_tokens'];
  return { input: spend['input_tokens'] - cacheRead - cacheWrite, cacheRead, cacheWrite, output: spend['output_tokens'], cost: spend['cost']?.['total_usd'] ?? null };
}

interface Compared {
  readonly fixture: string;
  readonly ours: Counted;
  readonly ccusage: Counted;
}

const compared: Compared[] = [];
let unclaimed: string[] = [];
/** The archive view's session rows of the one inspect run over every layout, by session. */
let sessionRows = new Map<string, Record<string, any>>();
/** Each compared session's row (ours) beside ccusage's session, with its fixture. */
const rowsCompared: { readonly fixture: string; readonly row: Record<string, any>; readonly ccusage: Counted }[] = [];

beforeAll(async () => {
  tools = await agentTools(); // about a minute and a half the first time (npm install)
  root = mkdtempSync(join(tmpdir(), 'compactor-ccusage-'));
  layOut();
  // --top past the sessions' number: every session's row of the archive view is compared too.
  const [inspected, ...reports] = await Promise.all([runCli(['inspect', '--json', '--top', '1000', root]), ...layouts.map(ccusage)]);
  expect(inspected.exitCode, inspected.stderr).toBe(0);
  const records = new Map(sessionRecords(inspected.stdout).map((record) => [record['session'] as string, record]));
  sessionRows = new Map((jsonLines(inspected.stdout).at(-1)!['rollup']['session_rows'] as Record<string, any>[]).map((row) => [row['session'] as string, row]));
  layouts.forEach((layout, index) => {
    const rows = new Map(reports[index]!);
    for (const [path, fixture] of layout.fixtureOf) {
      const record = records.get(path);
      if (!record) continue; // a file counted in another session's spend (a subagent transcript, a review rollout)
      const ids = ccusageIds(layout, path);
      const theirs = sum(ids.flatMap((id) => rows.get(id) ?? []));
      compared.push({ fixture, ours: oursOf(record['spend']), ccusage: theirs });
      rowsCompared.push({ fixture, row: sessionRows.get(path)!, ccusage: theirs });
      for (const id of ids) rows.delete(id);
    }
    unclaimed = [...unclaimed, ...[...rows.keys()].map((id) => `${basename(layout.dir)}: ${id}`)];
  });
}, 15 * 60_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('ccusage (native 20.x) counts what we count', () => {
  it('is the pinned release', () => {
    expect(tools.versions.ccusage).toMatch(/^ccusage 20\./);
  });

  it('compares every real and agent-written session of the four agents, and ccusage finds no session we do not', () => {
    const fixtures = new Set(compared.map(({ fixture }) => fixture));
    for (const agent of ['claude-code', 'codex', 'pi', 'gemini-cli']) {
      expect([...fixtures].filter((fixture) => fixture.startsWith(`real/${agent}/`)).length, agent).toBeGreaterThan(0);
    }
    for (const agent of ['claude-code', 'codex', 'pi', 'opencode', 'opencode-json']) expect([...fixtures].filter((fixture) => fixture.startsWith(`agents/${agent}/`)).length, agent).toBeGreaterThan(0);
    expect(compared.length).toBeGreaterThanOrEqual(24);
    expect(unclaimed).toEqual([]);
  });

  it('tokens: equal, except where pinned', () => {
    for (const { fixture, ours, ccusage } of compared) {
      const pinned = DIFFERS[fixture];
      if (pinned) expect({ ours: tokensOf(ours), ccusage: tokensOf(ccusage) }, fixture).toEqual(pinned);
      else expect(tokensOf(ours), fixture).toEqual(tokensOf(ccusage));
    }
    // every pin is a session compared
    expect(Object.keys(DIFFERS).filter((fixture) => !compared.some((entry) => entry.fixture === fixture))).toEqual([]);
  });

  it('cost: within 0.5% where both price the session', () => {
    for (const { fixture, ours, ccusage } of compared) {
      if (COST_NOT_COMPARED[fixture]) continue;
      expect(ours.cost, fixture).not.toBeNull();
      expect(Math.abs(ours.cost! - ccusage.cost!), fixture).toBeLessThanOrEqual(0.005 * Math.max(ccusage.cost!, ours.cost!));
    }
    expect(Object.keys(COST_NOT_COMPARED).filter((fixture) => !compared.some((entry) => entry.fixture === fixture))).toEqual([]);
  });
});

describe("ccusage's sessions equal the archive view's session rows", () => {
  it('has a row for every session compared', () => {
    expect(rowsCompared.length).toBe(compared.length);
    expect(rowsCompared.filter(({ row }) => row === undefined).map(({ fixture }) => fixture)).toEqual([]);
  });

  it('tokens re-sent (every input token, cached parts included): equal, except where pinned', () => {
    const inputOf = (tokens: Tokens) => tokens.input + tokens.cacheRead + tokens.cacheWrite;
    for (const { fixture, row, ccusage } of rowsCompared) {
      const pinned = DIFFERS[fixture];
      expect(row['input_tokens'], fixture).toBe(pinned ? inputOf(pinned.ours) : inputOf(ccusage));
      if (pinned) expect(inputOf(ccusage), fixture).toBe(inputOf(pinned.ccusage));
    }
  });

  it('spend: within 0.5% where both price the session', () => {
    for (const { fixture, row, ccusage } of rowsCompared) {
      if (COST_NOT_COMPARED[fixture]) continue;
      expect(row['unpriced_calls'], fixture).toBe(0);
      expect(Math.abs(row['cost_usd'] - ccusage.cost!), fixture).toBeLessThanOrEqual(0.005 * Math.max(ccusage.cost!, row['cost_usd']));
    }
  });
});

/**
 * `ccusage claude daily` and `ccusage codex daily` (UTC days) against the roll-up's `by_day` of
 * `inspect --json` over the same folder. Where a session's tokens are pinned as differing
 * (DIFFERS), its folder's days are compared in sum: the difference must be the pinned one.
 */
describe('ccusage daily equals the roll-up by day', () => {
  async function ccusageDaily(layout: Layout): Promise<Map<string, Counted>> {
    const home = mkdtempSync(join(root, 'home-'));
    const [agent, env] = layout.agent === 'claude-code' ? ['claude', { CLAUDE_CONFIG_DIR: layout.dir }] : ['codex', { CODEX_HOME: layout.dir }];
    const result = await execa(tools.ccusage, [agent, 'daily', '--json', '--offline', '--timezone', 'UTC'], { cwd: home, env: { HOME: home, NO_COLOR: '1', ...env }, extendEnv: false, reject: false });
    expect(result.exitCode, `${basename(layout.dir)}: ${String(result.stderr)}`).toBe(0);
    const days = new Map<string, Counted>();
    for (const row of JSON.parse(String(result.stdout)).daily as Record<string, any>[]) {
      days.set(row['date'], { input: row['inputTokens'], cacheRead: row['cacheReadTokens'], cacheWrite: row['cacheCreationTokens'], output: row['outputTokens'], cost: row['costUSD'] ?? row['totalCost'] });
    }
    return days;
  }

  it('claude and codex, every folder: tokens per day equal, dollars within 0.5%', async () => {
    const folders = layouts.filter((layout) => layout.agent === 'claude-code' || layout.agent === 'codex');
    expect(folders.length).toBeGreaterThanOrEqual(6);
    let days = 0;
    for (const layout of folders) {
      const [theirs, inspected] = await Promise.all([ccusageDaily(layout), runCli(['inspect', '--json', '--top', '1', '--shard', '1/1', layout.dir])]);
      expect(inspected.exitCode, inspected.stderr).toBe(0);
      const ours = new Map((jsonLines(inspected.stdout).at(-1)!['rollup']['by_day'] as Record<string, any>[]).map((row) => [row['day'] as string, oursOf(row)]));
      const pins = [...layout.fixtureOf.values()].flatMap((fixture) => (DIFFERS[fixture] ? [DIFFERS[fixture]] : []));
      const where = basename(layout.dir);
      if (pins.length > 0) {
        const delta = (a: Tokens, b: Tokens) => ({ input: a.input - b.input, cacheRead: a.cacheRead - b.cacheRead, cacheWrite: a.cacheWrite - b.cacheWrite, output: a.output - b.output });
        const pinned = pins.map((pin) => delta(pin.ours, pin.ccusage)).reduce((total, one) => ({ ...tokensOf(sum([{ ...total, cost: 0 }, { ...one, cost: 0 }])) }));
        expect(delta(tokensOf(sum([...ours.values()])), tokensOf(sum([...theirs.values()]))), where).toEqual(pinned);
        continue;
      }
      expect([...ours.keys()].sort(), where).toEqual([...theirs.keys()].sort());
      for (const [day, counted] of ours) {
        const other = theirs.get(day)!;
        expect(tokensOf(counted), `${where} ${day}`).toEqual(tokensOf(other));
        expect(Math.abs(counted.cost! - other.cost!), `${where} ${day}`).toBeLessThanOrEqual(0.005 * Math.max(counted.cost!, other.cost!));
        days++;
      }
    }
    expect(days).toBeGreaterThanOrEqual(5);
  }, 10 * 60_000);
});

describe('inspect on a Claude Code project folder with subagent transcripts', () => {
  it.each([
    ['real/claude-code/marot_spotter', 'claude-real', 'marot_spotter'],
    ['agents/claude-code/tools-subagent/projects/-tmp-compactor-agents-project', 'claude-tools-subagent', '-tmp-compactor-agents-project'],
  ])('%s: the sessions it prints, and their roll-up, add up to ccusage for the project', async (folder, layoutName, project) => {
    const result = await runCli(['inspect', '--json', join(FIXTURES, folder)]);
    expect(result.exitCode).toBe(0);
    const records = jsonLines(result.stdout);
    const sessions = sessionRecords(result.stdout).map((record) => oursOf(record['spend']));
    // several sessions end with their roll-up: per project, what they spent together
    const rollup = records.find((record) => record['rollup'] !== undefined)?.['rollup'];
    expect(rollup === undefined, 'a roll-up exactly when there are several sessions').toBe(sessions.length < 2);
    const layout = layouts.find((entry) => basename(entry.dir) === layoutName)!;
    const inProject = [...layout.fixtureOf.keys()].filter((path) => relative(join(layout.dir, 'projects', project), path).split('/').length === 1);
    const rows = await ccusage(layout);
    const theirs = sum(inProject.map((path) => rows.get(basename(path, '.jsonl')) ?? NONE));
    const ours = sum(sessions);
    expect(tokensOf(ours)).toEqual(tokensOf(theirs));
    expect(ours.cost!).toBeCloseTo(theirs.cost!, 6);
    for (const project of rollup ? rollup['by_project'] : []) {
      expect(rollup['by_project']).toHaveLength(1);
      expect(tokensOf(oursOf(project))).toEqual(tokensOf(theirs));
      expect(project['cost']['total_usd']).toBeCloseTo(theirs.cost!, 6);
    }
    // the transcripts beside the sessions are in them, not sessions of their own
    expect(sessions.length).toBe(inProject.length);
  });
});
