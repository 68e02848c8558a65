/**
 * `audit` of one session in two reads, so that memory follows the number of messages and the text
 * its compactions' views show, not the whole session's text: a lean read finds the sidecar (and
 * checks it), the agent's own compactions, which calls run shell commands, and each message's
 * skeleton (read/skeleton.ts), from which the sidecar's view is decided; with `--strategy` (only
 * strategies that read no text) it also gathers every message's facts, and the strategies are
 * replayed on its slim messages. A second read hands each message over in full to
 * audit/streamed.ts and audit/simulated.ts, which keep the facts and the messages the views show.
 * Returns null when the session is read once, in full, instead (the caller then audits as
 * before): an input that cannot be read twice, a small file, a prune sidecar (read in full
 * anyway), a reader that moved messages (a Claude Code branch), and with `--strategy` a call id
 * that comes twice or after a result it would answer.
 */
import { cutView } from '../compaction/provider-view.js';
import { FactCollector, shellCommandOf } from '../compaction/facts.js';
import { heldSubject, loadPrevious, sidecarReading } from '../sidecar/previous.js';
import { recordedEnd } from '../audit/compactions.js';
import type { AuditedCompaction } from '../audit/compactions.js';
import { auditStream, sidecarAudit } from '../audit/streamed.js';
import { InputError } from '../errors.js';
import { inputShape } from '../formats/json/input-source.js';
import type { LoadedSession, MessageObserver, SessionInput } from '../read/index.js';
import { loadSession, readAgainInOrder } from '../read/index.js';
import { fitsSkeleton, SkeletonObserver } from '../read/skeleton.js';
import type { AnyMessage, Diagnostic, Message } from '../session/model.js';
import { allFull } from '../session/model.js';
import { planViewRepair } from '../session/view-repair.js';
import type { SimulatedRun } from '../audit/simulated.js';
import { FactPrefixes, simulatedAuditStream } from '../audit/simulated.js';

/** A plain file smaller than this is audited from one full read (as `context` reads one: fork/view-stream.ts). */
export const SMALL_AUDIT_BYTES = 1 << 20;

/**
 * Skeletons, and the ids of the calls whose last call with that id runs a shell command. With the
 * sidecar's first kept message named, also what its audit needs, so that a session with nothing
 * else to audit is read once: the facts of the messages before it, each result read with the
 * calls met so far (the session's last call of that id, unless an id comes twice or a call after
 * a result it would answer: `callsSettled`), and the messages from it on, in full.
 */
class AuditObserver implements MessageObserver {
  readonly skeletons = new SkeletonObserver();
  readonly shellCalls = new Set<string>();
  private readonly callIds = new Set<string>();
  /** Ids of results read before any call of theirs. */
  private readonly unanswered = new Set<string>();
  private twice = false;
  readonly facts = new FactCollector((result) => {
    if (!this.callIds.has(result.tool_request_id)) this.unanswered.add(result.tool_request_id);
    return result.is_error || this.shellCalls.has(result.tool_request_id);
  });
  /** Where the sidecar's first kept message was met (-1: not yet), and the messages from it on. */
  firstKept = -1;
  readonly kept: Message[] = [];
  private count = 0;
  /** With `allFacts`: every message's facts, for audits of cuts made after the read (simulated: audit/simulated.ts). */
  readonly prefixes: FactPrefixes | null;

  constructor(
    private readonly firstKeptId: string | null,
    allFacts = false,
  ) {
    this.prefixes = allFacts ? new FactPrefixes(this.facts) : null;
  }

  observe(message: Message): void {
    this.skeletons.observe(message);
    for (const block of message.content) {
      if (block.type !== 'tool_request') continue;
      if (this.callIds.has(block.id) || this.unanswered.has(block.id)) this.twice = true;
      this.callIds.add(block.id);
      if (shellCommandOf(block) !== null) this.shellCalls.add(block.id);
      else this.shellCalls.delete(block.id);
    }
    if (this.prefixes) this.prefixes.add(message);
    else if (this.firstKeptId !== null) {
      if (this.firstKept < 0 && message.id === this.firstKeptId) this.firstKept = this.count;
      if (this.firstKept >= 0) this.kept.push(message);
      else this.facts.add(message);
    }
    this.count++;
  }

  /** Whether each result was read with the call the whole session's last call of its id gives. */
  get callsSettled(): boolean {
    return !this.twice;
  }

