/**
 * `compactor replay`: what-if. The same session under one or more compaction policies (the
 * flag-built `custom` one, or peer agents' presets), turn by turn, with tokens, naive and
 * cache-aware cost, break-even, thrash, an optional chart and HTML page, and CI gates. With the
 * truncate strategy big batches run in worker threads (sessions.ts); a summarizer (live or
 * simulated) runs in this thread.
 */
import { basename } from 'node:path';
import type { CommandModule } from 'yargs';
import type { CacheLifetime } from '../replay/cache.js';
import { checkGates } from '../gates/check.js';
import type { ReplayPolicy } from '../replay/presets.js';
import { CUSTOM_POLICY_NAME, customPolicy, isPresetName, presetPolicy, PRESET_NAMES } from '../replay/presets.js';
import type { FullReplayInput, LeanReplayInput, ReplayColumns, ReplayEvent } from '../replay/simulate.js';
import { replayColumns } from '../replay/simulate.js';
import type { PrunedSizes } from '../replay/pruned-sizes.js';
import { PrunedSizesObserver } from '../replay/pruned-sizes.js';
import { policyCosts, recordedCalls, recordedCost } from '../replay/savings.js';
import { detectThrash } from '../replay/thrash.js';
import { UsageError } from '../errors.js';
import type { HtmlSection } from '../replay/html.js';
import { renderHtmlReport, sessionSection } from '../replay/html.js';
import type { PolicyOutcome, RecordedSummary, ReplayView } from '../replay/text.js';
import { renderReplay } from '../replay/text.js';
import type { AnyMessage, Diagnostic } from '../session/model.js';
import type { StrategyName, StrategyOptions } from '../strategies/index.js';
import { createStrategy } from '../strategies/index.js';
import type { CompactionStrategy, MetadataStrategy } from '../compaction/strategy.js';
import { readsOnlyStructure } from '../compaction/strategy.js';
import type { Breach, GateLimits } from '../gates/check.js';
import type { TextCounter } from '../tokens/estimate.js';
import { providerCalls } from '../tokens/provider-calls.js';
import { loadTextCounter } from '../tokens/tokenizers.js';
import type { PartSink } from '../workers/task.js';
import { sessionTask } from '../workers/task.js';
import type { Outcome } from '../pipeline/batch.js';
import type { GateArgs } from './gates.js';
import { breachLine, gateLimits, costGateWithoutPrices, withGates } from './gates.js';
import type { LoadedSession, SessionInput } from '../read/index.js';
import { loadSession } from '../read/index.js';
import type { CommonArgs, PolicyArgs } from './options.js';
import { jobsFromArgs, runSettings, strategyOptionsFromArgs, withAllowNoGain, withInputs, withPolicy, settingFlag } from './options.js';
import type { PolicyValues } from '../config/policy.js';
import { policyFor } from '../config/policy.js';
import type { SettingArgs } from '../config/settings.js';
import type { PriceOverrides, Pricing, PricingArgs } from './pricing.js';
import { priceOverrides, priceSession, pricingJson, pricingWarnings, withPricing } from './pricing.js';
import type { SummarizerArgs } from './summarizer.js';
import { replayStrategy, withSummarizer } from './summarizer.js';
import type { ReadTaskOptions } from '../pipeline/sessions.js';
import { progressBesideReports, runSessionCommand } from '../pipeline/session-command.js';
import type { Printed } from '../pipeline/output.js';
import { printedJson, printedJsonTo } from '../pipeline/output.js';
import type { RecordPart } from '../pipeline/record-parts.js';
import { RecordParts } from '../pipeline/record-parts.js';
import { runSessions } from '../pipeline/sessions.js';
import { replayResultJson, replayPolicyJson, outcomeJson, spendByDayJson } from '../replay/json.js';
import { costJson } from '../cost/json.js';
import type { SessionSpend } from '../ledgers/rollup.js';
import { SpendByDay } from '../ledgers/rollup.js';
import { spendCallKeys, withCallsBilledElsewhere } from '../ledgers/ledgers.js';
import { billedOnce } from '../pipeline/billed-once.js';
import type { RollupInput } from '../replay/rollup.js';
import { ReplayRollupSum, rollupInput } from '../replay/rollup.js';
import { renderReplayRollup, replayRollupJson } from '../replay/rollup-report.js';

