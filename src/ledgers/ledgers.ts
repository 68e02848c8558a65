/**
 * The two ledgers of a session. Pure.
 *
 * - **spend**: every call the provider billed: the context's calls whose usage the file reports,
 *   and the billed calls that are not messages of the context (Session.offContext: abandoned
 *   branches, subagents, the agent's compaction summariser, review threads, aborted replies,
 *   usage matching no message). What the
 *   readers deduplicated is what the provider billed; this module adds up, it does not dedupe.
 * - **context**: the live conversation as the model last saw it, one call per assistant message,
 *   reported or estimated: what turn tables, growth, cuts and compaction work on.
 *
 * They differ by the off-context calls (spend only, one difference per cause), the estimated
 * calls (context only: nothing billed them as far as the file says) and the copied ones (context
 * only: a fork's copies of calls another session was billed for, Message.copiedFrom). Every call is priced at its
 * own model's rates; which rates a model has is left to the commands (commands/pricing.ts).
 */
import type { Rates } from '../pricing/catalog.js';
import type { AnyMessage, Session, SpendCause } from '../session/model.js';
import type { ProviderCall } from '../tokens/provider-calls.js';
import type { BilledTokens, CostSplit } from '../cost/billing.js';
import { callCost, CostSum, recordedTokens, usageTokens, ZERO_COST } from '../cost/billing.js';

/** Why a call is in one ledger and not the other: a spend cause (spend only), or `estimated` or `copied` (context only). */
export type LedgerDifference = SpendCause | 'estimated' | 'copied';

/** The differences that are context only: calls this session's spend does not count. */
const CONTEXT_ONLY: ReadonlySet<LedgerDifference> = new Set(['estimated', 'copied']);

/** Every difference, in the order reports list them; the labels are the human report's. */
export const DIFFERENCE_LABELS: Readonly<Record<LedgerDifference, string>> = {
  'abandoned-branch': 'abandoned branch',
  subagent: 'subagents',
  compaction: 'compaction summary',
  review: 'review',
  aborted: 'aborted',
  unmatched: 'unmatched usage',
  estimated: 'estimated',
  copied: 'copied',
};

/** One provider call of either ledger. */
export interface BilledCall {
  readonly tokens: BilledTokens;
  /** The model it is priced at: --model, else the call's own, else the session's; null if none. */
  readonly model: string | null;
  /** The assistant message a context call produced; null for an off-context call. */
  readonly index: number | null;
  /** Why an off-context call is not in the context; null for a context call. */
  readonly cause: SpendCause | null;
  /** True for a context call whose usage the file does not report (its tokens are estimates). */
  readonly estimated: boolean;
  /** For a context call another session was billed for (a fork's copy): that session; else null. */
  readonly copiedFrom: string | null;
  /** When the call was made, as the file says (its message's, or the off-context call's); null if it does not. */
  readonly timestamp: string | null;
}

/** Is the call in the spend ledger: billed off the context, or a context call with reported usage that no other session was billed for? */
export function isSpend(call: BilledCall): boolean {
  return call.cause !== null || (!call.estimated && call.copiedFrom === null);
}

/**
 * The calls of both ledgers: the context's (in `calls` order), then the off-context ones (in the
 * session's order). `model`: --model, which replaces every call's own.
 */
export function billedCalls(session: Session<AnyMessage>, calls: readonly ProviderCall[], model?: string): BilledCall[] {
  const billed: BilledCall[] = [];
  eachBilledCall(session, calls, model, (call) => billed.push(call));
  return billed;
}

/**
 * billedCalls one at a time, each built as it is handed over: a long session's billed forms (about
 * 150 bytes a call) are then never held together.
 */
export function eachBilledCall(session: Session<AnyMessage>, calls: readonly ProviderCall[], model: string | undefined, visit: (call: BilledCall) => void): void {
  const named = (own: string | undefined) => model ?? own ?? session.model ?? null;
  for (const call of calls) {
    const message = session.messages[call.index];
    visit({
      tokens: recordedTokens(call),
      model: named(message?.model),
      index: call.index,
      cause: null,
      estimated: call.estimated,
      copiedFrom: message?.copiedFrom ?? null,
      timestamp: message?.timestamp ?? null,
    });
  }
  for (const call of session.offContext) {
    visit({
      tokens: usageTokens(call.usage),
      model: named(call.model),
      index: null,
      cause: call.cause,
      estimated: false,
      copiedFrom: null,
      timestamp: call.timestamp ?? null,
    });
  }
}

