/** Types for agents.js (how each agent is set up, pointed at the local provider, and found on disk). */
import type { RecordedRequest, ScriptedProvider } from './provider.js';

export const API_KEY: string;
export function filesUnder(dir: string): string[];

interface Agent {
  readonly name: string;
  readonly package: string;
  readonly bin: string;
  readonly model: string;
  env(home: string, provider?: ScriptedProvider, extra?: Record<string, string>): Record<string, string>;
  kindOf(request: RecordedRequest): string;
  sessionsDir(home: string): string;
}
export const claudeCode: Agent & {
  setup(home: string): void;
  projectSlug(cwd: string): string;
};
export const codex: Agent & {
  setup(home: string, provider: ScriptedProvider, options?: { readonly autoCompactLimit?: number }): void;
  sessionId(output: string): string | null;
};
export const pi: Agent & {
  readonly provider: string;
  setup(home: string, provider: ScriptedProvider, options?: { readonly contextWindow?: number; readonly keepRecentTokens?: number }): void;
  args(...rest: string[]): string[];
};
export const AGENTS: Record<string, typeof claudeCode | typeof codex | typeof pi>;
