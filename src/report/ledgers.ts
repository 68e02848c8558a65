/**
 * The spend and context ledgers (src/audit/ledgers.ts) as `inspect` prints them: in text, the two
 * totals and one line per cause that tells them apart; in `--json`, the `spend` and `context`
 * objects.
 */
import type { Ledger, LedgerPart, Ledgers } from '../audit/ledgers.js';
import { DIFFERENCE_LABELS } from '../audit/ledgers.js';
import { costJson } from '../audit/cost.js';
import { formatCostSplit } from './cost.js';
import { formatTokens, formatUsd } from './format.js';

/** A ledger's fields in `--json`. */
export function ledgerJson(ledger: Ledger) {
  return {
    requests: ledger.requests,
    input_tokens: ledger.inputTokens,
    cache_read_input_tokens: ledger.cacheReadTokens,
    cache_creation_input_tokens: ledger.cacheWriteTokens,
    cache_creation_1h_input_tokens: ledger.cacheWrite1hTokens,
    output_tokens: ledger.outputTokens,
    cost: ledger.cost ? costJson(ledger.cost) : null,
  };
}

function partJson(part: LedgerPart) {
  return { cause: part.cause, ...ledgerJson(part.ledger), ...(part.billedIn ? { billed_in: part.billedIn } : {}) };
}

/** The `spend` and `context` objects of `inspect --json`. */
export function ledgersJson(ledgers: Ledgers) {
  return {
    spend: { ...ledgerJson(ledgers.spend), excluded_from_context: ledgers.notInContext.map(partJson) },
    context: { ...ledgerJson(ledgers.context), excluded_from_spend: ledgers.notInSpend.map(partJson) },
  };
}

/** A session as the `copied` line names it: a path's file name, or an id as it is. */
function sessionName(session: string): string {
  return session.split('/').pop() ?? session;
}

function calls(count: number): string {
  return `${formatTokens(count)} call${count === 1 ? '' : 's'}`;
}


/**
 * `subagents: 14 calls, 1,234,567 tokens, $2.35` (tokens: input and output); the copied calls
 * name the sessions that were billed for them, a line each (a session's file name is long).
 */
function partLines(part: LedgerPart): string[] {
  const { ledger } = part;
  const tokens = formatTokens(ledger.inputTokens + ledger.outputTokens);
  const label = DIFFERENCE_LABELS[part.cause];
  if (part.cause === 'estimated') return [`${label}: ${calls(ledger.requests)}, ~${tokens} tokens, not in spend`];
  if (part.cause === 'copied') {
    const sessions = part.billedIn ?? [];
    const where = sessions.length === 1 ? 'another session' : 'other sessions';
    return [`${label}: ${calls(ledger.requests)}, ${tokens} tokens, billed in ${where}:`, ...sessions.map((session) => `  ${sessionName(session)}`)];
  }
  return [`${label}: ${calls(ledger.requests)}, ${tokens} tokens, ${ledger.cost ? formatUsd(ledger.cost.total) : 'cost unknown'}`];
}

function splitLine(ledger: Ledger): string {
  return ledger.cost ? formatCostSplit(ledger.cost) : 'cost unknown (a model without prices)';
}

/**
 * The ledgers in text, indented by two: one total when they agree; otherwise each ledger's cost
 * by token class and a line per cause that tells them apart. Fits 80 columns at everyday amounts.
 */
export function renderLedgers(ledgers: Ledgers): string[] {
  const { spend, context } = ledgers;
  const parts = [...ledgers.notInContext, ...ledgers.notInSpend];
  if (parts.length === 0) return [`  spend = context: ${calls(spend.requests)}`, `  ${splitLine(spend)}`];
  return [
    `  spend: ${calls(spend.requests)}`,
    `  ${splitLine(spend)}`,
    `  context: ${calls(context.requests)}`,
    `  ${splitLine(context)}`,
    '  why they differ:',
    ...parts.flatMap(partLines).map((line) => `    ${line}`),
  ];
}
