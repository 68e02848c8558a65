/**
 * `context`'s view written in two reads, so that memory follows the number of messages, not their
 * text: a lean read decides the view on skeletons (read/skeleton.ts: the sidecar and its
 * freshness, the cut, the repair of the session's tool pairing, the provider's rules, which fail
 * before anything is written), and a second read hands each message of the view over in full, to
 * be written and dropped (session/view-repair.ts repairStream). A compacted session whose kept
 * messages are small (KEPT_TEXT_BUDGET) is written from the lean read alone, which kept them. The
 * bytes are those of the view loadCompactedView builds whole.
 *
 * Read once, in full, as loadCompactedView does: an input that cannot be read twice (stdin, a
 * pipe), a small file (one read beats two, and its messages cost little), a prune sidecar (the
 * lean read reads it in full anyway), and a reader that moved messages (a Claude Code branch: the
 * second read's order is not the session's).
 */
import { livePrevious, subjectWindow } from '../compaction/compact.js';
import { buildProviderContext, cutView } from '../compaction/provider-view.js';
import { redactMessage } from '../compaction/redact.js';
import { InputError } from '../errors.js';
import { inputShape, withHeldInput } from '../formats/json/input-source.js';
import { loadSession, readAgainInOrder } from '../read/index.js';
import type { Skeleton } from '../read/skeleton.js';
import { fitsSkeleton, SkeletonObserver } from '../read/skeleton.js';
import type { Message } from '../session/model.js';
import { allFull } from '../session/model.js';
import type { ViewRepair } from '../session/view-repair.js';
import { applyViewRepair, planViewRepair, repairStream } from '../session/view-repair.js';
import { heldSubject, loadPrevious, sidecarReading } from '../sidecar/previous.js';
import { assertViewRules } from '../session/view-rules.js';
import type { ViewOptions } from './index.js';
import { loadCompactedView } from './index.js';

/**
 * A plain file smaller than this is read once, in full: its full messages take a few megabytes,
 * and one read and parse costs half of two (compact reads once under 256 KB, SMALL_SESSION_BYTES,
 * where its second read is only in part).
 */
export const SMALL_VIEW_BYTES = 1 << 20;

/** Where the view goes: told what precedes its messages once it is checked, then each message in order. */
export interface ViewSink {
  /** The session's model and the view's system messages (Anthropic's body names them first). */
  start(head: { readonly model: string | undefined; readonly system: readonly Message[] }): void;
  message(message: Message): void;
  end(): void;
}

export interface ViewStreamOptions extends ViewOptions {
  /** Plain files under this are read once, in full (default SMALL_VIEW_BYTES; 0: never, as tests ask). */
  readonly smallFileBytes?: number;
  /** The kept text a lean read holds to write a compacted view alone (default KEPT_TEXT_BUDGET; -1: none, as tests ask). */
  readonly keptTextBudget?: number;
}

/**
 * Text a lean read keeps of a sidecar's kept messages, in UTF-16 units (about a million tokens at
 * chars/4, far above what `--keep-recent` keeps): under it, the view is written from that one
 * read; over it, the kept messages are dropped and the session read again.
 */
export const KEPT_TEXT_BUDGET = 4 << 20;

/**
 * Skeletons, and, the sidecar's first kept message named, the messages from it on in full while
 * their text stays within KEPT_TEXT_BUDGET: a compacted session's view is then written from the
 * lean read alone (its kept part is what `--keep-recent` leaves, small), with memory bounded.
 */
class ViewObserver extends SkeletonObserver {
  /** Where the named message was met (-1: not yet, or the budget was spent), and the messages from it on. */
  firstKept = -1;
  shown: Message[] = [];
  private text = 0;
  private count = 0;
  private spent = false;

  constructor(
    private readonly firstKeptId: string | null,
    private readonly budget: number,
  ) {
    super();
  }

  override observe(message: Message): void {
    super.observe(message);
    if (this.firstKeptId !== null && !this.spent) {
      if (this.firstKept < 0 && message.id === this.firstKeptId) this.firstKept = this.count;
      if (this.firstKept >= 0) {
        for (const block of message.content) this.text += block.type === 'tool_result' ? block.output.length : block.type === 'tool_request' ? 0 : block.text.length;
        if (this.text > this.budget) {
          this.spent = true;
          this.firstKept = -1;
          this.shown = [];
        } else this.shown.push(message);
      }
    }
    this.count++;
  }
}

/** What the second read needs of the first: the view decided, without the session's messages. */
interface ViewPlan {
  readonly model: string | undefined;
  readonly format: string;
  /** The view's synthetic head (the summary pair) and system messages, in full. */
  readonly summary: readonly Message[];
  readonly system: readonly Message[];
  /** The window's first message in the session, and the view's messages of it: window indexes [from, stop). */
  readonly windowStart: number;
  readonly from: number;
  readonly stop: number;
  readonly repair: ViewRepair;
  /** The skeletons of window messages [from, stop), to check the second read against. */
  readonly shown: readonly Skeleton[];
}

