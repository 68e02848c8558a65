/**
 * The fidelity measure: what share of the facts of a compacted span (compaction/facts.ts) still
 * reaches the model afterwards, in the summary or the kept messages. Pure.
 *
 * A fact survives when its normalized text occurs in the normalized provider view after the
 * compaction; a user directive also survives as a close paraphrase (README "Fidelity" gives the
 * exact rules). Works the same for our sidecars, simulated compactions and compactions an agent
 * recorded in its session file; building each one's "after" view is left to the caller.
 */
import type { Fact, FactKind } from '../compaction/facts.js';
import { collectFacts, FACT_KINDS, FACT_MATCH_CHARS, toolRequestsById } from '../compaction/facts.js';
import type { Message } from '../session/model.js';

export interface KindCount {
  readonly found: number;
  readonly kept: number;
}

export interface FidelityReport {
  /** Kept facts / facts found, all kinds together; 1 when the span has no facts. */
  readonly retention: number;
  readonly counts: Readonly<Record<FactKind, KindCount>>;
  readonly missing: readonly Fact[];
}

/** Lower-case, NFKC, no quotes, backticks or emphasis, whitespace collapsed: markdown and quoting differences do not count. */
export function normalizeForMatch(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')
    .toLowerCase()
    .replace(/[`'"“”‘’*]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Words for paraphrase matching: letters, digits and underscores, lower-cased. */
const WORD = /[\p{L}\p{N}_]+/gu;
/** Words too common to show that a sentence was kept. */
const STOP_WORDS = new Set(
  (
    'the and for with that this these those you your are was were have has had not but can will would should could ' +
    'from into then than there their them they what when where which who why how all any each its our out about also ' +
    'just like some more now use get let make sure please want need here been being does did done very really okay'
  ).split(' '),
);
/** A paraphrase must bring back at least this share of the directive's content words… */
export const PARAPHRASE_SHARE = 2 / 3;
/** …within a stretch of the text this many times the directive's length in words (at least PARAPHRASE_MIN_WINDOW). */
const PARAPHRASE_WINDOW_FACTOR = 2;
const PARAPHRASE_MIN_WINDOW = 12;
/** Directives with fewer content words than this must be kept verbatim. */
const PARAPHRASE_MIN_CONTENT_WORDS = 3;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

function contentWords(text: string): Set<string> {
  return new Set(words(text).filter((word) => word.length >= 3 && !STOP_WORDS.has(word)));
}

function flattenStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((item) => flattenStrings(item, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((item) => flattenStrings(item, out));
}

/**
 * Everything the model reads in these messages, as plain text (tool arguments as their raw
 * strings); with `proseOnly`, just the text and thinking blocks (summaries included).
 */
export function viewText(messages: readonly Message[], proseOnly = false): string {
  const parts: string[] = [];
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'text' || block.type === 'thinking') parts.push(block.text);
      else if (proseOnly) continue;
      else if (block.type === 'tool_result') parts.push(block.output);
      else {
        parts.push(block.name);
        flattenStrings(block.arguments, parts);
      }
    }
  }
  return parts.join('\n');
}

/**
 * The view facts are looked for in, indexed once for all of them: the whole text for exact
 * matches, the prose alone for paraphrases (so a path or a line of code that happens to share
 * a directive's words does not count as keeping it).
 */
class Haystack {
  private readonly normalized: string;
  private readonly positions = new Map<string, number[]>();

  constructor(messages: readonly Message[]) {
    this.normalized = normalizeForMatch(viewText(messages));
    words(viewText(messages, true)).forEach((word, index) => {
      const list = this.positions.get(word);
      if (list) list.push(index);
      else this.positions.set(word, [index]);
    });
  }

  contains(needle: string): boolean {
    return needle.length > 0 && this.normalized.includes(needle);
  }

  /** Do enough of `wanted` occur within one window of `window` consecutive prose words? */
  clusters(wanted: ReadonlySet<string>, window: number, needed: number): boolean {
    const hits: { at: number; word: string }[] = [];
    for (const word of wanted) for (const at of this.positions.get(word) ?? []) hits.push({ at, word });
    if (new Set(hits.map((hit) => hit.word)).size < needed) return false;
    hits.sort((a, b) => a.at - b.at);
    const inWindow = new Map<string, number>();
    let left = 0;
    for (const hit of hits) {
      inWindow.set(hit.word, (inWindow.get(hit.word) ?? 0) + 1);
      while (hit.at - hits[left]!.at >= window) {
        const old = hits[left++]!.word;
        const remaining = inWindow.get(old)! - 1;
        if (remaining === 0) inWindow.delete(old);
        else inWindow.set(old, remaining);
      }
      if (inWindow.size >= needed) return true;
    }
    return false;
  }
}

/** The last two segments of a path (`src/gateway.rs`), when it has more. */
function pathTail(path: string): string | null {
  const segments = path.split(/[\\/]/).filter((segment) => segment.length > 0);
  return segments.length > 2 ? segments.slice(-2).join('/') : null;
}

function survives(fact: Fact, haystack: Haystack): boolean {
  const key = normalizeForMatch(fact.text).slice(0, FACT_MATCH_CHARS);
  if (haystack.contains(key)) return true;
  if (fact.kind === 'file') {
    const tail = pathTail(fact.text);
    return tail !== null && haystack.contains(normalizeForMatch(tail));
  }
  if (fact.kind === 'directive') {
    const wanted = contentWords(fact.text);
    if (wanted.size < PARAPHRASE_MIN_CONTENT_WORDS) return false;
    const window = Math.max(PARAPHRASE_MIN_WINDOW, PARAPHRASE_WINDOW_FACTOR * words(fact.text).length);
    return haystack.clusters(wanted, window, Math.ceil(wanted.size * PARAPHRASE_SHARE));
  }
  return false;
}

/** Which of `facts` survive in `after`. */
export function measureRetention(facts: readonly Fact[], after: readonly Message[]): FidelityReport {
  const haystack = new Haystack(after);
  const counts = Object.fromEntries(FACT_KINDS.map((kind) => [kind, { found: 0, kept: 0 }])) as Record<FactKind, { found: number; kept: number }>;
  const missing: Fact[] = [];
  for (const fact of facts) {
    counts[fact.kind].found++;
    if (survives(fact, haystack)) counts[fact.kind].kept++;
    else missing.push(fact);
  }
  const found = facts.length;
  return { retention: found === 0 ? 1 : (found - missing.length) / found, counts, missing };
}

/**
 * Audits one compaction: the facts of `messages[0, firstKeptIndex)` against `after`, the
 * messages the provider sees once it is applied. `skip` leaves out messages that are not the
 * conversation (an agent's own earlier summary recorded as a user message).
 */
export function auditCompaction(
  messages: readonly Message[],
  firstKeptIndex: number,
  after: readonly Message[],
  skip: (message: Message) => boolean = () => false,
): FidelityReport {
  const span = messages.slice(0, firstKeptIndex).filter((message) => !skip(message));
  return measureRetention(collectFacts(span, toolRequestsById(messages)), after);
}
