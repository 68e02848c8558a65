#!/usr/bin/env node
/**
 * Writes fixtures/agents/: lets each real agent (installed by install.js) play the scenarios
 * in scenarios.js against the scripted provider, and copies the session files it wrote, in
 * the agent's own layout, to fixtures/agents/<agent>/<scenario>/ beside a manifest.json that
 * says how they were made and what each billed call reported. Run on demand, not in CI:
 *
 *   node tools/agents/make-fixtures.js [--only <agent>[/<scenario>]] [--out <dir>]
 *
 * Each scenario runs in /tmp/compactor-agents/project with HOME /tmp/compactor-agents/home,
 * both recreated, so the files name the same folders every time. A scenario whose files lack a structure it promises,
 * or that leaves script steps unanswered, fails the run and writes nothing.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY } from './agents.js';
import { agentTools, packageOf } from './install.js';
import { playScenario } from './play.js';
import { SCENARIOS } from './scenarios.js';
import { structuresOf } from './structures.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const PROJECT = '/tmp/compactor-agents/project';
/** A fixed HOME (recreated per scenario), so paths an agent records (pi's parentSession) repeat too. */
const HOME = '/tmp/compactor-agents/home';

function parseFlags(argv) {
  const flags = { only: null, out: join(ROOT, 'fixtures', 'agents') };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only' && argv[i + 1]) flags.only = argv[++i];
    else if (argv[i] === '--out' && argv[i + 1]) flags.out = resolve(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]} (see the header of tools/agents/make-fixtures.js)`);
  }
  return flags;
}

/** Sums the usage of calls: what a spend ledger over these calls must report. */
export function spendOf(calls) {
  const total = { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0 };
  for (const call of calls) {
    if (!call.usage) continue;
    total.requests++;
    total.input += call.usage.input;
    total.cacheRead += call.usage.cacheRead;
    total.cacheWrite += call.usage.cacheWrite5m + call.usage.cacheWrite1h;
    total.cacheWrite1h += call.usage.cacheWrite1h;
    total.output += call.usage.output;
  }
  return total;
}

/** Fails when a session file carries the API key anywhere (as a value, a header, an env line). */
function assertNoKey(path, text) {
  const leaks = [`"${API_KEY}"`, `Bearer ${API_KEY}`, `API_KEY=${API_KEY}`, `"x-api-key"`, `"authorization"`];
  const leak = leaks.find((needle) => text.includes(needle));
  if (leak) throw new Error(`${path} holds ${leak}: the API key must never reach a fixture`);
}

const portless = (text, port) => text.replaceAll(`127.0.0.1:${port}`, '127.0.0.1:<port>');

function manifestOf(scenario, played, tools, files) {
  const { agent, provider, commands, calls } = played;
  const port = provider.port;
  const spend = {};
  for (const file of files.filter((f) => f.path.endsWith('.jsonl'))) spend[file.path] = spendOf(calls.filter((call) => call.billedIn === file.path));
  spend['(not recorded in any file)'] = spendOf(calls.filter((call) => call.billedIn === null));
  return {
    agent: agent.name,
    package: packageOf(tools.packages, played.bin),
    version: tools.versions[played.bin],
    scenario: scenario.name,
    summary: scenario.summary,
    generatedBy: `node tools/agents/make-fixtures.js --only ${agent.name}/${scenario.name}`,
    cwd: PROJECT,
    home: HOME,
    env: Object.fromEntries(Object.entries(played.env).map(([name, value]) => [name, portless(String(value), port)])),
    commands: commands.map((command) => JSON.parse(portless(JSON.stringify(command), port))),
    script: scenario.script.map(({ label, kind = 'turn', text, thinking, toolCalls, usage, hang }) => ({ label, kind, text, thinking, toolCalls, usage, hang })),
    requests: provider.requests.map(({ n, method, path, kind, role, step, answered, body }) => ({ n, method, path, kind, role, step, answered, model: body?.model ?? null })),
    calls: calls.map(({ n, step, label, kind, api, model, responseId, usage, hung, billedIn, copiedTo }) => ({ n, step, label, kind: kind ?? null, api, model, responseId, usage, hung, billedIn, copiedTo })),
    files: files.map((file) => ({ path: file.path, structures: file.structures })),
    expectedSpend: spend,
  };
}

async function makeFixture(scenario, tools, out) {
  process.stderr.write(`fixtures: ${scenario.agent}/${scenario.name} …\n`);
  rmSync(HOME, { recursive: true, force: true });
  mkdirSync(HOME, { recursive: true });
  const played = await playScenario(scenario, { tools, cwd: PROJECT, home: HOME });
  const problems = [];
  if (played.provider.pending() > 0) problems.push(`${played.provider.pending()} script step(s) never requested`);
  const odd = played.provider.requests.filter((request) => request.role === 'unexpected');
  if (odd.length) problems.push(`unexpected requests: ${odd.map((request) => `#${request.n} ${request.kind}`).join(', ')}`);
  const files = played.files.map((file) => {
    const text = readFileSync(file.absolute, 'utf8');
    assertNoKey(file.path, text);
    const structures = file.path.endsWith('.jsonl') ? structuresOf(scenario.agent, file.path, text) : [];
    if (played.calls.some((call) => call.copiedTo.includes(file.path))) structures.push('fork');
    return { ...file, structures: [...new Set(structures)].sort() };
  });
  const found = new Set(files.flatMap((file) => file.structures));
  const missing = scenario.expects.filter((name) => !found.has(name));
  if (missing.length) problems.push(`no file holds ${missing.join(', ')} (found: ${[...found].join(', ')})`);
  if (problems.length) throw new Error(`${scenario.agent}/${scenario.name}: ${problems.join('; ')} (agent home kept in ${played.home})`);

  const target = join(out, scenario.agent, scenario.name);
  mkdirSync(dirname(target), { recursive: true });
  const staging = mkdtempSync(`${target}.partial-`);
  for (const file of files) {
    mkdirSync(dirname(join(staging, file.path)), { recursive: true });
    copyFileSync(file.absolute, join(staging, file.path));
  }
  writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifestOf(scenario, played, tools, files), null, 2)}\n`);
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  rmSync(played.home, { recursive: true, force: true });
  process.stderr.write(`fixtures: wrote ${relative(ROOT, target)} (${files.length} files: ${[...found].sort().join(', ')})\n`);
}

/** Drops fixture folders of scenarios that no longer exist (after a full run only). */
function removeRetired(out) {
  const current = new Set(SCENARIOS.map((scenario) => join(scenario.agent, scenario.name)));
  for (const agent of readdirSync(out, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const scenario of readdirSync(join(out, agent.name), { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      if (current.has(join(agent.name, scenario.name))) continue;
      rmSync(join(out, agent.name, scenario.name), { recursive: true, force: true });
      process.stderr.write(`fixtures: removed ${join(agent.name, scenario.name)} (no such scenario any more)\n`);
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flags = parseFlags(process.argv.slice(2));
  const chosen = SCENARIOS.filter((scenario) => scenario.name !== 'smoke' && (!flags.only || flags.only === scenario.agent || flags.only === `${scenario.agent}/${scenario.name}`));
  if (chosen.length === 0) throw new Error(`no scenario matches --only ${flags.only}`);
  const tools = await agentTools();
  for (const scenario of chosen) await makeFixture(scenario, tools, flags.out);
  if (!flags.only) removeRetired(flags.out);
}
