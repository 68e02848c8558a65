/**
 * Reading a session for a command: the one module commands (and the pipeline's stages) read a
 * session through. It returns plain values: the session's messages, full (`Message`) or slim
 * (`SlimMessage`, read/slim.ts) as the read asked, their estimates, the format the file is in,
 * the prefix hashes taken while reading. Nothing is remembered between reads: what one read
 * learns (the format, the hashes) travels as a field of its result. The sidecar beside the
 * session is not this module's: the sidecar room loads it, says what a read must take of it (a
 * plain SidecarReading) and holds it against the session read (sidecar/previous.ts).
 *
 * Commands that need no message text ask for the lean read: slim messages with estimates and
 * prefix hashes taken from each full message as the reader hands it over, so memory follows the
 * number of messages, not the size of the file. `compact` then reads again, in part
 * (readAgainInPart): full messages only at the places it names. Each read is one call into
 * formats/index.ts (readSessionFile, readAgain: the reader found and run, the nesting check,
 * the shared checks), handed plain options and the keep hook; planning and compacting are the
 * core's (compaction/).
 */
import { lazyCrypto } from '../lazy-builtins.js';
import { failOnWarnings } from '../errors.js';
import { nestingError, readAgain, readSessionFile } from '../formats/index.js';
import { renamedSource } from '../formats/convert.js';
import { holdInput, isCompressedName } from '../formats/json/input-source.js';
import type { Companions } from '../formats/reader.js';
import type { PrefixHashes } from '../session/hash.js';
import { digestOf, prefixHashesOf, updateMessageHash } from '../session/hash.js';
import type { AnyMessage, Diagnostic, Message, Session, TextSpan } from '../session/model.js';
import { allFull } from '../session/model.js';
import type { TextCounter } from '../tokens/estimate.js';
import { blockLengths, estimateAll, estimateFromLengths, estimateMessageTokens, heuristicCounter } from '../tokens/estimate.js';
import type { SessionInput, SessionSource } from './input.js';
import { sessionInput } from './input.js';
import { slimmer } from './slim.js';

export type { SessionInput, SessionSource } from './input.js';
export { sessionInput, sourcePath } from './input.js';

export interface LoadedSession<M extends AnyMessage = Message> {
  readonly session: Session<M>;
  /** The format the file was read in (`auto` resolved): a second read uses it, not detecting again. */
  readonly format: string;
  readonly tokens: readonly number[];
  /** The reader's warnings (under --strict, none: the first fails the read). */
  readonly warnings: readonly Diagnostic[];
  /**
   * Digests of the message prefixes: every one for full messages (taken when asked); for a lean
   * read, the one its sidecar stores (the messages before the sidecar's first kept message).
   */
  readonly prefixHashes: PrefixHashes;
  /**
   * A lean read whose reader handed its messages over in session order, so a second read can
   * follow that order (readAgainInPart); false for a full read.
   */
  readonly leanInOrder: boolean;
}

/**
 * What a read takes of the sidecar beside the session, as plain data (sidecar/previous.ts
 * sidecarReading): the message whose prefix the sidecar is checked by, and whether the session
 * must be read in full (a prune sidecar's saving is sized from each pruned message's text).
 */
export interface SidecarReading {
  readonly firstKeptId: string;
  readonly inFull: boolean;
}

export interface LoadOptions {
  readonly format: string;
  readonly count?: TextCounter;
  /** The sidecar the read is to be held against, or null/absent (none, or not asked for). */
  readonly sidecar?: SidecarReading | null;
  /**
   * `full` (default): messages as read. `lean`: slim messages, for what needs no text (estimate,
   * inspect, compact's planning read; compact reads again in part what it compacts).
   */
  readonly messages?: 'full' | 'lean';
  /** `--strict`: a session with any warning fails, its first warning as the error. */
  readonly strict?: boolean;
}

/** The messages a read with these options holds: full ones, or (a lean read) either kind. */
export type MessagesOf<Options extends LoadOptions> = Options extends { readonly messages: infer Mode }
  ? Mode extends 'lean'
    ? AnyMessage
    : Message
  : Message;

/**
 * Takes what a command needs of each message's text as the message is read, before the lean
 * read drops it (inspect: growth attribution). Shown every message once, in session order.
 */
