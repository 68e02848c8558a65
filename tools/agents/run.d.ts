/** Types for run.js (running an agent's command line to its end). */
export interface AgentRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly interrupted: boolean;
  readonly timedOut: boolean;
}
export interface RunAgentOptions {
  readonly bin: string;
  readonly args: readonly string[];
  readonly env: Record<string, string | undefined>;
  readonly cwd?: string;
  readonly timeoutMs?: number;
  readonly input?: string;
  readonly interruptWhen?: Promise<unknown>;
  readonly interruptSignal?: NodeJS.Signals;
}
export function runAgent(options: RunAgentOptions): Promise<AgentRun>;
export function commandLine(name: string, args: readonly string[]): string;
export function startRpcAgent(options: Omit<RunAgentOptions, 'input' | 'interruptWhen' | 'interruptSignal'>): {
  exchange(command: unknown, ...tests: ((event: unknown) => boolean)[]): Promise<unknown[]>;
  readonly events: unknown[];
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
};
export function startTerminalAgent(
  options: Omit<RunAgentOptions, 'input' | 'interruptWhen' | 'interruptSignal'> & { readonly columns?: number; readonly rows?: number },
): {
  readonly output: string;
  type(text: string): void;
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
};