  select(order: readonly number[]): void {
    this.skeletons.select(order);
  }
}

export interface StreamedAudit {
  readonly loaded: LoadedSession<AnyMessage>;
  /** The read's warnings, and the sidecar's (sidecar/previous.ts heldSubject). */
  readonly warnings: readonly Diagnostic[];
  readonly audits: readonly AuditedCompaction[];
}

/**
 * Replays the lean read's session under each strategy (`audit --strategy` with strategies that
 * read no text: replay/simulate.ts on slim messages) and gives each one's compactions.
 */
export type SimulateRuns = (loaded: LoadedSession<AnyMessage>, sessionName: string) => Promise<readonly SimulatedRun[]>;

export async function auditInTwoReads(
  input: SessionInput,
  format: string,
  smallFileBytes = SMALL_AUDIT_BYTES,
  simulate: SimulateRuns | null = null,
): Promise<StreamedAudit | null> {
  const shape = inputShape(input.path);
  if (shape.onlyOnce || shape.plain === null || shape.plain.size < smallFileBytes) return null;
  // The sidecar's first kept message, so that the lean read can take its audit as it goes (a
  // sidecar it cannot read is left to the lean read to report). A replay's compactions need the
  // second read anyway: the lean read then gathers the facts of every message instead.
  const state = await loadPrevious(input.path);
  const named = simulate === null && state && !state.pruned_outputs ? state.first_kept_message_id : null;
  const loaded = await loadSession(input, { format, sidecar: sidecarReading(state), messages: 'lean' }, () => new AuditObserver(named, simulate !== null));
  const { subject, warnings } = heldSubject(input.path, loaded, state);
  const { messages } = loaded.session;
  const previous = subject.previous;
  if (allFull(messages) || !loaded.leanInOrder || previous?.state.pruned_outputs) return null;
  const { observer } = loaded;
  // The facts were read with the calls met so far, auditReplay's with the last call of each id seen.
  if (simulate !== null && !observer.callsSettled) return null;
  const runs = simulate === null ? [] : await simulate(loaded, subject.sessionName);
  const simulated = runs.some((run) => run.compactions.length > 0) ? simulatedAuditStream(runs, observer.skeletons.skeletons, observer.prefixes!) : null;
  const skeletons = observer.skeletons.skeletons;
  const shellCalls = observer.shellCalls;
  const sidecar = previous
    ? {
        state: previous.state,
        firstKeptIndex: previous.firstKeptIndex,
        firstKeptMessageId: messages[previous.firstKeptIndex]?.id ?? null,
        view: cutView(skeletons, previous.state, planViewRepair(skeletons))!,
      }
    : null;
  const recorded = loaded.session.recordedCompactions.map((compaction) => ({
    compaction,
    end: recordedEnd(messages, compaction),
    firstKeptMessageId: messages[compaction.firstKeptIndex]?.id ?? null,
  }));
  // Nothing to audit: the full messages are never needed.
  if (!sidecar && recorded.length === 0 && !simulated) return { loaded, warnings, audits: [] };
  // Only the sidecar, and the lean read took its audit as it went: no second read.
  if (sidecar && !simulated && recorded.length === 0 && observer.callsSettled && observer.firstKept === sidecar.firstKeptIndex && sidecar.view.from === sidecar.firstKeptIndex) {
    const taken = sidecarAudit(sidecar, messages.length, observer.facts.facts, observer.kept);
    return { loaded, warnings, audits: [taken] };
  }
  const stream = sidecar || recorded.length > 0 ? auditStream({ total: messages.length, sidecar, recorded, shellCall: (id) => shellCalls.has(id) }) : null;
  const changed = () => new InputError('the session changed while it was read; run audit again', input.path);
  // Only simulated compactions: the read stops after the last call one happened before.
  const until = stream ? skeletons.length : Math.min(skeletons.length, simulated!.lastNeeded);
  const count = await readAgainInOrder(
    input,
    loaded,
    (message, index) => {
      if (index >= skeletons.length) return;
      if (!fitsSkeleton(message, skeletons[index]!)) throw changed();
      stream?.push(message, index);
      simulated?.push(message, index);
    },
    { leanMessages: messages, until },
  );
  if (count < until) throw changed();
  return { loaded, warnings, audits: [...(stream?.finish() ?? []), ...(simulated?.finish() ?? [])] };
}