type ReplayArgs = CommonArgs &
  PolicyArgs &
  PricingArgs &
  GateArgs &
  SummarizerArgs<'replay'> &
  SettingArgs<'allow_no_gain' | 'strategy', 'replay'> & {
    'summary-tokens'?: number;
    policy: string;
    chart: boolean;
    html?: string;
  };

const POLICY_CHOICES = [CUSTOM_POLICY_NAME, ...PRESET_NAMES];

/** `pi,codex,coop` → validated, de-duplicated names, in the order given. */
function policyNames(value: string): string[] {
  const names = [...new Set(value.split(',').map((name) => name.trim()).filter(Boolean))];
  if (names.length === 0) throw new UsageError(`--policy needs at least one of ${POLICY_CHOICES.join(', ')}`);
  for (const name of names) {
    if (name !== CUSTOM_POLICY_NAME && !isPresetName(name)) {
      throw new UsageError(`unknown policy ${JSON.stringify(name)} (known: ${POLICY_CHOICES.join(', ')})`);
    }
  }
  return names;
}

function replayPolicies(names: readonly string[], settings: PolicyValues, window: number): ReplayPolicy[] {
  const limit = settings.context_limit ?? window;
  return names.map((name) => (isPresetName(name) ? presetPolicy(name, limit) : customPolicy(policyFor(settings, window))));
}

/** A policy's failed gate, by the policy's name (a stderr line each, and the exit code). */
interface PolicyBreach {
  readonly policy: string;
  readonly breach: Breach;
}

/**
 * What crosses back from a worker: the report as printed, not the replay behind it (each
 * simulated call and compaction of a long session: tens of MB this thread would hold beside it).
 */
interface Replayed {
  /** The record's JSON text with --json, else the human report (CommandOutput.rendered). */
  readonly printed: Printed;
  /**
   * With --html, the session's part of the page, made where the session was replayed: its text,
   * not the view behind it (every turn and call under every policy) held to the end of the run.
   */
  readonly section: HtmlSection | null;
  readonly breaches: readonly PolicyBreach[];
  /**
   * What the roll-up across sessions reads of the session's record (rollup.ts): one entry, taken
   * out of the list as the roll-up adds it, so the run's outcomes do not hold it to the end.
   */
  readonly rollup: RollupInput[];
  readonly warnings: readonly (Diagnostic | string)[];
  /**
   * The calls its bill counted, by the provider's name for them (billed-once.ts); none when the
   * run has one session, where no other session can have counted them.
   */
  readonly spendKeys: readonly string[];
}

/** What replaying one session needs besides its path (plain data but the strategy). */
interface ReplayOptions extends ReadTaskOptions {
  readonly names: readonly string[];
  readonly policy: PolicyValues;
  readonly model: string | undefined;
  readonly overrides: PriceOverrides;
  readonly limits: GateLimits;
  readonly simulatedSummaryTokens: number | null;
  /** `--no-relevance`: the simulated compactions keep every output of the span, as compact's would. */
  readonly relevance: boolean;
  /** With --json the record is rendered (as JSON text), else the human report, with --chart's charts. */
  readonly json: boolean;
  readonly chart: boolean;
  /** --html: the session's part of the page comes back too. */
  readonly html: boolean;
  /** Whether the run has other sessions, which may hold this one's calls (billed-once.ts). */
  readonly batch: boolean;
  /** Calls an earlier session of the batch was billed for (callKey → that session): copies here, as inspect has them. */
  readonly billedIn?: Readonly<Record<string, string>>;
}

interface ReplayContext extends ReplayOptions {
  readonly strategy: CompactionStrategy;
  readonly count: TextCounter | undefined;
}

/**
 * What the replay reads of message text: all of it (`full`) when the strategy is not
 * metadata-only (it summarizes or prunes text); else, when a preset prunes tool outputs, only
 * each message's size with its outputs pruned, taken while reading (`pruned sizes`, the
 * placeholder's); else nothing. Without `full` the lean read (slim messages, estimates taken
 * while reading) gives the same replay in flat memory.
 */
type TextNeed =
  | { readonly kind: 'full' }
  | { readonly kind: 'pruned sizes'; readonly placeholder: string; readonly strategy: MetadataStrategy }
  | { readonly kind: 'none'; readonly strategy: MetadataStrategy };

