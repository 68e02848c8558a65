/** Types for scenarios.js (what each agent is asked and what the provider answers). */
import type { ScriptStep } from './provider.js';
export interface Scenario {
  readonly agent: 'claude-code' | 'codex' | 'pi';
  readonly name: string;
  readonly summary: string;
  readonly expects: readonly string[];
  readonly script: readonly ScriptStep[];
  readonly env?: Record<string, string>;
  readonly setup?: Record<string, unknown>;
  readonly git?: boolean;
  /** The AgentTools binary to play it with, when not the agent's own (`codex0142`). */
  readonly bin?: string;
  play(ctx: unknown): Promise<unknown>;
}
export const SCENARIOS: readonly Scenario[];
export function smokeScenario(agent: Scenario['agent']): Scenario | undefined;