/**
 * The model each billed call is priced at, in eachBilledCall's order, without building the calls:
 * a session's models are known before any call is priced.
 */
export function billedModels(session: Session<AnyMessage>, calls: readonly ProviderCall[], model: string | undefined): Set<string | null> {
  const models = new Set<string | null>();
  const named = (own: string | undefined) => model ?? own ?? session.model ?? null;
  for (const call of calls) models.add(named(session.messages[call.index]?.model));
  for (const call of session.offContext) models.add(named(call.model));
  return models;
}

/** The price of a model's calls, or null when it has none. */
export type RatesFor = (model: string | null) => Rates | null;

/** A call's cost at its model's rates; null when it has tokens but its model no price. */
export function billedCost(call: BilledCall, ratesFor: RatesFor): CostSplit | null {
  const rates = ratesFor(call.model);
  if (rates) return callCost(call.tokens, rates);
  const { input, cacheRead, cacheWrite, output } = call.tokens;
  return input + cacheRead + cacheWrite + output === 0 ? ZERO_COST : null;
}

export interface Ledger {
  readonly requests: number;
  /** Every input token, cached parts included. */
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  /** Cache writes of either lifetime. */
  readonly cacheWriteTokens: number;
  /** The one-hour part of `cacheWriteTokens`. */
  readonly cacheWrite1hTokens: number;
  readonly outputTokens: number;
  /** null when a call has tokens but its model no price. */
  readonly cost: CostSplit | null;
  /** Models whose calls could not be priced (null: calls that name no model). */
  readonly unpriced: readonly (string | null)[];
  /** The cost of the calls that have a price: `cost`, when every call has one. */
  readonly pricedCost: CostSplit;
  /** Calls with tokens whose model has no price: in the token counts, not in `pricedCost`. */
  readonly unpricedRequests: number;
}

export interface LedgerPart {
  readonly cause: LedgerDifference;
  readonly ledger: Ledger;
  /** `copied` only: the sessions that were billed for the calls, in the order first met. */
  readonly billedIn?: readonly string[];
}

export interface Ledgers {
  readonly spend: Ledger;
  readonly context: Ledger;
  /** Billed calls the context does not hold, one entry per cause present. */
  readonly notInContext: readonly LedgerPart[];
  /** Context calls this session's spend does not count: the estimated ones, the copied ones (an entry each, or none). */
  readonly notInSpend: readonly LedgerPart[];
}

/** Adds calls, or whole ledgers (a roll-up over sessions), into one ledger. */
export class LedgerSum {
  private requests = 0;
  private inputTokens = 0;
  private cacheReadTokens = 0;
  private cacheWriteTokens = 0;
  private cacheWrite1hTokens = 0;
  private outputTokens = 0;
  /** The cost of every call so far, while each had a price (`priced` false from the first that had none: the cost is then unknown). */
  private readonly cost = new CostSum();
  private priced = true;
  private readonly pricedCost = new CostSum();
  private unpricedRequests = 0;
  private readonly unpriced = new Set<string | null>();

  add(call: BilledCall, cost: CostSplit | null): void {
    const { tokens } = call;
    this.requests++;
    this.inputTokens += tokens.input + tokens.cacheRead + tokens.cacheWrite;
    this.cacheReadTokens += tokens.cacheRead;
    this.cacheWriteTokens += tokens.cacheWrite;
    this.cacheWrite1hTokens += Math.min(tokens.cacheWrite1h ?? 0, tokens.cacheWrite);
    this.outputTokens += tokens.output;
    if (cost === null) {
      this.unpriced.add(call.model);
      this.unpricedRequests++;
      this.priced = false;
      return;
    }
    this.pricedCost.add(cost);
    if (this.priced) this.cost.add(cost);
  }

  /** A whole ledger, as if its calls were added one by one. */
  addLedger(ledger: Ledger): void {
    this.requests += ledger.requests;
    this.inputTokens += ledger.inputTokens;
    this.cacheReadTokens += ledger.cacheReadTokens;
    this.cacheWriteTokens += ledger.cacheWriteTokens;
    this.cacheWrite1hTokens += ledger.cacheWrite1hTokens;
    this.outputTokens += ledger.outputTokens;
    if (ledger.cost === null) this.priced = false;
    else if (this.priced) this.cost.add(ledger.cost);
    this.pricedCost.add(ledger.pricedCost);
    this.unpricedRequests += ledger.unpricedRequests;
    for (const model of ledger.unpriced) this.unpriced.add(model);
  }