export interface MessageObserver {
  /**
   * `lengths`, when given: each block's text length (tokens/estimate.ts blockLengths), taken
   * once for the message's estimate too (a tool call's arguments are serialized to size them).
   */
  observe(message: Message, lengths?: readonly number[]): void;
  /** True when `observe` reads nothing of text, thinking and tool output but its length (ReadOptions.textLengthsOnly). */
  readonly textLengthsOnly?: boolean;
  /**
   * True when `observe` reads nothing of a message's id: a copy renamed for a repeated id
   * (withUniqueIds) then has its source's facts, and the lean read need not start over.
   */
  readonly idBlind?: boolean;
  /**
   * Keeps only the observed messages at `order` (positions in observation order), in that
   * order: the session a reader settled, when it handed over messages it then dropped or moved.
   */
  select(order: readonly number[]): void;
}

/** A fresh observer for each read: a lean read that must start over in full starts a new one. */
export type ObserverFactory<Observer extends MessageObserver> = () => Observer;

/** Digests known at some prefix ends only (a lean or partial read hashed while reading). */
function knownDigests(digests: ReadonlyMap<number, string>): PrefixHashes {
  return { at: (end) => digests.get(end) };
}

const NO_DIGESTS: PrefixHashes = { at: () => undefined };

interface ReadMessages<M extends AnyMessage> {
  readonly session: Session<M>;
  readonly tokens: readonly number[];
  readonly prefixHashes: PrefixHashes;
  readonly inOrder: boolean;
}

/**
 * Reads slim messages, estimating and hashing each full message as the reader hands it over, in
 * one call to formats/ (readSessionFile: the reader found, the read, the shared checks), which
 * says the format it found. The read is the reader's full session when the reader does not take
 * the `keep` hook, and null when it changed what the hook returned (then the caller reads again
 * in full). A reader may hand
 * over messages the session then leaves out or orders otherwise (the Claude Code reader, before
 * it knows the parent chain): estimates follow each message; prefix hashes need the exact order.
 */
async function readLean(
  input: SessionInput,
  format: string,
  count: TextCounter,
  /** The sidecar's first kept message: the prefix before it is hashed to check the sidecar. */
  hashAt: string | null,
  observer: MessageObserver | null,
): Promise<{ readonly format: string; readonly read: ReadMessages<AnyMessage> | Session<AnyMessage> | null }> {
  const kept: AnyMessage[] = [];
  /** Each kept message's estimate, at its place in `kept` (a column, not a map: 8 bytes a message). */
  const keptTokens: number[] = [];
  const digests = new Map<number, string>();
  const hash = hashAt !== null ? lazyCrypto().createHash('sha256') : null;
  let stillHashing = hash !== null;
  const slim = slimmer();
  // With chars/4 estimates an observer is handed the block lengths the estimate was taken from.
  const lengths: number[] | null = observer && count === heuristicCounter ? [] : null;
  const keep = (message: Message): AnyMessage => {
    const index = kept.length;
    const stored = slim(message);
    kept.push(stored);
    if (lengths) {
      keptTokens.push(estimateFromLengths(message, blockLengths(message, lengths)));
      observer!.observe(message, lengths);
    } else {
      keptTokens.push(estimateMessageTokens(message, count));
      observer?.observe(message);
    }
    if (hash && stillHashing) {
      if (message.id === hashAt) {
        digests.set(index, digestOf(hash.copy()));
        stillHashing = false;
      } else updateMessageHash(hash, message);
    }
    return stored;
  };
  // Only lengths are read of the text when estimates are chars/4, nothing is hashed, and the observer says so.
  const textLengthsOnly = hash === null && count === heuristicCounter && (observer === null || observer.textLengthsOnly === true);
  const found = await readSessionFile(input.path, format, { keep, textLengthsOnly, ...companionsOf(input) }, input.sniffed);
  const { session } = found;
  if (kept.length === 0) return { format: found.format, read: session };
  const inOrder = session.messages.length === kept.length && session.messages.every((message, index) => message === kept[index]);
  if (inOrder) return { format: found.format, read: { session, tokens: keptTokens, prefixHashes: knownDigests(digests), inOrder } };
  // Prefix hashes follow the order `keep` saw: a reader that dropped or reordered messages (a
  // Claude Code branch) is then read again in full.
  if (hash !== null) return { format: found.format, read: null };
  // Otherwise each message's estimate is found by its place in `kept`, and an observer's facts
  // are put in session order. A copy renamed for a repeated id (withUniqueIds) has its source's
  // estimate (an id is no text); an observer that read the source's id starts the read over.
  const position = new Map(kept.map((message, index) => [message, index]));
  const order: number[] = [];
  for (const message of session.messages) {
    let index = position.get(message);
    if (index === undefined && (observer === null || observer.idBlind === true)) {
      const source = renamedSource(message);
      if (source !== undefined) index = position.get(source);
    }
    if (index === undefined) return { format: found.format, read: null };
    order.push(index);
  }
  const tokens = order.map((index) => keptTokens[index]!);
  observer?.select(order);
  return { format: found.format, read: { session, tokens, prefixHashes: NO_DIGESTS, inOrder } };
}

