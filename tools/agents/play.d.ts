/** Types for play.js (plays one scenario for real against the scripted provider). */
import type { AgentTools } from './install.js';
import type { BilledCall, ScriptedProvider } from './provider.js';
import type { Scenario } from './scenarios.js';
export interface PlayedCall extends BilledCall {
  /** The session file (relative to the agent's home folder layout) that recorded the call when it was made; null: none. */
  readonly billedIn: string | null;
  /** Files that repeat the call later (a fork). */
  readonly copiedTo: readonly string[];
}
export interface Played {
  readonly agent: { readonly name: string; readonly bin: string };
  /** The AgentTools binary that played it (the agent's own unless the scenario names another). */
  readonly bin: string;
  readonly home: string;
  readonly provider: ScriptedProvider;
  readonly commands: readonly {
    readonly command: string;
    readonly exit?: number | null;
    readonly signal?: string | null;
    /** A terminal UI's run: the keystrokes typed into it. */
    readonly terminal?: true;
    readonly typed?: readonly string[];
  }[];
  readonly calls: readonly PlayedCall[];
  readonly files: readonly { readonly path: string; readonly absolute: string }[];
  readonly env: Record<string, string>;
}
export function prepareProject(cwd: string, options?: { git?: boolean }): void;
export function playScenario(scenario: Scenario, options: { tools: AgentTools; cwd: string; home?: string }): Promise<Played>;
