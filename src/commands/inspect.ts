/**
 * `compactor inspect`: the token-growth audit, turn by turn (as the bug report's trace did), with what each
 * turn added, the heaviest tool outputs, files read again and again, the spend and context
 * ledgers with their cost (ledgers/ledgers.ts), an optional chart, and CI gates. Over several
 * sessions it opens with the archive view: the sessions ranked (ledgers/archive.ts), then the
 * roll-up (ledgers/rollup.ts); each session's report follows only with --detail.
 */
import type { CommandModule } from 'yargs';
import { stablePrefixTokens } from '../replay/cache.js';
import type { Ledger, Ledgers } from '../ledgers/ledgers.js';
import { spendCallKeys, withCallsBilledElsewhere } from '../ledgers/ledgers.js';
import type { Breach } from '../gates/check.js';
import { checkGates, breachJson } from '../gates/check.js';
import type { GrowthReport } from '../growth/attribution.js';
import { GrowthFacts, growthFromFacts } from '../growth/attribution.js';
import type { Turn, TurnUsage } from '../growth/turns.js';
import { groupTurns, totalUsage, turnUsage } from '../growth/turns.js';
import { InputError, UsageError } from '../errors.js';
import { renderBarChart } from '../report/chart.js';
import { firstTier, formatRates } from '../cost/text.js';
import { formatTokens, titleLine } from '../report/format.js';
import { ledgersJson, renderLedgers } from '../ledgers/report.js';
import { moreTurnsLine, renderGrowth, TURN_ROWS } from '../growth/text.js';
import type { RecordedCompactionEffect } from '../growth/recorded.js';
import { recordedCompactionEffects } from '../growth/recorded.js';
import { describeRecordedCompaction, recordedCompactionJson } from '../growth/recorded-report.js';
import { renderTable } from '../report/table.js';
import { ROLLUP_ROWS } from '../ledgers/rollup-report.js';
import type { SessionSpend } from '../ledgers/rollup.js';
import type { DayRule } from '../ledgers/rollup.js';
import { DayReader, sessionProject, sessionTotal, SpendByDay, startDay } from '../ledgers/rollup.js';
import { dayRule, parseFilter } from '../pipeline/filters.js';
import type { AnyMessage, Diagnostic, Session } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import { providerCalls } from '../tokens/provider-calls.js';
import type { GateLimits } from '../gates/check.js';
import { heuristicCounter } from '../tokens/estimate.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import { sessionTask } from '../workers/task.js';
import type { GateArgs } from './gates.js';
import type { TotalGateArgs } from './gates.js';
import { breachLine, gateLimits, hasCostGate, totalGateLimits, unpricedGateWarning, withGates, withTotalGates } from './gates.js';
import type { SessionRow, SortKey } from '../ledgers/archive.js';
import { DEFAULT_TOP, SORT_KEYS } from '../ledgers/archive.js';
import type { RollupPeriod } from '../ledgers/rollup-report.js';
import { ROLLUP_PERIODS } from '../ledgers/rollup-report.js';
import { ArchiveView } from './archive-view.js';
import { billedOnce } from '../pipeline/billed-once.js';
import type { Printed } from '../pipeline/output.js';
import { printedJson, printedText } from '../pipeline/output.js';
import { JsonList } from '../report/json-pieces.js';
import type { SessionInput } from '../read/index.js';
import { loadSession } from '../read/index.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { jobsFromArgs, runSettings, withInputs, withPolicy } from './options.js';
import type { CompactionPolicy } from '../compaction/policy.js';
import { shouldCompact, triggerThreshold } from '../compaction/policy.js';
import type { PolicyValues } from '../config/policy.js';
import { policyFor, policyJson } from '../config/policy.js';
import type { PriceOverrides, Pricing, PricingArgs } from './pricing.js';
import { priceOverrides, priceSession, pricingJson, pricingWarnings, withPricing } from './pricing.js';
import type { ReadTaskOptions } from '../pipeline/sessions.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { earlyStart, streamSessions } from '../pipeline/sessions.js';
import { turnGrowthJson, growthJson } from '../growth/json.js';
import { costJson } from '../cost/json.js';