/** A session read in full: every message as the reader built it, and its prefix hashes on demand. */
function fullRead(session: Session, count: TextCounter): ReadMessages<Message> {
  return { session, tokens: estimateAll(session.messages, count), prefixHashes: prefixHashesOf(session.messages), inOrder: false };
}

async function readWithEstimates<Observer extends MessageObserver>(
  input: SessionInput,
  options: LoadOptions,
  newObserver: ObserverFactory<Observer> | null,
): Promise<ReadMessages<AnyMessage> & { readonly format: string; readonly observer: Observer | null }> {
  const count = options.count ?? heuristicCounter;
  const { sidecar } = options;
  const mode = sidecar?.inFull ? 'full' : (options.messages ?? 'full');
  let format = options.format;
  if (mode !== 'full') {
    const observer = newObserver?.() ?? null;
    const lean = await readLean(input, format, count, sidecar?.firstKeptId ?? null, observer);
    // A lean read redone in full takes the format it found: the file is not detected twice.
    format = lean.format;
    const { read } = lean;
    if (read && 'tokens' in read) return { ...read, format, observer };
    // A reader that does not take the hook gave every message in full.
    const messages = read?.messages;
    if (read && messages && allFull(messages)) {
      const session = { ...read, messages };
      return { ...fullRead(session, count), format, observer: observeAll(session, newObserver) };
    }
  }
  const full = await readSessionFile(input.path, format, companionsOf(input), input.sniffed);
  const { session } = full;
  return { ...fullRead(session, count), format: full.format, observer: observeAll(session, newObserver) };
}

/** The read option that hands a reader what the walk found beside the session (formats/companions.ts). */
function companionsOf(input: SessionInput): { readonly companions?: Companions } {
  return input.companions ? { companions: input.companions } : {};
}

/** A new observer shown every message of a session read in full. */
function observeAll<Observer extends MessageObserver>(session: Session, newObserver: ObserverFactory<Observer> | null): Observer | null {
  if (!newObserver) return null;
  const observer = newObserver();
  for (const message of session.messages) observer.observe(message);
  return observer;
}

/**
 * The messages a second read keeps in full, by place, as plain data (compact's: the messages its
 * compaction reads the text of, compaction/text-reads.ts): [from, to), and the places in `calls`.
 */
export interface FullPlaces {
  readonly from: number;
  readonly to: number;
  readonly calls: ReadonlySet<number>;
}

/** Whether the message at `index` is kept in full. */
export function keptInFull(places: FullPlaces, index: number): boolean {
  return (index >= places.from && index < places.to) || places.calls.has(index);
}

/** What a second read gives: the messages, those it kept in full in [from, to), and the prefix hashes it took while reading. */
export interface PartialRead {
  readonly messages: readonly AnyMessage[];
  /** Messages [from, to) of the places kept in full, in full. */
  readonly text: TextSpan;
  /** The digest of every prefix [0, end) for end from the read's `hashFrom` to the last message. */
  readonly prefixHashes: PrefixHashes;
}

/**
 * Reads a session again after a lean read (in the format that read found, so the file is not
 * detected twice), keeping full messages at the places `full` names and slim copies elsewhere:
 * compact's second read, of only the messages its compaction reads the text of
 * (compaction/text-reads.ts). Estimates, sidecar and warnings stay the lean read's, so the file
 * must give the same session, message for message in the order the hook saw them; otherwise (a
 * session still being written, a reader that moved messages) this returns null and the caller
 * reads in full. Slim messages have no text to hash: the prefix hashes a sidecar may store, of
 * the messages before any cut from `hashFrom` on, are taken here while reading (the lean read
 * planned without them, since hashing at every possible cut slowed the sessions that need no
 * compaction).
 */
