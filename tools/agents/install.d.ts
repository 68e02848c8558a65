/** Types for install.js (installs the pinned agents and ccusage into a cache outside the repository). */
export interface AgentTools {
  readonly dir: string;
  readonly packages: Record<string, string>;
  readonly versions: Record<AgentBinary | 'ccusage' | 'ccusageJs', string>;
  readonly claude: string;
  readonly codex: string;
  /** Codex 0.142.0 (package alias `codex-0142`). */
  readonly codex0142: string;
  readonly pi: string;
  readonly ccusage: string;
  readonly ccusageJs: string;
}
/** The agents' binaries, by the name AgentTools gives their paths. */
export type AgentBinary = 'claude' | 'codex' | 'codex0142' | 'pi';
export function packageOf(packages: Record<string, string>, bin: string): string;
export function toolsCacheRoot(env?: NodeJS.ProcessEnv): string;
export function installDir(env?: NodeJS.ProcessEnv): string;
export function agentTools(options?: { log?: (message: string) => void; env?: NodeJS.ProcessEnv }): Promise<AgentTools>;