/** Rows of a session report's largest-output and repeated-read tables unless --top says. */
const GROWTH_TOP = 5;

/** Which ledger `--max-input-tokens` and `--max-cost` read (README "CI gates"). */
type GateLedger = 'spend' | 'context';
const GATE_LEDGERS: readonly GateLedger[] = ['spend', 'context'];

interface InspectArgs extends CommonArgs, PolicyArgs, PricingArgs, GateArgs, TotalGateArgs {
  chart: boolean;
  top?: number;
  all: boolean;
  detail: boolean;
  sort: SortKey;
  by: RollupPeriod;
  'gate-ledger': GateLedger;
}

/**
 * What the report says of one session: no message is kept (a long session's slim messages are
 * garbage before the record is built).
 */
export interface Inspection {
  readonly format: string;
  readonly model: string | null;
  /** How many messages the session has. */
  readonly messages: number;
  readonly turns: readonly TurnUsage[];
  readonly growth: GrowthReport;
  readonly pricing: Pricing;
  /** Per turn (the context's calls), its cost in dollars; null when a call of it has no price. */
  readonly turnCosts: readonly (number | null)[];
  readonly ledgers: Ledgers;
  readonly overhead: number;
  readonly breaches: readonly Breach[];
  /** Compactions the agent recorded in the file, with their real effect. */
  readonly recorded: readonly RecordedCompactionEffect[];
  /** The policy flags, with the model's window when --context-limit is not given. */
  readonly policy: CompactionPolicy;
  readonly warnings: readonly (Diagnostic | string)[];
}

/** Would a turn that starts at this baseline be compacted under the policy (ignoring --force)? */
function overTrigger(baseline: number, policy: CompactionPolicy): boolean {
  return shouldCompact(baseline, { ...policy, force: false });
}

/** The prices the ledgers were billed at: the session's model, then any other a call named. */
function priceLines(pricing: Pricing, ledgers: Ledgers): string[] {
  const lines: string[] = [];
  const oneHour = ledgers.spend.cacheWrite1hTokens + ledgers.context.cacheWrite1hTokens > 0;
  pricing.models.forEach((entry, position) => {
    if (!entry.rates) return;
    const at = entry.catalog ? `${entry.catalog.id} prices` : 'the given prices';
    lines.push(position === 0 ? `cost at ${at}:` : `  ${entry.model ?? 'calls naming no model'}, at ${at}:`, `  $ per million: ${formatRates(entry.rates)}`);
    if (oneHour) lines.push(`  (one-hour cache writes at ${entry.rates.cacheWrite1h.base.toFixed(2)})`);
    const tier = firstTier(entry.rates);
    if (tier !== null) lines.push(`  (higher rates for prompts above ${formatTokens(tier)} tokens)`);
  });
  return lines;
}

/** The largest baseline, without spreading every turn into one call's arguments. */
function maxBaseline(turns: readonly TurnUsage[]): number {
  let most = 0;
  for (const turn of turns) if (turn.baselineInputTokens > most) most = turn.baselineInputTokens;
  return most;
}

