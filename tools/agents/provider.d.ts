/** Types for provider.js (the scripted local provider). */
export interface ScriptedUsage {
  readonly input?: number;
  readonly cacheRead?: number;
  readonly cacheWrite5m?: number;
  readonly cacheWrite1h?: number;
  readonly output?: number;
  readonly reasoning?: number;
}
export type NormalUsage = Required<ScriptedUsage>;
export interface ScriptStep {
  readonly kind?: string;
  readonly text?: string;
  readonly thinking?: string;
  readonly toolCalls?: readonly { readonly name: string; readonly input?: unknown; readonly id?: string }[];
  readonly usage?: ScriptedUsage;
  readonly hang?: boolean | { readonly afterParts?: number };
  readonly status?: number;
  readonly error?: string;
  readonly model?: string;
  readonly label?: string;
}
export interface RecordedRequest {
  readonly n: number;
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly api: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly key: 'test' | 'other' | 'none';
  readonly body: any;
  readonly kind: string | null;
  readonly role: 'none' | 'scripted' | 'side' | 'unexpected';
  readonly step: number | null;
  readonly answered: string;
  readonly disconnected: boolean;
}
export interface BilledCall {
  readonly n: number;
  readonly responseId: string;
  readonly api: string;
  readonly role: string;
  readonly step: number | null;
  readonly label: string | null;
  /** The request's kind (turn, compaction, side, …: the agent's kindOf). */
  readonly kind: string;
  readonly model: string;
  /** What the provider reported (null: a reply cut before any usage was sent). */
  readonly usage: NormalUsage | null;
  readonly toolCalls: readonly { readonly id: string; readonly name: string }[];
  /** The ids of the reply's output items (Responses API: its message and tool calls); [] for the other APIs. */
  readonly itemIds: readonly string[];
  readonly hung: boolean;
}
export interface ScriptedProvider {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  readonly calls: BilledCall[];
  pending(): number;
  append(...steps: ScriptStep[]): void;
  received(count: number): Promise<void>;
  hung(): Promise<void>;
  answered(count: number): Promise<void>;
  close(): Promise<void>;
}
export function normalUsage(usage?: ScriptedUsage): NormalUsage;
export function anthropicUsage(usage?: ScriptedUsage): Record<string, unknown>;
export function responsesUsage(usage?: ScriptedUsage): Record<string, unknown>;
export function chatUsage(usage?: ScriptedUsage): Record<string, unknown>;
export function apiOf(path: string): string;
export function defaultKindOf(request: RecordedRequest): string;
export function startScriptedProvider(options?: {
  script?: readonly ScriptStep[];
  kindOf?: (request: RecordedRequest) => string;
  sideReply?: (request: RecordedRequest) => ScriptStep | undefined;
}): Promise<ScriptedProvider>;
