#!/usr/bin/env node
/**
 * What each of `inspect`'s per-session parts costs, in one process on one core, against the
 * lean read of the same sessions (the read `estimate` makes: the yardstick, timed in the same
 * rounds). The parts are the built modules' own functions, run in the order the inspect task
 * runs them (src/commands/inspect.ts auditSession):
 * - growth facts gathered while reading (the observer's own time, as the read hands it each message);
 * - calls and turns; pricing and both ledgers;
 * - growth attribution, largest outputs and repeated reads (growthFromFacts);
 * - the recorded compactions' effects and the prompt overhead;
 * - the --json record made into its bytes (inspectJson and printedJson, from the task's audit);
 * - the session's report: the four above, summed (what `inspect` over several sessions without
 *   --json or --detail no longer pays).
 * Each round times every session once per part (the first round warms the code up and is not
 * counted); the figures are medians over the rounds, in seconds. Prints one JSON object.
 * Usage: node inspect-parts.js DIST_DIR CORPUS_DIR [ROUNDS]
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, corpus, roundsText = '5'] = process.argv.slice(2);
const rounds = Number(roundsText);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { expandInputFiles } = await load('pipeline/inputs.js');
const { loadSession } = await load('read/index.js');
const { GrowthFacts, growthFromFacts } = await load('growth/attribution.js');
const { heuristicCounter } = await load('tokens/estimate.js');
const { providerCalls } = await load('tokens/provider-calls.js');
const { groupTurns, turnUsage } = await load('growth/turns.js');
const { priceSession } = await load('commands/pricing.js');
const { recordedCompactionEffects } = await load('growth/recorded.js');
const { stablePrefixTokens } = await load('replay/cache.js');
const { auditSession, inspectJson } = await load('commands/inspect.js');
const { printedJson } = await load('pipeline/output.js');
const { DEFAULT_POLICY_VALUES } = await load('config/policy.js');

const inputs = await expandInputFiles([corpus]);
const read = { format: 'auto', withSidecar: false, messages: 'lean' };
const task = {
  format: 'auto',
  tokenizer: 'heuristic',
  strict: false,
  model: undefined,
  overrides: {},
  limits: {},
  gateLedger: 'spend',
  top: 5,
  chart: false,
  all: false,
  policy: DEFAULT_POLICY_VALUES,
  json: true,
  batch: true,
  detail: false,
};

/** GrowthFacts, with the time its `observe` takes while the read hands it each message. */
class TimedFacts extends GrowthFacts {
  static spent = 0;
  observe(message, lengths) {
    const start = process.hrtime.bigint();
    super.observe(message, lengths);
    TimedFacts.spent += Number(process.hrtime.bigint() - start) / 1e9;
  }
}

const PARTS = ['lean read', 'growth facts', 'calls and turns', 'pricing and ledgers', 'growth attribution', 'recorded compactions', 'json record'];
const samples = Object.fromEntries(PARTS.map((part) => [part, []]));
let sink = 0;
for (let round = 0; round <= rounds; round++) {
  const spent = Object.fromEntries(PARTS.map((part) => [part, 0]));
  const timed = async (part, work) => {
    const start = process.hrtime.bigint();
    const value = await work();
    spent[part] += Number(process.hrtime.bigint() - start) / 1e9;
    return value;
  };
  TimedFacts.spent = 0;
  for (const input of inputs) {
    const lean = await timed('lean read', () => loadSession(input, read));
    sink += lean.tokens.length;
    const loaded = await loadSession(input, read, () => new TimedFacts(heuristicCounter));
    const { session } = loaded;
    const { calls, groups } = await timed('calls and turns', () => {
      const calls = providerCalls(session.messages, loaded.tokens, session.recordedCompactions);
      const groups = groupTurns(session.messages, calls, session.abortedTurns);
      sink += groups.map(turnUsage).length;
      return { calls, groups };
    });
    await timed('pricing and ledgers', () => priceSession(session, calls, { model: undefined, overrides: {}, contextLimit: undefined }));
    await timed('growth attribution', () => growthFromFacts(session.messages, loaded.observer, groups, calls, task.top));
    await timed('recorded compactions', () => {
      sink += recordedCompactionEffects(session.messages, loaded.tokens, session.recordedCompactions, calls).length + stablePrefixTokens(calls, loaded.tokens);
    });
    const { inspection } = await auditSession(input, task);
    const printed = await timed('json record', () => printedJson(inspectJson(input.path, inspection, task.top)));
    sink += printed.length;
  }
  spent['growth facts'] = TimedFacts.spent;
  if (round === 0) continue;
  for (const part of PARTS) samples[part].push(spent[part]);
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const seconds = Object.fromEntries(PARTS.map((part) => [part, median(samples[part])]));
seconds['the report'] = seconds['growth facts'] + seconds['growth attribution'] + seconds['recorded compactions'] + seconds['json record'];
process.stdout.write(`${JSON.stringify({ sessions: inputs.length, rounds, seconds, sink })}\n`);