function humanReport(path: string, inspection: Inspection, args: Pick<InspectOptions, 'top' | 'chart' | 'all'>): string {
  const { turns, pricing, ledgers } = inspection;
  const totals = totalUsage(turns);
  const shown = args.all ? turns : turns.slice(0, TURN_ROWS);
  const rows = shown.map((turn) => [
    String(turn.turn) + (turn.aborted ? ' (aborted)' : ''),
    formatTokens(turn.requests),
    formatTokens(turn.baselineInputTokens) + (turn.estimated ? '*' : ''),
    formatTokens(turn.inputTokens),
    formatTokens(turn.outputTokens),
  ]);
  rows.push(['total', formatTokens(totals.requests), '', formatTokens(totals.inputTokens), formatTokens(totals.outputTokens)]);
  const table = renderTable(
    [{ header: 'turn' }, { header: 'requests' }, { header: 'baseline' }, { header: 'input tokens' }, { header: 'output tokens' }],
    rows,
  );
  const model = pricing.model ? `, ${pricing.model}` : '';
  const lines = [titleLine(path, `${inspection.format}, ${formatTokens(inspection.messages)} messages, ${turns.length} turns${model}`), table];
  lines.push(...moreTurnsLine(turns.length - shown.length));
  if (turns.some((turn) => turn.estimated)) lines.push('* estimated (the file reports no usage for some calls)');
  const over = turns.filter((turn) => overTrigger(turn.baselineInputTokens, inspection.policy)).map((turn) => turn.turn);
  if (over.length > 0) {
    const listed = args.all ? over : over.slice(0, TURN_ROWS);
    const more = over.length > listed.length ? `, … ${formatTokens(over.length - listed.length)} more (--all lists every one)` : '';
    lines.push(`turns starting above the compaction trigger (${formatTokens(triggerThreshold(inspection.policy))} tokens): ${listed.join(', ')}${more}`);
  }
  for (const effect of inspection.recorded) lines.push(describeRecordedCompaction(effect));
  if (inspection.overhead > 0) lines.push(`every call also carried ${formatTokens(inspection.overhead)} tokens of system prompt and tool schemas`);
  if (pricing.rates) lines.push('', ...priceLines(pricing, ledgers));
  else lines.push('', 'cost: unknown model (pass --model or --price-input/--price-output)');
  lines.push(...renderLedgers(ledgers));
  lines.push('', renderGrowth(inspection.growth, args.top, args.all));
  if (args.chart) {
    const groups = turns.map((turn) => ({ label: String(turn.turn), bars: [{ series: '', value: turn.baselineInputTokens }] }));
    lines.push('', renderBarChart(groups, { title: 'baseline per turn', limit: { label: 'window', value: inspection.policy.contextLimit } }));
  }
  return `${lines.join('\n')}\n`;
}

/** The --json record of one session (exported for scripts/bench/inspect-parts.js, which times its making). */
export function inspectJson(path: string, inspection: Inspection, top: number) {
  const { turns, growth, turnCosts, ledgers } = inspection;
  const totals = totalUsage(turns);
  const cost = ledgers.context.cost;
  return {
    session: path,
    format: inspection.format,
    model: inspection.model,
    messages: inspection.messages,
    // Each turn becomes its JSON object only as it is written (a long session has tens of thousands).
    turns: new JsonList(turns, (turn, i) => {
      return {
        turn: turn.turn,
        baseline_input_tokens: turn.baselineInputTokens,
        requests: turn.requests,
        input_tokens: turn.inputTokens,
        output_tokens: turn.outputTokens,
        estimated: turn.estimated,
        aborted: turn.aborted,
        ...turnGrowthJson(growth.turns[i]),
        cost_usd: turnCosts[i] ?? null,
        over_trigger: overTrigger(turn.baselineInputTokens, inspection.policy),
      };
    }),
    totals: {
      requests: totals.requests,
      input_tokens: totals.inputTokens,
      output_tokens: totals.outputTokens,
      max_baseline_input_tokens: maxBaseline(turns),
    },
    prompt_overhead_tokens: inspection.overhead,
    policy: policyJson(inspection.policy),
    trigger_tokens: triggerThreshold(inspection.policy),
    recorded_compactions: inspection.recorded.map(recordedCompactionJson),
    pricing: pricingJson(inspection.pricing),
    // The context ledger, as `totals` is; `spend` is what the provider billed.
    cost: cost ? costJson(cost) : null,
    ...ledgersJson(ledgers),
    ...growthJson(growth, top),
    gates: inspection.breaches.map((breach) => breachJson(breach)),
  };
}

