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

const LABELS: Record<Breach['gate'], string> = { 'max-baseline': 'baseline', 'max-input-tokens': 'input tokens', 'max-cost': 'cost' };

function formatGateValue(breach: Breach, value: number): string {
  return breach.gate === 'max-cost' ? formatUsd(value) : formatTokens(value);
}

/** `compactor: gate: path: [policy: ]baseline 90,212 > 80,000 (--max-baseline)`. */
/** `--max-cost` cannot be checked without prices: that session fails rather than passing silently. */
export function requirePricesForCostGate(limits: GateLimits, hasRates: boolean, path: string): void {
  if (limits.maxCostUsd !== undefined && !hasRates) {
    throw new InputError('--max-cost needs prices: the model is unknown (pass --model or --price-input/--price-output)', path);
  }
}

export function breachLine(path: string, breach: Breach, policy?: string): string {
  const subject = policy ? `${path}: ${policy}:` : `${path}:`;
  return `compactor: gate: ${subject} ${LABELS[breach.gate]} ${formatGateValue(breach, breach.value)} > ${formatGateValue(breach, breach.limit)} (--${breach.gate})`;
}