function textNeed(ctx: ReplayContext): TextNeed {
  const { strategy } = ctx;
  if (!readsOnlyStructure(strategy)) return { kind: 'full' };
  const placeholders = new Set<string>();
  for (const name of ctx.names) {
    const prune = isPresetName(name) ? presetPolicy(name, 1).prune : null;
    if (prune) placeholders.add(prune.placeholder);
  }
  if (placeholders.size > 1) return { kind: 'full' };
  const [placeholder] = placeholders;
  return placeholder === undefined ? { kind: 'none', strategy } : { kind: 'pruned sizes', placeholder, strategy };
}

/**
 * What the replay needs of the session's recorded calls: their pricing and ledgers, the bill by
 * day, the cache's lifetime, where it expired and how the bill holds each call, and their
 * totals. The calls themselves, their billed forms and costs (about 400 bytes a call) stay in
 * here, garbage before the policies are replayed.
 */
async function recordedSession(loaded: LoadedSession<AnyMessage>, ctx: ReplayContext) {
  const { session, tokens } = loaded;
  const calls = providerCalls(session.messages, tokens, session.recordedCompactions);
  const byDay = new SpendByDay(session);
  const { pricing, ledgers } = await priceSession(
    session,
    calls,
    { model: ctx.model, overrides: ctx.overrides, contextLimit: ctx.policy.context_limit ?? undefined },
    (call, cost) => byDay.add(call, cost),
  );
  const facts = recordedCalls(session.messages, calls);
  const { spend } = ledgers;
  const totals = {
    requests: calls.length,
    inputTokens: calls.reduce((total, call) => total + call.input, 0),
    outputTokens: calls.reduce((total, call) => total + call.output, 0),
    estimatedCalls: facts.billing.reduce((count, kind) => count + (kind === 'estimated' ? 1 : 0), 0),
    billedRequests: spend.requests,
    offContextRequests: ledgers.notInContext.reduce((count, part) => count + part.ledger.requests, 0),
    unpricedRequests: spend.unpricedRequests,
  };
  // The bill is inspect's `spend`, the same ledger over the same calls (copies out, billed-once.ts).
  const bill = { bill: spend.cost, pricedBill: spend.pricedCost };
  return { pricing, bill, totals, facts, spendByDay: byDay.spend(), spendKeys: ctx.batch ? spendCallKeys(session) : [] };
}

/**
 * One session under every policy asked for, rendered as it will be printed. With `parts` and
 * --json, the warnings and then the record's pieces go there as they are made, once nothing is
 * left that can fail the session (pipeline/record-parts.ts), and the result holds neither.
 */
async function replayOne(input: SessionInput, ctx: ReplayContext, parts?: PartSink<RecordPart>): Promise<Replayed> {
  // The session's messages stay in replayAll: garbage before the record (tens of MB of JSON on a
  // long session) is built.
  const replayed = await replayAll(input, ctx);
  const { view } = replayed;
  const breaches = view.outcomes.flatMap((outcome) => outcome.breaches.map((breach) => ({ policy: outcome.result.policy.name, breach })));
  const record = replayRecord(replayed, ctx);
  const kept = { section: ctx.html ? sessionSection(view) : null, breaches, rollup: [rollupInput(record)], spendKeys: replayed.spendKeys };
  if (!ctx.json) return { printed: renderReplay(view, ctx.chart), ...kept, warnings: replayed.warnings };
  if (!parts) return { printed: printedJson(record), ...kept, warnings: replayed.warnings };
  if (replayed.warnings.length > 0) parts({ warnings: replayed.warnings });
  return { printed: printedJsonTo(record, parts), ...kept, warnings: [] };
}

/** A session replayed: the view, and what the record says besides, without the session's messages. */
interface ReplayedSession {
  readonly view: ReplayView;
  readonly format: string;
  readonly model: string | null;
  readonly pricing: Pricing;
  readonly lifetime: CacheLifetime;
  readonly spendByDay: SessionSpend;
  readonly spendKeys: readonly string[];
  readonly warnings: readonly (Diagnostic | string)[];
}