export interface InspectOptions extends ReadTaskOptions {
  readonly model: string | undefined;
  readonly overrides: PriceOverrides;
  readonly limits: GateLimits;
  readonly gateLedger: GateLedger;
  readonly top: number;
  readonly chart: boolean;
  /** --all: every turn in the text report. */
  readonly all: boolean;
  /** Render the text report (one session given, or --detail); with --json the record always is. */
  readonly detail: boolean;
  /** The policy settings (they cross to worker threads); the window is resolved per session. */
  readonly policy: PolicyValues;
  /** With --json the record is rendered (as JSON text), else the human report. */
  readonly json: boolean;
  /** Whether the run has other sessions, which may hold this one's calls (billed-once.ts). */
  readonly batch: boolean;
  /** Calls an earlier session of the batch was charged for (callKey → that session): copies here (billed-once.ts). */
  readonly billedIn?: Readonly<Record<string, string>>;
  /** The day of the roll-up's calls, and the days kept (`--timezone`, `--since`, `--until`); UTC days, all kept, when absent. */
  readonly days?: DayRule;
}

/** What crosses back from a worker: the rendered report, not the session. */
export interface InspectResult {
  /** The record's JSON text with --json, else the human report (CommandOutput.rendered). */
  readonly printed: Printed;
  readonly breaches: readonly Breach[];
  readonly warnings: readonly (Diagnostic | string)[];
  /**
   * The calls its spend counted, by the provider's name for them (billed-once.ts); none when the
   * run has one session, where no other session can have counted them.
   */
  readonly spendKeys: readonly string[];
  /** The session's spend by day and model, for the roll-up over several sessions. */
  readonly spend: SessionSpend;
  /** Its row of the archive view's session table. */
  readonly row: SessionRow;
}

/**
 * The session priced, and what the report reads of its calls' costs: each turn's, and the spend
 * by day and model, summed as each call is priced (priceSession's `visit`), so no call's cost or
 * billed form outlives its turn in the loop.
 */
async function pricedTurns(
  session: Session<AnyMessage>,
  calls: readonly ProviderCall[],
  groups: readonly Turn[],
  options: InspectOptions,
): Promise<{ pricing: Pricing; ledgers: Ledgers; turnCosts: (number | null)[]; spend: SessionSpend }> {
  // Each call's turn by its message's index. A turn's calls are in `calls` order, the order
  // priceSession hands them over, so each turn's sum adds its costs' totals as sumCosts would.
  const turnAt = new Int32Array(session.messages.length).fill(-1);
  groups.forEach((turn, position) => {
    for (const call of turn.calls) turnAt[call.index] = position;
  });
  const turnCosts: (number | null)[] = groups.map(() => 0);
  const spend = new SpendByDay(session, options.days);
  const { pricing, ledgers } = await priceSession(
    session,
    calls,
    { model: options.model, overrides: options.overrides, contextLimit: options.policy.context_limit ?? undefined },
    (call, cost) => {
      spend.add(call, cost);
      const position = call.index === null ? -1 : (turnAt[call.index] ?? -1);
      if (position < 0) return;
      const sum = turnCosts[position]!;
      turnCosts[position] = sum === null || cost === null ? null : sum + cost.total;
    },
  );
  return { pricing, ledgers, turnCosts, spend: spend.spend() };
}

/**
 * What the task sends back besides the printed report: the inspection when the session's own
 * report is made (--json, or its text report), else none (the archive view reads the row alone).
 */
export type Audited = Omit<InspectResult, 'printed'> & { readonly inspection: Inspection | null };

/**
 * Whether the session's own report is made: with --json its record, or the text report of one
 * session or --detail. Over several sessions without them the archive view shows the row and the
 * spend only, so the report's parts (growth attribution, largest outputs, repeated reads, the
 * recorded compactions' effects, the turns' costs) are not worked out at all.
 */
function reported(options: InspectOptions): boolean {
  return options.json || options.detail;
}

/**
 * One session read and audited. Its messages, calls and turns live in here only: the report is
 * built from what this returns, once they are garbage. Exported for scripts/bench/inspect-parts.js.
 */
