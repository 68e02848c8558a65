/**
 * The CI gate flags of `inspect` and `replay`, and how a breach is reported: one line on
 * stderr per breach (stdout stays NDJSON with --json), and exit code 3 (ExitCode.gate).
 */
import type { Argv } from 'yargs';
import type { Breach, GateLimits } from '../gates/check.js';
import { InputError, UsageError } from '../errors.js';
import { formatTokens, formatUsd } from '../report/format.js';

export interface GateArgs {
  'max-baseline'?: number;
  'max-input-tokens'?: number;
  'max-cost'?: number;
}

/** The archive-wide gates of `inspect` and `report`. */
export interface TotalGateArgs {
  'max-total-cost'?: number;
  'max-total-input-tokens'?: number;
}

export function withTotalGates<T>(yargs: Argv<T>) {
  return yargs
    .option('max-total-cost', { describe: "CI gate: fail (exit 3) if all the sessions' priced spend together exceeds USD", type: 'number' })
    .option('max-total-input-tokens', { describe: 'CI gate: fail (exit 3) if all the sessions together were billed more than N input tokens', type: 'number' });
}

function checkedLimit(args: Record<string, unknown>, flag: string): number | undefined {
  const value = args[flag] as number | undefined;
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new UsageError(`--${flag} must be a number >= 0, got ${String(value)}`);
  return value;
}

export function totalGateLimits(args: TotalGateArgs): GateLimits {
  const maxTotalCostUsd = checkedLimit(args as Record<string, unknown>, 'max-total-cost');
  const maxTotalInputTokens = checkedLimit(args as Record<string, unknown>, 'max-total-input-tokens');
  return { ...(maxTotalCostUsd !== undefined ? { maxTotalCostUsd } : {}), ...(maxTotalInputTokens !== undefined ? { maxTotalInputTokens } : {}) };
}

/** Does a gate read dollars? Then the calls with no price are named (and fail under --strict). */
export function hasCostGate(limits: GateLimits): boolean {
  return limits.maxCostUsd !== undefined || limits.maxTotalCostUsd !== undefined;
}

/** The warning a cost gate gives when some calls had no price: it read the others only. */
export function unpricedGateWarning(unpricedCalls: number, models: readonly (string | null)[], strict = false): string {
  const names = models.map((model) => (model === null ? 'no model named' : model)).join(', ');
  const hint = strict ? '' : ', or --strict to fail';
  return `the cost gate read the priced calls only: ${formatTokens(unpricedCalls)} call${unpricedCalls === 1 ? '' : 's'} had no price (${names}; pass --price-input/--price-output${hint})`;
}

export function withGates<T>(yargs: Argv<T>) {
  return yargs
    .option('max-baseline', { describe: 'CI gate: fail (exit 3) if a turn baseline exceeds N tokens', type: 'number' })
    .option('max-input-tokens', { describe: 'CI gate: fail (exit 3) if input tokens exceed N', type: 'number' })
    .option('max-cost', { describe: 'CI gate: fail (exit 3) if the cost exceeds USD', type: 'number' });
}

export function gateLimits(args: GateArgs): GateLimits {
  const limit = (flag: keyof GateArgs) => {
    const value = args[flag];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new UsageError(`--${flag} must be a number >= 0, got ${String(value)}`);
    return value;
  };
  const maxBaseline = limit('max-baseline');
  const maxInputTokens = limit('max-input-tokens');
  const maxCostUsd = limit('max-cost');
  return {
    ...(maxBaseline !== undefined ? { maxBaseline } : {}),
    ...(maxInputTokens !== undefined ? { maxInputTokens } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
  };
}

const LABELS: Record<Breach['gate'], string> = {
  'max-baseline': 'baseline',
  'max-input-tokens': 'input tokens',
  'max-cost': 'cost',
  'max-total-cost': 'total cost',
  'max-total-input-tokens': 'total input tokens',
};

function formatGateValue(breach: Breach, value: number): string {
  return breach.gate === 'max-cost' || breach.gate === 'max-total-cost' ? formatUsd(value) : formatTokens(value);
}

/** `compactor: gate: all 27 sessions: total cost $12.40 > $5.00 (--max-total-cost)`. */
export function totalBreachLine(sessions: number, breach: Breach): string {
  return breachLine(`all ${formatTokens(sessions)} sessions`, breach);
}

/** `compactor: gate: path: [policy: ]baseline 90,212 > 80,000 (--max-baseline)`. */
/**
 * `--max-cost` cannot be checked without prices: a warning that says so (the gate is not
 * checked), or under --strict the session's failure (exit 1). Never a breach: exit 3 is one.
 */
export function costGateWithoutPrices(limits: GateLimits, hasRates: boolean, path: string, strict: boolean): string[] {
  if (limits.maxCostUsd === undefined || hasRates) return [];
  const message = '--max-cost was not checked: the model has no price (pass --model or --price-input/--price-output)';
  if (strict) throw new InputError(message, path);
  return [`${path}: ${message}`];
}

export function breachLine(path: string, breach: Breach, policy?: string): string {
  const subject = policy ? `${path}: ${policy}:` : `${path}:`;
  return `compactor: gate: ${subject} ${LABELS[breach.gate]} ${formatGateValue(breach, breach.value)} > ${formatGateValue(breach, breach.limit)} (--${breach.gate})`;
}