  ledger(): Ledger {
    const { requests, inputTokens, cacheReadTokens, cacheWriteTokens, cacheWrite1hTokens, outputTokens, unpricedRequests } = this;
    const cost = this.priced ? this.cost.split() : null;
    return { requests, inputTokens, cacheReadTokens, cacheWriteTokens, cacheWrite1hTokens, outputTokens, cost, unpriced: [...this.unpriced], pricedCost: this.pricedCost.split(), unpricedRequests };
  }
}

/** Both ledgers and what tells them apart. `costs`: each call's billedCost, in `calls` order. */
export function buildLedgers(calls: readonly BilledCall[], costs: readonly (CostSplit | null)[]): Ledgers {
  const sum = new LedgersSum();
  calls.forEach((call, position) => sum.add(call, costs[position] ?? null));
  return sum.ledgers();
}

/** buildLedgers call by call (each call with its billedCost, in billedCalls' order), so no list of them is held. */
export class LedgersSum {
  private readonly spend = new LedgerSum();
  private readonly context = new LedgerSum();
  private readonly parts = new Map<LedgerDifference, LedgerSum>();
  private readonly billedIn = new Set<string>();

  add(call: BilledCall, cost: CostSplit | null): void {
    if (call.cause !== null) {
      this.spend.add(call, cost);
      this.part(call.cause).add(call, cost);
      return;
    }
    this.context.add(call, cost);
    if (isSpend(call)) this.spend.add(call, cost);
    else if (call.estimated) this.part('estimated').add(call, cost);
    else {
      this.part('copied').add(call, cost);
      this.billedIn.add(call.copiedFrom!);
    }
  }

  ledgers(): Ledgers {
    const listed = (keep: (cause: LedgerDifference) => boolean): LedgerPart[] =>
      (Object.keys(DIFFERENCE_LABELS) as LedgerDifference[]).flatMap((cause) => {
        const sum = this.parts.get(cause);
        if (!sum || !keep(cause)) return [];
        return [{ cause, ledger: sum.ledger(), ...(cause === 'copied' ? { billedIn: [...this.billedIn] } : {}) }];
      });
    return {
      spend: this.spend.ledger(),
      context: this.context.ledger(),
      notInContext: listed((cause) => !CONTEXT_ONLY.has(cause)),
      notInSpend: listed((cause) => CONTEXT_ONLY.has(cause)),
    };
  }

  private part(cause: LedgerDifference): LedgerSum {
    return this.parts.get(cause) ?? this.parts.set(cause, new LedgerSum()).get(cause)!;
  }
}

/**
 * The provider's names (Message.callKey) of the calls this session's spend counts: the context's
 * calls with usage that are not copies, and the off-context calls. Calls the file names no key
 * for are not among them.
 */
export function spendCallKeys(session: Session<AnyMessage>): string[] {
  const keys: string[] = [];
  for (const message of session.messages) if (message.callKey !== undefined && message.usage && message.copiedFrom === undefined) keys.push(message.callKey);
  for (const call of session.offContext) if (call.callKey !== undefined) keys.push(call.callKey);
  return keys;
}

/**
 * The session with the calls another session was already charged for (`billedIn`: callKey → that
 * session) taken out of its spend: a context call becomes a copy (Message.copiedFrom), an
 * off-context call is dropped (it is in neither ledger then). One call seen in two sessions of a
 * batch, a fork's unmarked copy, is so billed once.
 */
export function withCallsBilledElsewhere<M extends AnyMessage>(session: Session<M>, billedIn: ReadonlyMap<string, string>): Session<M> {
  if (billedIn.size === 0) return session;
  const elsewhere = (key: string | undefined) => (key === undefined ? undefined : billedIn.get(key));
  return {
    ...session,
    messages: session.messages.map((message) => {
      const other = message.usage && message.copiedFrom === undefined ? elsewhere(message.callKey) : undefined;
      return other === undefined ? message : { ...message, copiedFrom: other };
    }),
    offContext: session.offContext.filter((call) => elsewhere(call.callKey) === undefined),
  };
}
