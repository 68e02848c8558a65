/** Types of opencode-db.js: opencode's sessions read straight from its files. */

/** The tokens opencode recorded for one call (a `step-finish` part). */
export interface OpencodeTokens {
  readonly total?: number;
  readonly input: number;
  readonly output: number;
  readonly reasoning: number;
  readonly cache?: { readonly read?: number; readonly write?: number };
}

export interface OpencodeStoredSession {
  /** `opencode.db#<id>` or `storage#<id>`, relative to the data folder. */
  readonly address: string;
  readonly steps: readonly { readonly messageId: string; readonly summary: boolean; readonly tokens: OpencodeTokens }[];
  readonly parts: readonly Record<string, unknown>[];
  readonly prompts: number;
}

export function opencodeSessions(dataDir: string): OpencodeStoredSession[];

/** A step's tokens as the provider billed them: reasoning is output, counted once. */
export function stepUsage(tokens: OpencodeTokens): { input: number; cacheRead: number; cacheWrite: number; cacheWrite1h: number; output: number };