/** The session's replays under every policy, and what pricing them needs from its read. */
interface Simulated {
  /**
   * Each policy's replay, its calls, refusals and compactions still columns: objects once the
   * messages are garbage. Taken out of the list as they are reported (replayAll), so the columns
   * are garbage beside the objects made of them.
   */
  readonly results: ReplayColumns<ReplayEvent>[];
  readonly format: string;
  readonly model: string | null;
  readonly pricing: Pricing;
  readonly recorded: Awaited<ReturnType<typeof recordedSession>>;
  readonly warnings: readonly (Diagnostic | string)[];
}

/**
 * The session read and replayed under every policy asked for. A full read when the replay reads
 * text (the simulated compactions run the relevance filter and prunes over it), else a lean one.
 * The simulated states are not reported, so none is kept (replayColumns). The read stays in
 * here: its messages are garbage before the replays are priced.
 */
async function simulateAll(input: SessionInput, ctx: ReplayContext): Promise<Simulated> {
  const options = { format: ctx.format, strict: ctx.strict, ...(ctx.count ? { count: ctx.count } : {}) };
  const need = textNeed(ctx);
  let prunedSizes: PrunedSizes | undefined;
  let read: LoadedSession<AnyMessage>;
  // What the replays run on: full messages with any strategy, or slim ones with one that reads only structure.
  let replayed: Pick<FullReplayInput, 'read' | 'messages' | 'strategy'> | Pick<LeanReplayInput, 'read' | 'messages' | 'strategy'>;
  // Calls an earlier session of the run was billed for are copies here, in neither the bill nor the savings.
  const billedIn = new Map(Object.entries(ctx.billedIn ?? {}));
  if (need.kind === 'full') {
    const full = await loadSession(input, { ...options, messages: 'full' });
    const session = withCallsBilledElsewhere(full.session, billedIn);
    read = { ...full, session };
    replayed = { messages: session.messages, strategy: ctx.strategy };
  } else {
    let lean: LoadedSession<AnyMessage>;
    if (need.kind === 'none') lean = await loadSession(input, { ...options, messages: 'lean' });
    else {
      const sized = await loadSession(input, { ...options, messages: 'lean' }, () => new PrunedSizesObserver(need.placeholder, ctx.count));
      prunedSizes = sized.observer.sizes();
      lean = sized;
    }
    const session = withCallsBilledElsewhere(lean.session, billedIn);
    read = { ...lean, session };
    replayed = { read: 'lean', messages: session.messages, strategy: need.strategy };
  }
  const loaded = read;
  const { recordedCompactions } = loaded.session;
  const recorded = await recordedSession(loaded, ctx);
  const { pricing } = recorded;
  // --max-cost without a price: a warning (the gate reads no cost), a failure under --strict; never exit 3.
  const gateWarnings = costGateWithoutPrices(ctx.limits, pricing.rates !== null, input.path, ctx.strict);
  const results: ReplayColumns<ReplayEvent>[] = [];
  for (const policy of replayPolicies(ctx.names, ctx.policy, pricing.window.tokens)) {
    results.push(
      await replayColumns({
        ...replayed,
        sessionName: basename(input.path),
        tokens: loaded.tokens,
        policy,
        relevance: ctx.relevance,
        recorded: recordedCompactions,
        ...(ctx.count ? { count: ctx.count } : {}),
        ...(prunedSizes ? { prunedSizes } : {}),
      }),
    );
  }
  return {
    results,
    format: loaded.session.format,
    model: loaded.session.model ?? null,
    pricing,
    recorded,
    warnings: [...loaded.warnings, ...pricingWarnings(pricing), ...gateWarnings],
  };
}

/**
 * One session under every policy asked for, priced: the costs, thrash and gates of each policy
 * are worked out once the session's messages are garbage (on a long session, the costs' steps
 * beside the messages were the replay's peak).
 */
