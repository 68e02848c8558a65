/** Types for install.js (installs the pinned agents and ccusage into a cache outside the repository). */
export interface AgentTools {
  readonly dir: string;
  readonly packages: Record<string, string>;
  readonly versions: Record<'claude' | 'codex' | 'pi' | 'opencode' | 'opencodeJson' | 'ccusage' | 'ccusageJs', string>;
  readonly claude: string;
  readonly codex: string;
  readonly pi: string;
  /** opencode 1.18 (SQLite) and 1.1 (JSON storage), their platform binaries. */
  readonly opencode: string;
  readonly opencodeJson: string;
  readonly ccusage: string;
  readonly ccusageJs: string;
}
export function toolsCacheRoot(env?: NodeJS.ProcessEnv): string;
export function installDir(env?: NodeJS.ProcessEnv): string;
export function agentTools(options?: { log?: (message: string) => void; env?: NodeJS.ProcessEnv }): Promise<AgentTools>;
