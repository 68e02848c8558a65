/**
 * The library's two calls from a session path: `forkSession` writes a new session file, in the
 * session's own format, that the agent continues with the compaction applied; `sessionRequestBody`
 * gives the request body an API takes for the compacted view. Both start from the compaction the
 * sidecar holds (or the agent's own last one), as `context` does: making the sidecar is
 * `compact`'s (the `fork` command runs it first). The original and its sidecar are only read; a
 * fork is a new file with a new id, written atomically. One writer per format lives beside this.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { CompactionSubject } from '../compaction/compact.js';
import { livePrevious, subjectView } from '../compaction/compact.js';
import { compactionPays } from '../compaction/policy.js';
import type { CompactionState } from '../compaction/state.js';
import { loadSession } from '../read/index.js';
import type { LoadedSession } from '../read/index.js';
import { heldSubject, loadPrevious, sidecarReading } from '../sidecar/previous.js';
import { redactMessages } from '../compaction/redact.js';
import { describeFsError, InputError } from '../errors.js';
import type { Diagnostic, Message } from '../session/model.js';
import type { RequestApi } from '../session/request-body.js';
import { requestBody } from '../session/request-body.js';
import { assertViewRules } from '../session/view-rules.js';
import { claudeCodeFork } from './claude-code.js';
import { codexFork } from './codex.js';
import { codexInheritedHistory } from './codex-parent.js';
import { piFork } from './pi.js';
import type { ForkFile, ForkWriter } from './source.js';
import { unresumableReason } from './source.js';
import { anthropicMessagesFork, canonicalFork, openAiChatFork } from './view-file.js';

export type { ForkFile, ForkSource, ForkOptions, ForkWriter } from './source.js';

/** One writer per format that can be forked; an agent's writers record the compaction its own way. */
export const FORK_WRITERS: Readonly<Record<string, ForkWriter>> = {
  'claude-code': claudeCodeFork,
  codex: codexFork,
  pi: piFork,
  canonical: canonicalFork,
  'openai-chat': openAiChatFork,
  'anthropic-messages': anthropicMessagesFork,
};

/**
 * Agents whose sessions fork refuses to write, and why in one line: opencode keeps every session
 * in its own database (or storage folder), which compactor only reads; a fork would have to be
 * written into it, and no test has shown opencode resuming one.
 */
const REFUSED: Readonly<Record<string, string>> = {
  opencode: 'cannot fork: opencode keeps its sessions in its own database, which compactor never writes; `compactor context` prints the compacted view',
  'opencode-json': 'cannot fork: opencode keeps its sessions in its own storage folder, which compactor never writes; `compactor context` prints the compacted view',
};

/** Why fork refuses a session of this format before compacting it, or null. */
export function refusedFork(session: { readonly format: string; readonly path: string }): InputError | null {
  const reason = REFUSED[session.format];
  return reason ? new InputError(reason, session.path) : null;
}

/** Formats an agent resumes: their forks copy the agent's own lines and cannot express a prune. */
const AGENT_FORMATS = new Set(['claude-code', 'codex', 'pi']);

export interface ViewOptions {
  readonly format?: string;
  readonly strict?: boolean;
  /** Mask secrets in the view (README "Secrets"). */
  readonly redact?: boolean;
  /** Shown the read's warnings before anything can fail. */
  readonly warn?: (warning: Diagnostic) => void;
}

export interface CompactedView {
  readonly loaded: LoadedSession;
  /** The session with its sidecar held against it (sidecar/previous.ts). */
  readonly subject: CompactionSubject;
  /** Our compaction, or null when there is none (the view then starts at the agent's own last one). */
  readonly state: CompactionState | null;
  /** The provider view, checked against the provider's rules. */
  readonly view: readonly Message[];
}

/** A session, its live sidecar and the view they define: what `context` prints. */
export async function loadCompactedView(path: string, options: ViewOptions = {}): Promise<CompactedView> {
  const sidecar = await loadPrevious(path);
  const loaded = await loadSession(path, { format: options.format ?? 'auto', sidecar: sidecarReading(sidecar) });
  const { subject, warnings } = heldSubject(path, loaded, sidecar, { stale: 'fail', strict: options.strict ?? false });
  warnings.forEach((warning) => options.warn?.(warning));
  // The agent's own last compaction already cut the session: its window is where the view starts.
  const state = livePrevious(subject)?.state ?? null;
  const view = subjectView(subject, state);
  assertViewRules(view, state ? 'the compacted view' : 'the provider view', path);
  return { loaded, subject, state, view: options.redact ? redactMessages(view) : view };
}

