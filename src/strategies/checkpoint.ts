/**
 * Renders an extract state as the structured checkpoint the LLM summary also uses (Goal,
 * Constraints & Preferences, Progress, Key Decisions, Next Steps, Critical Context, then the file
 * lists), within a size budget. Pure and deterministic.
 *
 * When the text is over budget, the least needed items go first, oldest first: the assistant's
 * decisions, the constraints list (its sentences are also in the requests), successful
 * commands, failed commands, error lines, an earlier summary, then long earlier requests are
 * shortened and finally dropped. Every removal leaves a line saying how many items went.
 */
import { directivesOf } from '../compaction/facts.js';
import { CHARS_PER_TOKEN } from '../tokens/estimate.js';
import type { CommandRun, ExtractState } from './extract-state.js';

/** User sentences that set a constraint or state a preference. */
const CONSTRAINT =
  /\b(?:don't|do not|never|always|must|mustn't|should|shouldn't|keep|only|avoid|make sure|prefer|without|instead|unless|require[sd]?)\b/i;
/** An error line longer than this is cut in the checkpoint (the fact is matched on its head). */
const MAX_ERROR_CHARS = 500;
/** Earlier requests are cut to this length before they are dropped. */
const SHORTENED_REQUEST_CHARS = 300;
/** The turn prefix's summary may use up to this share of the budget. */
const TURN_PREFIX_SHARE = 4;

type Countable = 'decisions' | 'constraints' | 'commands' | 'errors' | 'done';

/** The checkpoint's items, trimmed in place while over budget. */
interface View {
  goal: string | null;
  done: string[];
  inProgress: string | null;
  constraints: string[];
  commands: CommandRun[];
  errors: string[];
  decisions: string[];
  earlier: string | null;
  shortened: number;
  omitted: Record<Countable, number>;
}

function viewOf(state: ExtractState, requestsAreHistory: boolean): View {
  const [goal = null, ...rest] = requestsAreHistory ? state.requests : [];
  const inProgress = rest.length > 0 ? rest[rest.length - 1]! : null;
  const constraints = [...new Set(state.requests.flatMap((request) => directivesOf(request)).filter((s) => CONSTRAINT.test(s)))];
  return {
    goal: requestsAreHistory ? goal : (state.requests[state.requests.length - 1] ?? null),
    done: rest.slice(0, -1),
    inProgress,
    constraints,
    commands: [...state.commands],
    errors: [...state.errors],
    decisions: [...state.decisions],
    earlier: state.earlier,
    shortened: 0,
    omitted: { decisions: 0, constraints: 0, commands: 0, errors: 0, done: 0 },
  };
}

const indent = (text: string, by: string) => text.split('\n').join(`\n${by}`);
const commandLine = (run: CommandRun) => `\`${run.command}\` → ${run.outcome}${run.runs > 1 ? ` (${run.runs} runs)` : ''}`;
const errorLine = (line: string) => (line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS)}…` : line);
const failed = (run: CommandRun) => !(run.outcome === 'ok' || run.outcome === 'exit 0');
const omittedLine = (count: number, what: string) => (count > 0 ? [`- … ${count} older ${what} omitted for size`] : []);

function list(items: readonly string[], empty: string): string[] {
  return items.length > 0 ? items.map((item) => `- ${indent(item, '  ')}`) : [empty];
}

function nextSteps(view: View): string[] {
  const steps: string[] = [];
  if (view.inProgress ?? view.goal) steps.push(`Continue with the user's latest request (${view.inProgress ? 'In Progress' : 'the Goal'} above).`);
  const last = view.commands[view.commands.length - 1];
  if (last && failed(last)) steps.push(`The last command failed: ${commandLine(last)}; see Critical Context.`);
  const plan = view.decisions[view.decisions.length - 1];
  if (plan) steps.push(`The assistant's last stated plan: ${plan}`);
  return steps.length > 0 ? steps.map((step, i) => `${i + 1}. ${step}`) : ['1. (nothing recorded)'];
}

function commandLines(view: View): string[] {
  return [
    ...omittedLine(view.omitted.commands, 'commands'),
    ...view.commands.map((run) => `- ${commandLine(run)}`),
  ];
}

function errorLines(view: View): string[] {
  return [...omittedLine(view.omitted.errors, 'error lines'), ...view.errors.map((line) => `- ${errorLine(line)}`)];
}