export async function auditSession(input: SessionInput, options: InspectOptions): Promise<Audited> {
  const { path } = input;
  const report = reported(options);
  const count = await loadTextCounter(options.tokenizer);
  const readOptions = { format: options.format, count, strict: options.strict, messages: 'lean' } as const;
  // Growth attribution's facts are gathered as the messages are read, for a report only.
  const loaded = report ? await loadSession(input, readOptions, () => new GrowthFacts(heuristicCounter)) : { ...(await loadSession(input, readOptions)), observer: null };
  const session = withCallsBilledElsewhere(loaded.session, new Map(Object.entries(options.billedIn ?? {})));
  const { messages, recordedCompactions } = session;
  const calls = providerCalls(messages, loaded.tokens, recordedCompactions);
  const groups = groupTurns(messages, calls, session.abortedTurns);
  const turns = groups.map(turnUsage);
  const { pricing, ledgers, turnCosts, spend } = await pricedTurns(session, calls, groups, options);
  const gated: Ledger = ledgers[options.gateLedger];
  // A cost gate reads the priced calls and names the others: a warning, a failure under --strict
  // (exit 1), never a breach (exit 3 is a breach and nothing else).
  const gateWarnings: string[] = [];
  if (hasCostGate(options.limits) && gated.unpricedRequests > 0) {
    if (options.strict) throw new InputError(unpricedGateWarning(gated.unpricedRequests, gated.unpriced, true), path);
    gateWarnings.push(`${path}: ${unpricedGateWarning(gated.unpricedRequests, gated.unpriced)}`);
  }
  const breaches = checkGates(
    { baseline: maxBaseline(turns), inputTokens: gated.inputTokens, costUsd: options.limits.maxCostUsd === undefined ? null : gated.pricedCost.total },
    options.limits,
  );
  const warnings = [...loaded.warnings, ...pricingWarnings(pricing), ...gateWarnings];
  const inspection: Inspection | null = loaded.observer
    ? {
        format: session.format,
        model: session.model ?? null,
        messages: messages.length,
        turns,
        // The report shows the --top heaviest outputs.
        growth: growthFromFacts(messages, loaded.observer, groups, calls, options.top),
        pricing,
        turnCosts,
        ledgers,
        overhead: stablePrefixTokens(calls, loaded.tokens),
        breaches,
        recorded: recordedCompactionEffects(messages, loaded.tokens, recordedCompactions, calls),
        policy: policyFor(options.policy, pricing.window.tokens),
        warnings,
      }
    : null;
  const total = sessionTotal(spend);
  const row: SessionRow = {
    session: path,
    agent: session.format,
    project: sessionProject(session),
    startDay: startDay(session, new DayReader(options.days?.zone)),
    model: session.model ?? pricing.model ?? null,
    calls: total.requests,
    costUsd: total.pricedCost.total,
    unpricedCalls: total.unpricedRequests,
    peakTokens: maxBaseline(turns),
    windowTokens: pricing.window.tokens,
    inputTokens: total.inputTokens,
    recordedCompactions: recordedCompactions.length,
  };
  return { inspection, breaches, warnings, spendKeys: options.batch ? spendCallKeys(session) : [], spend, row };
}

/**
 * One session's audit (runs in a worker thread for big batches). A lean read: growth attribution
 * needs each block's size and each tool call's target, taken from the text as it is read (always
 * chars / 4, whatever --tokenizer says: README "inspect").
 */
export const inspectSessionTask = sessionTask('inspect', async (input: SessionInput, options: InspectOptions): Promise<InspectResult> => {
  const { inspection, ...rest } = await auditSession(input, options);
  // Over several sessions without --detail, the text report is not made at all: only the row and the spend are.
  const printed = inspection === null ? '' : options.json ? printedJson(inspectJson(input.path, inspection, options.top)) : humanReport(input.path, inspection, options);
  return { printed, ...rest };
});