/** Writes the compacted view of the session at `path` to `sink`, as loadCompactedView gives it (redacted when asked). */
export async function writeCompactedView(path: string, options: ViewStreamOptions, sink: ViewSink): Promise<void> {
  const shape = inputShape(path);
  const small = shape.plain !== null && shape.plain.size < (options.smallFileBytes ?? SMALL_VIEW_BYTES);
  if (shape.onlyOnce || small) return writeWhole(path, options, sink);
  await withHeldInput(
    path,
    async () => {
      const plan = await planView(path, options);
      if (plan === 'in full') return writeWhole(path, { ...options, warn: () => {} }, sink);
      if ('view' in plan) return writeView(plan.view, plan.model, options, sink);
      await writeStreamed(path, plan, options, sink);
    },
    shape.plain !== null,
  );
}

const shown = (options: ViewOptions) => (message: Message) => (options.redact ? redactMessage(message) : message);

function writeView(view: readonly Message[], model: string | undefined, options: ViewOptions, sink: ViewSink): void {
  const show = shown(options);
  sink.start({ model, system: view.filter((message) => message.role === 'system').map(show) });
  for (const message of view) sink.message(show(message));
  sink.end();
}

async function writeWhole(path: string, options: ViewOptions, sink: ViewSink): Promise<void> {
  const { loaded, view } = await loadCompactedView(path, { ...options, redact: false });
  writeView(view, loaded.session.model, options, sink);
}

/**
 * The lean read and the view it decides; the view itself when the read gave full messages, or
 * `in full` when the session must be read again whole. Returns no message list of the session,
 * so that the second read does not hold the first's.
 */
async function planView(path: string, options: ViewStreamOptions): Promise<ViewPlan | { readonly view: readonly Message[]; readonly model: string | undefined } | 'in full'> {
  // The sidecar's first kept message, for the lean read to keep what the view shows (a sidecar it
  // cannot read is left to the lean read to report).
  const sidecar = await loadPrevious(path);
  const named = sidecar && !sidecar.pruned_outputs ? sidecar.first_kept_message_id : null;
  const loaded = await loadSession(
    path,
    { format: options.format ?? 'auto', sidecar: sidecarReading(sidecar), messages: 'lean' },
    () => new ViewObserver(named, options.keptTextBudget ?? KEPT_TEXT_BUDGET),
  );
  const { subject, warnings } = heldSubject(path, loaded, sidecar, { stale: 'fail', strict: options.strict ?? false });
  warnings.forEach((warning) => options.warn?.(warning));
  const state = livePrevious(subject)?.state ?? null;
  const what = state ? 'the compacted view' : 'the provider view';
  const { messages } = loaded.session;
  if (allFull(messages)) {
    const view = buildProviderContext(subjectWindow({ ...subject, messages }).messages, state);
    assertViewRules(view, what, path);
    return { view, model: loaded.session.model };
  }
  if (!loaded.leanInOrder) return 'in full';
  const window = subjectWindow({ ...subject, messages: loaded.observer.skeletons });
  const repair = planViewRepair(window.messages);
  const cut = cutView(window.messages, state, repair);
  // A prune rewrites messages in place: its sidecar made the read full, above.
  if (!cut) return 'in full';
  const view = buildProviderContext(window.messages, state, repair);
  assertViewRules(view, what, path);
  // The lean read kept the view's messages: the view is written from them.
  const { observer } = loaded;
  if (state && observer.firstKept >= 0 && observer.firstKept === window.start + cut.from && observer.firstKept + observer.shown.length >= window.start + window.messages.length) {
    const kept = observer.shown.slice(0, window.messages.length - cut.from);
    return { view: [...cut.summary, ...applyViewRepair(kept, cut.from, repair)], model: loaded.session.model };
  }
  return {
    model: loaded.session.model,
    format: loaded.format,
    summary: cut.summary,
    system: view.filter((message) => message.role === 'system'),
    windowStart: window.start,
    from: cut.from,
    stop: window.messages.length,
    repair,
    shown: window.messages.slice(cut.from),
  };
}

function changed(path: string): InputError {
  return new InputError('the session changed while it was read; run context again', path);
}

/** The second read: each message of the view in full as it comes, repaired, to the sink. */
async function writeStreamed(path: string, plan: ViewPlan, options: ViewOptions, sink: ViewSink): Promise<void> {
  const show = shown(options);
  sink.start({ model: plan.model, system: plan.system.map(show) });
  for (const message of plan.summary) sink.message(show(message));
  const stream = repairStream<Message>(plan.from, plan.stop, plan.repair, (message) => sink.message(show(message)));
  const first = plan.windowStart + plan.from;
  const count = await readAgainInOrder(path, plan, (message, index) => {
    const at = index - plan.windowStart;
    if (index < first || at >= plan.stop) return;
    if (!fitsSkeleton(message, plan.shown[at - plan.from]!)) throw changed(path);
    stream.push(message, at);
  });
  if (count < plan.windowStart + plan.stop) throw changed(path);
  sink.end();
}