function renderHistory(view: View, files: string): string {
  const done = [
    ...omittedLine(view.omitted.done, 'requests'),
    ...view.done.map((request) => `- [x] ${indent(request, '  ')}`),
  ];
  const commands = commandLines(view);
  const critical = [
    ...(view.errors.length > 0 || view.omitted.errors > 0 ? ['Errors seen, oldest first (verbatim):', ...errorLines(view)] : []),
    ...(view.earlier ? [`Earlier summary:\n${view.earlier}`] : []),
  ];
  const sections = [
    `## Goal\n${view.goal ?? '(no user request in the compacted part)'}`,
    ['## Constraints & Preferences', ...omittedLine(view.omitted.constraints, 'constraints'), ...list(view.constraints, '- (none stated)')].join('\n'),
    [
      '## Progress',
      '### Done',
      ...(done.length > 0 ? done : ['- (no earlier request)']),
      ...(commands.length > 0 ? ['Commands run, oldest first (outcome of the last run):', ...commands] : []),
      '',
      '### In Progress',
      view.inProgress ? `- [ ] ${indent(view.inProgress, '  ')}` : view.goal ? '- [ ] The Goal above.' : '- (nothing)',
    ].join('\n'),
    ['## Key Decisions', ...omittedLine(view.omitted.decisions, 'decisions'), ...list(view.decisions, '- (none stated)')].join('\n'),
    ['## Next Steps', ...nextSteps(view)].join('\n'),
    ['## Critical Context', ...(critical.length > 0 ? critical : ['- (none)'])].join('\n'),
  ];
  return files ? `${sections.join('\n\n')}\n\n${files}` : sections.join('\n\n');
}

function renderTurnPrefix(view: View): string {
  const commands = commandLines(view);
  const errors = errorLines(view);
  return [
    `## Request in progress\n${view.goal ?? '(the request came before this part)'}`,
    ...(commands.length > 0 ? [['## Done so far', ...commands].join('\n')] : []),
    ...(errors.length > 0 ? [['## Errors seen (verbatim)', ...errors].join('\n')] : []),
  ].join('\n\n');
}

/** Removes the oldest items of one list until `excess` characters are gone; returns what was removed. */
function dropOldest<T>(items: T[], excess: number, size: (item: T) => number, keep: (item: T) => boolean = () => false): number {
  let removed = 0;
  let count = 0;
  for (let i = 0; i < items.length && removed < excess; ) {
    if (keep(items[i]!)) {
      i++;
      continue;
    }
    removed += size(items[i]!) + 3;
    items.splice(i, 1);
    count++;
  }
  return count;
}

/** The trimming steps, least needed first. Each removes up to `excess` characters and says how many items went. */
/** Counts what a removal dropped into the view's omitted tally and returns it (0: nothing left to drop). */
function omit(view: View, what: Countable, dropped: number): number {
  view.omitted[what] += dropped;
  return dropped;
}

const STEPS: readonly ((view: View, excess: number) => number)[] = [
  (view, excess) => omit(view, 'decisions', dropOldest(view.decisions, excess, (s) => s.length)),
  (view, excess) => omit(view, 'constraints', dropOldest(view.constraints, excess, (s) => s.length)),
  (view, excess) => omit(view, 'commands', dropOldest(view.commands, excess, (r) => commandLine(r).length, failed)),
  (view, excess) => omit(view, 'commands', dropOldest(view.commands, excess, (r) => commandLine(r).length)),
  (view, excess) => omit(view, 'errors', dropOldest(view.errors, excess, (s) => errorLine(s).length)),
  (view) => {
    const had = view.earlier !== null;
    view.earlier = null;
    return had ? 1 : 0;
  },
  (view, excess) => {
    let saved = 0;
    let count = 0;
    view.done = view.done.map((request) => {
      const shortened = `${request.slice(0, SHORTENED_REQUEST_CHARS)}… [shortened for size]`;
      // Only what gets shorter counts, so an already shortened request is left alone.
      if (saved >= excess || shortened.length >= request.length) return request;
      saved += request.length - shortened.length;
      count++;
      return shortened;
    });
    view.shortened += count;
    return count;
  },
  (view, excess) => omit(view, 'done', dropOldest(view.done, excess, (s) => s.length)),
];

/** Renders `view`, trimming it step by step until the text fits `maxChars`; a last resort cuts the text. */
function fit(view: View, render: (view: View) => string, maxChars: number): string {
  let text = render(view);
  let step = 0;
  while (text.length > maxChars && step < STEPS.length) {
    if (STEPS[step]!(view, text.length - maxChars) === 0) step++;
    text = render(view);
  }
  if (text.length <= maxChars) return text;
  const note = '\n[… checkpoint cut to its size budget]';
  return `${text.slice(0, Math.max(0, maxChars - note.length))}${note}`;
}

export interface Checkpoint {
  readonly summary: string;
  readonly turnPrefixSummary: string | null;
}

/**
 * The checkpoint for the history (the merged state) and, for a split turn, the turn prefix's
 * own summary; both together within `maxTokens` (characters / 4).
 */
export function renderCheckpoint(history: ExtractState, turnPrefix: ExtractState | null, files: string, maxTokens: number): Checkpoint {
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  const turnPrefixSummary = turnPrefix
    ? fit(viewOf(turnPrefix, false), renderTurnPrefix, Math.floor(maxChars / TURN_PREFIX_SHARE))
    : null;
  const summary = fit(viewOf(history, true), (view) => renderHistory(view, files), maxChars - (turnPrefixSummary?.length ?? 0));
  return { summary, turnPrefixSummary };
}
