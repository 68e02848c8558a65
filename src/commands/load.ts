/**
 * Loading a session for a command: read it, estimate its messages, and attach its sidecar
 * when one exists and still matches the session. Commands that need no message text ask for
 * the lean read: slim messages (session/slim.ts) with estimates and prefix hashes taken while
 * reading, so memory follows the number of messages, not the size of the file.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { CompactionSubject } from '../compaction/compact.js';
import { livePrevious } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { InputError } from '../errors.js';
import { readSession, resolveFormat } from '../formats/index.js';
import { rememberPrefixHash, updateMessageHash } from '../session/hash.js';
import type { Diagnostic, Message, Session } from '../session/model.js';
import { slimMessage } from '../session/slim.js';
import { loadSidecar, sidecarPath } from '../sidecar/store.js';
import { checkFreshness } from '../sidecar/staleness.js';
import type { TextCounter } from '../tokens/estimate.js';
import { estimateAll, estimateMessageTokens, heuristicCounter } from '../tokens/estimate.js';

export interface LoadedSession {
  readonly session: Session;
  readonly tokens: readonly number[];
  /** The subject the compaction core works on (previous = a fresh sidecar). */
  readonly subject: CompactionSubject;
  readonly warnings: readonly Diagnostic[];
  /**
   * A lean read whose reader handed its messages over in session order, so a second read can
   * follow that order (compact's rereadInPart); false for a full read.
   */
  readonly leanInOrder: boolean;
}

export interface LoadOptions {
  readonly format: string;
  readonly count?: TextCounter;
  /** Whether to read the sidecar (commands that report the raw session do not). */
  readonly withSidecar: boolean;
  /**
   * A sidecar that no longer matches the session: `recompact` (default), a warning that the
   * compaction starts from scratch; `fail`, the session's one error (`context`, which only shows
   * the sidecar's view, has nothing to fall back on).
   */
  readonly staleSidecar?: 'recompact' | 'fail';
  /**
   * `full` (default): messages as read. `lean`: slim messages, for what needs no text (estimate,
   * inspect, compact's planning read; compact hashes the one prefix it stores in its second
   * read, rereadInPart).
   */
  readonly messages?: 'full' | 'lean';
  /** `--strict`: a session with any warning fails, its first warning as the error. */
  readonly strict?: boolean;
}

/**
 * Takes what a command needs of each message's text as the message is read, before the lean
 * read drops it (inspect: growth attribution). Shown every message once, in session order.
 */
export interface MessageObserver {
  observe(message: Message): void;
  /**
   * Keeps only the observed messages at `order` (positions in observation order), in that
   * order: the session a reader settled, when it handed over messages it then dropped or moved.
   */
  select(order: readonly number[]): void;
}

/** A fresh observer for each read: a lean read that must start over in full starts a new one. */
export type ObserverFactory<Observer extends MessageObserver> = () => Observer;

/** Under --strict the first warning becomes the session's one-line error. */
function failOnWarnings(warnings: readonly Diagnostic[]): void {
  const first = warnings[0];
  if (!first) return;
  const more = warnings.length > 1 ? `, and ${warnings.length - 1} more warning${warnings.length > 2 ? 's' : ''}` : '';
  throw new InputError(`${first.message} (--strict${more})`, first.file, first.line);
}

/**
 * Reads slim messages, estimating and hashing each full message as the reader hands it over.
 * Returns the reader's full session when the reader does not take the `keep` hook, and null
 * when it changed what the hook returned (then the caller reads again in full). A reader may hand
 * over messages the session then leaves out or orders otherwise (the Claude Code reader, before
 * it knows the parent chain): estimates follow each message; prefix hashes need the exact order.
 */
async function readLean(
  path: string,
  format: string,
  count: TextCounter,
  /** The sidecar's first kept message: the prefix before it is hashed to check the sidecar. */
  hashAt: string | null,
  observer: MessageObserver | null,
): Promise<{ session: Session; tokens: number[]; inOrder: boolean } | Session | null> {
  const kept: Message[] = [];
  const tokensOf = new Map<Message, number>();
  const hash = hashAt !== null ? createHash('sha256') : null;
  let stillHashing = hash !== null;
  const keep = (message: Message): Message => {
    const index = kept.length;
    const slim = slimMessage(message);
    kept.push(slim);
    tokensOf.set(slim, estimateMessageTokens(message, count));
    observer?.observe(message);
    if (hash && stillHashing) {
      if (message.id === hashAt) {
        rememberPrefixHash(slim, index, hash);
        stillHashing = false;
      } else updateMessageHash(hash, message);
    }
    return slim;
  };
  const session = await readSession(path, format, { keep });
  if (kept.length === 0) return session;
  const tokens = session.messages.map((message) => tokensOf.get(message));
  if (!tokens.every((count) => count !== undefined)) return null;
  const inOrder = session.messages.length === kept.length && session.messages.every((message, index) => message === kept[index]);
  if (inOrder) return { session, tokens, inOrder };
  // Prefix hashes follow the order `keep` saw: a reader that dropped or reordered messages (a
  // Claude Code branch) is then read again in full. An observer's facts are put in session order.
  if (hash !== null) return null;
  if (observer) {
    const position = new Map(kept.map((message, index) => [message, index]));
    observer.select(session.messages.map((message) => position.get(message)!));
  }
  return { session, tokens, inOrder };
}