export interface RequestBodyOptions extends ViewOptions {
  /** The model to name; default: the session's own (else `unknown`). */
  readonly model?: string;
  /** Anthropic's `max_tokens`. */
  readonly maxTokens?: number;
}

/** The body of one request to `api` carrying the session's compacted view. */
export async function sessionRequestBody(path: string, api: RequestApi, options: RequestBodyOptions = {}): Promise<Record<string, unknown>> {
  const { loaded, view } = await loadCompactedView(path, options);
  const model = options.model ?? loaded.session.model ?? 'unknown';
  return requestBody(view, api, { model, ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}) });
}

export interface ForkSessionOptions {
  readonly format?: string;
  readonly strict?: boolean;
  /** Where to write the fork; default: where the agent looks (beside the original). */
  readonly outDir?: string;
  /** The fork's creation time; default: now. */
  readonly now?: Date;
  /** Write a fork that does not make the agent's request smaller by the minimum gain (`--allow-no-gain`); default: it is `no-gain`. */
  readonly allowNoGain?: boolean;
}

/** What a fork wrote, named as `fork --json` prints it. */
export interface ForkResult {
  readonly status: 'forked';
  readonly session: string;
  /** The new file. */
  readonly fork: string;
  readonly session_id: string;
  /** The command line that continues the fork (null for a message log no agent resumes). */
  readonly resume: string | null;
  /** The context before and after, as the agent sends it (the sidecar's estimates, less for Codex what it sends anyway: ForkFile.tokens). */
  readonly tokens_before: number;
  readonly tokens_after: number;
}

/** A fork not written: the agent's request would not be smaller than the original's (by the minimum gain a compaction must take off). */
export interface ForkNoGain {
  readonly status: 'no-gain';
  readonly session: string;
  readonly tokens_before: number;
  readonly tokens_after: number;
  readonly reason: string;
}

/** What `forkSession` came to: a fork written, or none because it would not pay. */
export type ForkAttempt = ForkResult | ForkNoGain;

/** The fork of a session as it would be written: checks everything, writes nothing. */
export async function planFork(path: string, options: ForkSessionOptions = {}): Promise<{ file: ForkFile; state: CompactionState; view: readonly Message[] }> {
  const { loaded, subject, state, view } = await loadCompactedView(path, options);
  const { session } = loaded;
  const writer = FORK_WRITERS[session.format];
  const refused = refusedFork(session);
  if (refused) throw refused;
  if (!writer) {
    throw new InputError(`cannot fork: ${session.format} sessions are not written (fork writes ${Object.keys(FORK_WRITERS).join(', ')})`, path);
  }
  if (!state) throw new InputError('cannot fork: the session has no compaction to apply (run compactor compact first, or compactor fork, which compacts)', path);
  if (state.pruned_outputs && AGENT_FORMATS.has(session.format)) {
    throw new InputError(`cannot fork: a prune compaction replaces tool outputs in place, which ${session.format} cannot record; compact with --strategy truncate, extract or summarize`, path);
  }
  const unresumable = unresumableReason(session);
  if (unresumable) throw unresumable;
  const firstKeptIndex = livePrevious(subject)!.firstKeptIndex;
  const inherited = session.format === 'codex' ? await codexInheritedHistory(path) : [];
  const file = writer({ path, session, state, firstKeptIndex, view, inherited }, { now: options.now ?? new Date(), ...(options.outDir ? { outDir: options.outDir } : {}) });
  return { file, state, view };
}

/**
 * Writes the fork of a session's compaction as a new session file, unless the agent's request
 * would not shrink by the minimum gain (the agent's own figures: ForkFile.tokens), which is
 * `no-gain` unless `allowNoGain`; the original and its sidecar are only read.
 */
export async function forkSession(path: string, options: ForkSessionOptions = {}): Promise<ForkAttempt> {
  const { file } = await planFork(path, options);
  const { before, after } = file.tokens;
  if (!options.allowNoGain && !compactionPays(before, after)) {
    return { status: 'no-gain', session: path, tokens_before: before, tokens_after: after, reason: 'the fork would not make the request smaller' };
  }
  try {
    if (options.outDir) mkdirSync(options.outDir, { recursive: true });
    await writeFileAtomic(file.path, file.text, { mode: 0o644 });
  } catch (error) {
    throw new InputError(`cannot write the fork: ${describeFsError(error)}`, file.path);
  }
  return {
    status: 'forked',
    session: path,
    fork: resolve(file.path),
    session_id: file.sessionId,
    resume: file.resume,
    tokens_before: before,
    tokens_after: after,
  };
}