async function replayAll(input: SessionInput, ctx: ReplayContext): Promise<ReplayedSession> {
  const simulated = await simulateAll(input, ctx);
  const { format, model, pricing, recorded, warnings } = simulated;
  const results = simulated.results.splice(0).map((columns) => columns.report());
  // The policies replay the session's own conversation at its model's rates; the recorded calls
  // are the same in every replay.
  const rates = pricing.rates;
  const first = results[0]!;
  const bill = rates ? recordedCost(first, rates, recorded.facts, recorded.bill.pricedBill) : null;
  const policyOutcomes: PolicyOutcome[] = results.map((result) => {
    const costs = rates && bill ? policyCosts(result, rates, recorded.facts, bill) : null;
    const { totals } = result;
    const breaches = checkGates(
      {
        baseline: totals.maxBaselineAfter,
        inputTokens: totals.inputTokensAfter + totals.summarizerInputTokens,
        costUsd: costs?.costUsd ?? null,
      },
      ctx.limits,
    );
    return { result, costs, thrash: detectThrash(result), breaches };
  });
  const summary: RecordedSummary = { ...recorded.totals, ...recorded.bill, cost: bill };
  const view: ReplayView = {
    path: input.path,
    model: pricing.model,
    contextWindow: pricing.window.tokens,
    strategy: ctx.strategy.name,
    recorded: summary,
    outcomes: policyOutcomes,
  };
  return { view, format, model, pricing, lifetime: recorded.facts.lifetime, spendByDay: recorded.spendByDay, spendKeys: recorded.spendKeys, warnings };
}

/** One session's `--json` record. */
function replayRecord({ view, format, model, pricing, lifetime, spendByDay }: ReplayedSession, ctx: ReplayContext) {
  const { path, recorded, outcomes: policyOutcomes } = view;
  return {
    session: path,
    format,
    model,
    strategy: ctx.strategy.name,
    simulated_summary_tokens: ctx.simulatedSummaryTokens,
    pricing: pricingJson(pricing),
    cache_lifetime: lifetime,
    requests: recorded.requests,
    input_tokens: recorded.inputTokens,
    output_tokens: recorded.outputTokens,
    estimated_requests: recorded.estimatedCalls,
    billed_requests: recorded.billedRequests,
    unpriced_requests: recorded.unpricedRequests,
    // The one recorded figure: the bill, inspect's `spend` (null when a billed call has no price);
    // its priced calls' part, which roll-ups add; the estimate for calls with no usage, apart.
    cost: recorded.bill ? costJson(recorded.bill) : null,
    cost_priced_usd: recorded.pricedBill.total,
    cost_estimated_usd: recorded.estimatedCalls === 0 ? 0 : (recorded.cost?.estimated.total ?? null),
    spend_by_day: spendByDayJson(spendByDay),
    // The first policy's turns and totals stay at the top level, where one-policy replays had them.
    ...replayResultJson(policyOutcomes[0]!.result),
    policy: replayPolicyJson(policyOutcomes[0]!.result.policy),
    policies: policyOutcomes.map(outcomeJson),
  };
}

/** Offline strategies, which a worker can build from their name (a summarizer's client cannot cross). */
type OfflineStrategyName = Exclude<StrategyName, 'summarize'>;

interface ReplayTaskOptions extends ReplayOptions {
  readonly strategy: OfflineStrategyName;
  readonly strategyOptions: StrategyOptions;
}

/** replayOne in a worker thread, for an offline strategy (a summarizer, live or simulated, stays here). */
export const replaySessionTask = sessionTask('replay', async (input: SessionInput, options: ReplayTaskOptions, parts?: PartSink<RecordPart>): Promise<Replayed> =>
  replayOne(input, { ...options, strategy: createStrategy(options.strategy, options.strategyOptions), count: await loadTextCounter(options.tokenizer) }, parts),
);