async function readWithEstimates<Observer extends MessageObserver>(
  path: string,
  options: LoadOptions,
  sidecar: CompactionState | null,
  newObserver: ObserverFactory<Observer> | null,
): Promise<{ session: Session; tokens: readonly number[]; observer: Observer | null; inOrder?: boolean }> {
  const count = options.count ?? heuristicCounter;
  const mode = options.messages ?? 'full';
  // A lean read may have to read again in full: the format is detected once for both.
  const format = mode === 'full' ? options.format : await resolveFormat(path, options.format);
  if (mode !== 'full') {
    const observer = newObserver?.() ?? null;
    const lean = await readLean(path, format, count, sidecar?.first_kept_message_id ?? null, observer);
    if (lean && 'tokens' in lean) return { ...lean, observer };
    if (lean) return { session: lean, tokens: estimateAll(lean.messages, count), observer: observeAll(lean, newObserver) };
  }
  const session = await readSession(path, format);
  return { session, tokens: estimateAll(session.messages, count), observer: observeAll(session, newObserver) };
}

/** A new observer shown every message of a session read in full. */
function observeAll<Observer extends MessageObserver>(session: Session, newObserver: ObserverFactory<Observer> | null): Observer | null {
  if (!newObserver) return null;
  const observer = newObserver();
  for (const message of session.messages) observer.observe(message);
  return observer;
}

/**
 * Reads a session again after a lean read (in the `format` that read found, so the file is not
 * detected twice), keeping full messages where `full(index)` says and
 * slim copies elsewhere: compact's second read, of only the messages its compaction reads the
 * text of (compaction/text-reads.ts). Estimates, sidecar and warnings stay the lean read's, so
 * the file must give the same session, message for message in the order the hook saw them;
 * otherwise (a session still being written, a reader that moved messages) this returns null and
 * the caller reads in full. Slim text cannot be hashed: the prefix hash the sidecar stores, of
 * the messages before `hashAt`, is taken here while reading (the lean read planned without it,
 * since hashing at every possible cut slowed the sessions that need no compaction).
 */
export async function rereadInPart(
  path: string,
  format: string,
  lean: readonly Message[],
  full: (index: number) => boolean,
  hashAt: number,
): Promise<readonly Message[] | null> {
  const kept: Message[] = [];
  const hash = createHash('sha256');
  const keep = (message: Message): Message => {
    const index = kept.length;
    const stored = full(index) ? message : slimMessage(message);
    kept.push(stored);
    if (index < hashAt) updateMessageHash(hash, message);
    else if (index === hashAt) rememberPrefixHash(stored, index, hash);
    return stored;
  };
  const { messages } = await readSession(path, format, { keep });
  const same =
    messages.length === lean.length &&
    messages.every((message, index) => message === kept[index] && message.id === lean[index]!.id && message.line === lean[index]!.line);
  return same ? messages : null;
}

export function loadSession(path: string, options: LoadOptions): Promise<LoadedSession>;
/** With an observer: it has seen every message of the session, full, in order. */
export function loadSession<Observer extends MessageObserver>(
  path: string,
  options: LoadOptions,
  observer: ObserverFactory<Observer>,
): Promise<LoadedSession & { readonly observer: Observer }>;
export async function loadSession<Observer extends MessageObserver>(
  path: string,
  options: LoadOptions,
  newObserver?: ObserverFactory<Observer>,
): Promise<LoadedSession & { readonly observer: Observer | null }> {
  const state = options.withSidecar ? await loadSidecar(path) : null;
  const { session, tokens, observer, inOrder } = await readWithEstimates(path, options, state, newObserver ?? null);
  const warnings: Diagnostic[] = [...session.warnings];
  let previous: CompactionSubject['previous'] = null;
  if (state) {
    const freshness = checkFreshness(state, session.messages);
    if (freshness.kind === 'fresh') previous = { state, firstKeptIndex: freshness.firstKeptIndex };
    else if (options.staleSidecar === 'fail') throw new InputError(`stale sidecar (${freshness.reason}); run compact again`, sidecarPath(path));
    else warnings.push({ file: sidecarPath(path), message: `stale sidecar (${freshness.reason}); compacting from scratch` });
  }
  const subject: CompactionSubject = {
    sessionName: basename(path),
    messages: session.messages,
    tokens,
    previous,
    recorded: session.recordedCompactions,
  };
  if (previous && !livePrevious(subject)) {
    warnings.push({ file: sidecarPath(path), message: 'the agent compacted the session past this sidecar; starting from its compaction' });
  }
  if (options.strict) failOnWarnings(warnings);
  return {
    session,
    tokens,
    observer,
    subject,
    warnings,
    leanInOrder: inOrder ?? false,
  };
}