export async function readAgainInPart(
  source: SessionSource,
  lean: Pick<LoadedSession<AnyMessage>, 'format' | 'session'>,
  full: FullPlaces,
  hashFrom: number,
): Promise<PartialRead | null> {
  const input = sessionInput(source);
  const kept: AnyMessage[] = [];
  const text: Message[] = [];
  const digests = new Map<number, string>();
  const hash = lazyCrypto().createHash('sha256');
  const slim = slimmer();
  const keep = (message: Message): AnyMessage => {
    const index = kept.length;
    if (index >= full.from && index < full.to) text.push(message);
    const stored = keptInFull(full, index) ? message : slim(message);
    kept.push(stored);
    if (index >= hashFrom) digests.set(index, digestOf(hash.copy()));
    updateMessageHash(hash, message);
    return stored;
  };
  // The reader the lean read found, by name: the file is not detected again.
  const { messages } = await readAgain(input.path, lean.format, { keep, ...companionsOf(input) });
  const before = lean.session.messages;
  const same =
    messages.length === before.length &&
    messages.every((message, index) => message === kept[index] && message.id === before[index]!.id && message.line === before[index]!.line);
  if (!same) return null;
  if (kept.length >= hashFrom) digests.set(kept.length, digestOf(hash));
  return { messages, text: { from: full.from, messages: text }, prefixHashes: knownDigests(digests) };
}

/** Thrown through the reader by readAgainInOrder's hook once the caller has what it needs. */
const READ_ENOUGH = Symbol('read enough');

/** What readAgainInOrder's caller may say besides the messages it visits. */
export interface ReadAgainOptions {
  /**
   * The lean read's slim messages, kept by the reader instead of new copies: a caller that holds
   * them would otherwise hold two sets while the file is read again. A reader only reads what it
   * keeps (readers copy a message to change it).
   */
  readonly leanMessages?: readonly AnyMessage[];
  /** Stop once this many messages were handed over (the rest of the file is not read). */
  readonly until?: number;
}

/**
 * Reads a session again after a lean read (in the format it found), handing each full message to
 * `visit` with its place in the order the reader hands them over, and keeping none: `context`
 * writes its view as it goes. Returns how many messages the reader handed over. A caller that
 * needs the lean read's messages checks each against it (read/skeleton.ts fitsSkeleton): the file
 * may have changed between the reads.
 */
export async function readAgainInOrder(
  source: SessionSource,
  lean: Pick<LoadedSession<AnyMessage>, 'format'>,
  visit: (message: Message, index: number) => void,
  options: ReadAgainOptions = {},
): Promise<number> {
  const input = sessionInput(source);
  const slim = slimmer();
  const { leanMessages, until = Infinity } = options;
  let count = 0;
  // The reader keeps what the hook returns until it ends: slim copies, as a lean read keeps, or the lean read's own.
  const keep = (message: Message): AnyMessage => {
    if (count >= until) throw READ_ENOUGH;
    const index = count++;
    visit(message, index);
    return leanMessages?.[index] ?? slim(message);
  };
  try {
    await readAgain(input.path, lean.format, { keep, ...companionsOf(input) });
  } catch (error) {
    if (error !== READ_ENOUGH) throw error;
  }
  return count;
}

export function loadSession<Options extends LoadOptions>(source: SessionSource, options: Options): Promise<LoadedSession<MessagesOf<Options>>>;
/** With an observer: it has seen every message of the session, full, in order. */
export function loadSession<Options extends LoadOptions, Observer extends MessageObserver>(
  source: SessionSource,
  options: Options,
  observer: ObserverFactory<Observer>,
): Promise<LoadedSession<MessagesOf<Options>> & { readonly observer: Observer }>;
export async function loadSession<Observer extends MessageObserver>(
  source: SessionSource,
  options: LoadOptions,
  newObserver?: ObserverFactory<Observer>,
): Promise<unknown> {
  const input = sessionInput(source);
  // A lean read may be redone in full: a pipe's bytes are held for both (input-source.ts). A walked
  // file its sniff opened as a regular, uncompressed one is held as such without a stat of its own
  // (the sniffed format's check stats it: one stat a session, not two).
  const release = await holdInput(input.path, input.sniffed != null && !isCompressedName(input.path));
  try {
    return await loadHeld(input, options, newObserver ?? null);
  } catch (error) {
    // Estimates and hashes taken after the read walk the values too.
    throw nestingError(input.path, error);
  } finally {
    release();
  }
}

async function loadHeld<Observer extends MessageObserver>(
  input: SessionInput,
  options: LoadOptions,
  newObserver: ObserverFactory<Observer> | null,
): Promise<LoadedSession<AnyMessage> & { readonly observer: Observer | null }> {
  const { session, format, tokens, observer, inOrder, prefixHashes } = await readWithEstimates(input, options, newObserver);
  if (options.strict) failOnWarnings(session.warnings);
  return { session, format, tokens, observer, warnings: session.warnings, prefixHashes, leanInOrder: inOrder };
}
