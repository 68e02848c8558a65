/**
 * CI gates: limits a session (or a replayed policy) must stay within. Pure; the commands print
 * one line per breach and exit with ExitCode.gate.
 */

export interface GateLimits {
  readonly maxBaseline?: number;
  readonly maxInputTokens?: number;
  readonly maxCostUsd?: number;
  /** Over the whole archive (`inspect`, `report`): every session's priced spend added up. */
  readonly maxTotalCostUsd?: number;
  readonly maxTotalInputTokens?: number;
}

export interface GateValues {
  /** The largest turn baseline. */
  readonly baseline: number;
  /** Input tokens over every call. */
  readonly inputTokens: number;
  /** Total dollars; null when no price is known (the commands refuse --max-cost then). */
  readonly costUsd: number | null;
}

export type GateName = 'max-baseline' | 'max-input-tokens' | 'max-cost' | 'max-total-cost' | 'max-total-input-tokens';

export interface Breach {
  readonly gate: GateName;
  readonly limit: number;
  readonly value: number;
}

export function hasGates(limits: GateLimits): boolean {
  return limits.maxBaseline !== undefined || limits.maxInputTokens !== undefined || limits.maxCostUsd !== undefined;
}

export function checkGates(values: GateValues, limits: GateLimits): Breach[] {
  const breaches: Breach[] = [];
  const check = (gate: GateName, value: number | null, limit: number | undefined) => {
    if (limit !== undefined && value !== null && value > limit) breaches.push({ gate, limit, value });
  };
  check('max-baseline', values.baseline, limits.maxBaseline);
  check('max-input-tokens', values.inputTokens, limits.maxInputTokens);
  check('max-cost', values.costUsd, limits.maxCostUsd);
  return breaches;
}

/** The archive's totals against --max-total-cost and --max-total-input-tokens. */
export function checkTotalGates(totals: { readonly inputTokens: number; readonly costUsd: number }, limits: GateLimits): Breach[] {
  const breaches: Breach[] = [];
  if (limits.maxTotalCostUsd !== undefined && totals.costUsd > limits.maxTotalCostUsd) breaches.push({ gate: 'max-total-cost', limit: limits.maxTotalCostUsd, value: totals.costUsd });
  if (limits.maxTotalInputTokens !== undefined && totals.inputTokens > limits.maxTotalInputTokens) {
    breaches.push({ gate: 'max-total-input-tokens', limit: limits.maxTotalInputTokens, value: totals.inputTokens });
  }
  return breaches;
}

/** A breach in `--json` output (with the policy's name in replay). */
export function breachJson(breach: Breach, policy?: string) {
  return { gate: breach.gate, limit: breach.limit, value: breach.value, ...(policy ? { policy } : {}) };
}