export const inspectCommand: CommandModule<object, InspectArgs> = {
  command: 'inspect [inputs..]',
  describe: 'Audit token growth per turn: what each turn added, cost, CI gates',
  // `as never`: yargs types the flags as parsed, before normalizeArgs (options.ts) gives the handler
  // its args type (inputs from `--` and positionals, defaults filled in); the handler's type is the truth.
  builder: (yargs) =>
    withTotalGates(withGates(withPricing(withPolicy(withInputs(yargs, 'inspect')), 'inspect')))
      .option('chart', { describe: 'draw the baseline per turn as a text chart', type: 'boolean', default: false })
      .option('detail', { describe: "over several sessions, each session's report after the archive view", type: 'boolean', default: false })
      .option('sort', { describe: 'rank the sessions by spend, peak context, tokens re-sent, calls or start day', choices: SORT_KEYS, default: 'cost' as SortKey })
      .option('by', { describe: 'the roll-up by day, week (from Monday) or month (UTC days, or --timezone\'s)', choices: ROLLUP_PERIODS, default: 'day' as RollupPeriod })
      .option('top', {
        describe: `rows of the ranked tables: sessions in the archive view (default ${DEFAULT_TOP}); largest outputs and repeated reads in a session's report (default ${GROWTH_TOP})`,
        type: 'number',
      })
      .option('all', { describe: `every row of long tables: the turns (default: the first ${TURN_ROWS}) and the roll-up over several sessions (default: the first ${ROLLUP_ROWS} of each)`, type: 'boolean', default: false })
      .option('gate-ledger', {
        describe: 'the ledger --max-input-tokens and --max-cost read: spend (every billed call) or context (the live conversation)',
        choices: GATE_LEDGERS,
        default: 'spend' as GateLedger,
      }) as never,
  handler: async (args) => {
    // Every setting is read and checked up front, before any session is read.
    const settings = await runSettings(args, 'inspect');
    const overrides = priceOverrides(args);
    const limits = { ...gateLimits(args), ...totalGateLimits(args) };
    if (args.top !== undefined && !(Number.isInteger(args.top) && args.top >= 1)) throw new UsageError(`--top must be a whole number >= 1, got ${String(args.top)}`);
    // Workers start up, and import the task, while the walk's files are sniffed.
    const early = earlyStart(() => jobsFromArgs(args), inspectSessionTask.name);
    // Over several sessions nothing prints before the archive view (the reports wait for it): the
    // bar is drawn as for estimate. One session prints one report, with no bar (createProgress).
    await runSessionCommand<InspectResult>(args, { progress: true, walked: early.walked }, (output) => {
      const options: Omit<InspectOptions, 'batch' | 'detail'> = {
        format: args.format,
        tokenizer: settings.tokenizer,
        strict: args.strict,
        model: args['price-model'],
        overrides,
        limits,
        gateLedger: args['gate-ledger'],
        top: args.top ?? GROWTH_TOP,
        chart: args.chart,
        all: args.all,
        policy: settings.policy,
        json: output.json,
        days: dayRule(parseFilter(args), args),
      };
      // Over several sessions: the archive view folds each result as it is printed; the reports wait for it (--detail).
      let archive: ArchiveView | null = null;
      const held: string[] = [];
      // A session's own gate failed (its breaches are printed with it).
      let sessionBreached = false;
      return {
        run: async (paths, emit) => {
          // A shard's run is one part of an archive: its view is what `report` merges, whatever its size.
          const batch = paths.length > 1 || args.shard !== undefined;
          if (batch) archive = new ArchiveView({ sort: args.sort, top: args.top ?? DEFAULT_TOP, by: args.by, all: args.all, limits, zone: options.days?.zone ?? 'UTC' });
          const run = { ...options, batch, detail: !batch || args.detail };
          const once = billedOnce(emit, (path, billedIn) => inspectSessionTask.run({ path }, { ...run, billedIn }));
          // Each result is folded as it is printed (the roll-up and the gates read them as printed:
          // a call is billed once there too) and dropped: memory does not grow with the sessions.
          await streamSessions(paths, inspectSessionTask, run, once, jobsFromArgs(args), { early: early.pool() });
          return [];
        },
        print: (path, { printed, breaches, row, spend }) => {
          if (breaches.length > 0) sessionBreached = true;
          archive?.add(row, spend);
          if (output.json || !archive) output.rendered(printed);
          else if (args.detail) held.push(printedText(printed));
          for (const breach of breaches) process.stderr.write(`${breachLine(path, breach)}\n`);
        },
        // Over several sessions: the ranked sessions and what they spent together, then (--detail) each one's report.
        finish: () => {
          if (!archive) return;
          archive.finish(output);
          for (const report of held.splice(0)) output.rendered(report);
        },
        breached: () => sessionBreached || (archive?.breached ?? false),
      };
    });
  },
};