export const replayCommand: CommandModule<object, ReplayArgs> = {
  command: 'replay [inputs..]',
  describe: 'Replay sessions under compaction policies: tokens, naive and cache-aware cost before/after',
  // `as never`: yargs types the flags as parsed, before normalizeArgs (options.ts) gives the handler
  // its args type (inputs from `--` and positionals, defaults filled in); the handler's type is the truth.
  builder: (yargs) =>
    withSummarizer(withGates(withPricing(withAllowNoGain(withPolicy(withInputs(yargs, 'replay'))), 'replay')), 'replay')
      .option('policy', {
        describe: `comma-separated policies to compare: ${POLICY_CHOICES.join(', ')} (custom = the policy flags)`,
        type: 'string',
        default: CUSTOM_POLICY_NAME,
      })
      .option(...settingFlag('strategy', 'replay'))
      .option(...settingFlag('relevance', 'replay'))
      .option('summary-tokens', { describe: 'simulate summarize with summaries of N tokens (no LLM calls)', type: 'number' })
      .option('chart', { describe: 'draw the baseline per turn, before and under each policy, as a text chart', type: 'boolean', default: false })
      .option('html', { describe: 'also write a self-contained HTML report to FILE', type: 'string' }) as never,
  handler: async (args) => {
    strategyOptionsFromArgs(args); // --max-summary-tokens is checked for every strategy, before the summarizer's settings
    // Every setting is read and checked up front, before any session is read.
    const settings = await runSettings(args, 'replay');
    const names = policyNames(args.policy);
    const overrides = priceOverrides(args);
    const limits = gateLimits(args);
    const { strategy, concurrency, simulatedSummaryTokens } = await replayStrategy(args, settings, args['summary-tokens']);
    const options: ReplayOptions = {
      format: args.format,
      tokenizer: settings.tokenizer,
      strict: args.strict,
      names,
      policy: settings.policy,
      model: args['price-model'],
      overrides,
      limits,
      simulatedSummaryTokens,
      relevance: settings.relevance,
      json: args.json,
      chart: args.chart,
      html: args.html !== undefined,
      batch: false,
    };
    const count = settings.tokenizer === 'heuristic' ? undefined : await loadTextCounter(settings.tokenizer);
    const strategyName = settings.strategy ?? 'truncate';
    // Only an offline strategy moves to workers: a summarizer's client lives in this thread.
    const offline = simulatedSummaryTokens === null && strategyName !== 'summarize' ? strategyName : null;
    const sections = (outcomes: readonly Outcome<Replayed>[]) => outcomes.flatMap((outcome) => (outcome.ok && outcome.value.section ? [outcome.value.section] : []));
    // Across the sessions, in the order they are printed (so saved records give the same sums).
    const rollup = new ReplayRollupSum();
    let replayed = 0;
    await runSessionCommand<Replayed>(args, { progress: progressBesideReports() }, (output) => ({
      run: async (paths, emit) => {
        const batch = paths.length > 1;
        const run = { ...options, batch };
        const here = (input: SessionInput, billedIn: Readonly<Record<string, string>> | undefined, parts?: PartSink<RecordPart>) =>
          replayOne(input, { ...run, strategy, count, ...(billedIn ? { billedIn } : {}) }, parts);
        // A call two sessions of the run hold is billed in the first (billed-once.ts), as inspect
        // bills it: a later session holding it is replayed again with it as a copy. Its record
        // can only be printed once that is known, so in a batch each record is printed whole;
        // one session's --json record is written as it is made (record-parts.ts).
        const settled: Outcome<Replayed>[] = [];
        const keep = (outcome: Outcome<Replayed>) => {
          settled.push(outcome);
          emit(outcome);
        };
        const once = batch ? billedOnce(keep, (path, billedIn) => here({ path }, billedIn)) : null;
        const records = args.json && !batch ? new RecordParts(paths, output) : null;
        const outcomes = await runSessions(
          paths,
          replaySessionTask,
          { ...run, strategy: offline ?? 'truncate', strategyOptions: strategyOptionsFromArgs(args) },
          once ?? (records ? records.emit(emit) : emit),
          offline ? jobsFromArgs(args) : 1,
          {
            local: (input, parts) => here(input, undefined, parts),
            concurrency,
            ...(records ? { parts: (input: SessionInput) => records.sink(input) } : {}),
          },
        );
        // The roll-up and the page read the results as printed: a call is billed once there too.
        return once ? settled : outcomes;
      },
      print: (path, { printed, breaches, rollup: input }) => {
        output.rendered(printed);
        for (const { policy, breach } of breaches) process.stderr.write(`${breachLine(path, breach, policy)}\n`);
        for (const record of input.splice(0)) rollup.add(record);
        replayed++;
      },
      finish: async (outcomes) => {
        // Over several sessions, what each policy would have done across them.
        const across = replayed > 1 ? rollup.rollup() : null;
        if (across) output.record(replayRollupJson(across), () => renderReplayRollup(across));
        if (args.html) await (await import('write-file-atomic')).default(args.html, renderHtmlReport(sections(outcomes), across));
      },
      breached: (outcomes) => outcomes.some((outcome) => outcome.ok && outcome.value.breaches.length > 0),
    }));
  },
};
