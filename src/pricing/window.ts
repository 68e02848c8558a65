/**
 * The context window a session ran with, as its agent ran it: `--context-limit` when given, else
 * what the session shows (the window Codex records, Claude Code's 200K or 1M), else the agent's
 * own window for a model it was given no other (Codex, Gemini CLI), else the catalog's window
 * for the model, else pi's default, else 128,000. The catalog is read only when nothing before it
 * answers, so `estimate` and `compact` on Claude Code, Codex and Gemini CLI sessions never load
 * its 800 kB.
 */
import { DEFAULT_CONTEXT_LIMIT } from '../compaction/policy.js';
import type { AnyMessage, Session } from '../session/model.js';
import { promptTokens } from '../session/model.js';
import type { CatalogModel } from './catalog.js';
import { lookupModel } from './catalog.js';

/**
 * Where a window came from: `flag` (--context-limit), `agent` (the session shows it: Codex's
 * recorded window, or a Claude Code call above 200K of input), `claude-code-default` (200K),
 * `agent-default` (the agent's own window when the session records none: AGENT_WINDOWS),
 * `catalog` (the model's window there) or `fallback` (128,000: a file no agent wrote).
 */
export type WindowSource = 'flag' | 'agent' | 'claude-code-default' | 'agent-default' | 'catalog' | 'fallback';

export interface ContextWindow {
  readonly tokens: number;
  readonly source: WindowSource;
}

/** Claude Code runs every model at 200K unless the 1M beta is on, which only a longer prompt shows. */
export const CLAUDE_CODE_WINDOW = 200_000;
export const CLAUDE_CODE_LONG_WINDOW = 1_000_000;

/**
 * The window an agent runs a model at when its session records none, by format:
 * - Codex: 272,000 tokens less the 5% it keeps in reserve (`effective_context_window_percent`),
 *   for the gpt-5 family and for any model it has no metadata for (what 0.169 records then);
 * - Gemini CLI: its token limit (`tokenLimit`), 1,048,576 for every model;
 * - pi: a model its models.json gives no `contextWindow` runs at 128,000 (for a model it knows,
 *   the catalog's window is nearer, so the catalog is asked first).
 */
const AGENT_WINDOWS: Readonly<Record<string, { readonly tokens: number; readonly beforeCatalog: boolean }>> = {
  codex: { tokens: 258_400, beforeCatalog: true },
  'gemini-cli': { tokens: 1_048_576, beforeCatalog: true },
  pi: { tokens: 128_000, beforeCatalog: false },
};

/** The largest prompt the session's own agent sent (subagents run their own conversations). */
function largestPrompt(session: Session<AnyMessage>): number {
  let largest = 0;
  for (const message of session.messages) if (message.usage) largest = Math.max(largest, promptTokens(message.usage));
  for (const call of session.offContext) if (call.cause !== 'subagent') largest = Math.max(largest, promptTokens(call.usage));
  return largest;
}

/**
 * The window when it is known without the catalog, or null. `otherModel`: `--model` names a
 * model the session did not run on, so what the agent showed says nothing about its window.
 */
export function knownWindow(session: Session<AnyMessage>, flag: number | undefined, otherModel = false): ContextWindow | null {
  if (flag !== undefined) return { tokens: flag, source: 'flag' };
  if (otherModel) return null;
  if (session.contextWindow !== undefined && session.contextWindow > 0) return { tokens: session.contextWindow, source: 'agent' };
  if (session.format === 'claude-code') {
    return largestPrompt(session) > CLAUDE_CODE_WINDOW
      ? { tokens: CLAUDE_CODE_LONG_WINDOW, source: 'agent' }
      : { tokens: CLAUDE_CODE_WINDOW, source: 'claude-code-default' };
  }
  const own = AGENT_WINDOWS[session.format];
  return own?.beforeCatalog ? { tokens: own.tokens, source: 'agent-default' } : null;
}

/**
 * The catalog's window for a model; for one the catalog gives none, the window the session's
 * agent runs an unknown model at (Claude Code's 200K, AGENT_WINDOWS), else the 128,000 fallback.
 */
export function catalogWindow(model: CatalogModel | null, format: string): ContextWindow {
  const tokens = model?.contextWindow;
  if (tokens) return { tokens, source: 'catalog' };
  if (format === 'claude-code') return { tokens: CLAUDE_CODE_WINDOW, source: 'claude-code-default' };
  const own = AGENT_WINDOWS[format];
  return own ? { tokens: own.tokens, source: 'agent-default' } : { tokens: DEFAULT_CONTEXT_LIMIT, source: 'fallback' };
}

/**
 * The session's window. `model`: `--model`, which replaces the session's own model (and what the
 * agent showed); `catalog`: its catalog entry when the caller has already looked it up.
 */
export async function sessionWindow(
  session: Session<AnyMessage>,
  options: { readonly flag?: number | undefined; readonly model?: string | undefined; readonly catalog?: CatalogModel | null },
): Promise<ContextWindow> {
  const known = knownWindow(session, options.flag, options.model !== undefined && options.model !== session.model);
  if (known) return known;
  if (options.catalog !== undefined) return catalogWindow(options.catalog, session.format);
  const name = options.model ?? session.model;
  return catalogWindow(name ? await windowLookup(name) : null, session.format);
}

/**
 * A model's catalog entry for its window, looked up once a thread: a lookup takes about half a
 * millisecond, which adds up over an archive of small sessions on a few models. Windows are not
 * dated as prices are, so any entry for the name answers.
 */
const windowLookups = new Map<string, Promise<CatalogModel | null>>();
function windowLookup(name: string): Promise<CatalogModel | null> {
  let found = windowLookups.get(name);
  if (!found) windowLookups.set(name, (found = lookupModel(name)));
  return found;
}
