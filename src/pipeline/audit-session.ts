/**
 * `audit` of one session without `--strategy`, in two reads, so that memory follows the number of
 * messages and the text its compactions' views show, not the whole session's text: a lean read
 * finds the sidecar (and checks it), the agent's own compactions, which calls run shell commands,
 * and each message's skeleton (read/skeleton.ts), from which the sidecar's view is decided; a
 * second read hands each message over in full to audit/streamed.ts, which keeps the facts and the
 * messages the views show. Returns null when the session is read once, in full, instead (the
 * caller then audits as before): an input that cannot be read twice, a small file, a prune
 * sidecar (read in full anyway), a reader that moved messages (a Claude Code branch).
 */
import { cutView } from '../compaction/provider-view.js';
import { shellCommandOf } from '../compaction/facts.js';
import { recordedEnd } from '../audit/compactions.js';
import type { AuditedCompaction } from '../audit/compactions.js';
import { auditStream } from '../audit/streamed.js';
import { InputError } from '../errors.js';
import { inputShape } from '../formats/input-source.js';
import type { LoadedSession, MessageObserver, SessionInput } from '../read/index.js';
import { loadSession, readAgainInOrder } from '../read/index.js';
import { fitsSkeleton, SkeletonObserver } from '../read/skeleton.js';
import type { AnyMessage, Message } from '../session/model.js';
import { allFull } from '../session/model.js';
import { planViewRepair } from '../session/view-repair.js';

/** A plain file smaller than this is audited from one full read (as `context` reads one: fork/view-stream.ts). */
export const SMALL_AUDIT_BYTES = 1 << 20;

/** Skeletons, and the ids of the calls whose last call with that id runs a shell command. */
class AuditObserver implements MessageObserver {
  readonly skeletons = new SkeletonObserver();
  readonly shellCalls = new Set<string>();

  observe(message: Message): void {
    this.skeletons.observe(message);
    for (const block of message.content) {
      if (block.type !== 'tool_request') continue;
      if (shellCommandOf(block) !== null) this.shellCalls.add(block.id);
      else this.shellCalls.delete(block.id);
    }
  }

  select(order: readonly number[]): void {
    this.skeletons.select(order);
  }
}

export interface StreamedAudit {
  readonly loaded: LoadedSession<AnyMessage>;
  readonly audits: readonly AuditedCompaction[];
}

export async function auditInTwoReads(input: SessionInput, format: string, smallFileBytes = SMALL_AUDIT_BYTES): Promise<StreamedAudit | null> {
  const shape = inputShape(input.path);
  if (shape.onlyOnce || shape.plain === null || shape.plain.size < smallFileBytes) return null;
  const loaded = await loadSession(input, { format, withSidecar: true, messages: 'lean' }, () => new AuditObserver());
  const { messages } = loaded.session;
  const previous = loaded.subject.previous;
  if (allFull(messages) || !loaded.leanInOrder || previous?.state.pruned_outputs) return null;
  const skeletons = loaded.observer.skeletons.skeletons;
  const shellCalls = loaded.observer.shellCalls;
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
  if (!sidecar && recorded.length === 0) return { loaded, audits: [] };
  const stream = auditStream({ total: messages.length, sidecar, recorded, shellCall: (id) => shellCalls.has(id) });
  const changed = () => new InputError('the session changed while it was read; run audit again', input.path);
  const count = await readAgainInOrder(input, loaded, (message, index) => {
    if (index >= skeletons.length) return;
    if (!fitsSkeleton(message, skeletons[index]!)) throw changed();
    stream.push(message, index);
  });
  if (count < skeletons.length) throw changed();
  return { loaded, audits: stream.finish() };
}
