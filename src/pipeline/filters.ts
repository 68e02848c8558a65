/**
 * `--since`, `--until`, `--timezone` and `--project`: which sessions a run keeps
 * (docs/guarantees.md "Filters"). Parsing and checking the flags, and matching a project, are pure;
 * `selectSessionTask` reads a session (in a worker for many) to say whether the filter keeps it:
 * a session is kept when its project matches and at least one of its calls was made in the days
 * asked for. Which of a kept session's calls count is the command's (inspect's spend and roll-up
 * keep only the calls in range: ledgers/rollup.ts SpendByDay).
 */
import { basename, dirname } from 'node:path';
import { createRequire } from 'node:module';
import type Picomatch from 'picomatch';
import { UsageError } from '../errors.js';
import type { DayRange, DayRule } from '../ledgers/rollup.js';
import { DayReader, inDayRange, startDay } from '../ledgers/rollup.js';
import type { SessionInput } from '../read/input.js';
import { loadSession } from '../read/index.js';
import type { AnyMessage, Session } from '../session/model.js';
import { sessionTask } from '../workers/task.js';

/** What the filter flags ask for, checked. */
export interface SessionFilter {
  /** The zone days are in: `--timezone`, else the local zone. */
  readonly zone: string;
  /** `--since`/`--until`; null when neither is given. */
  readonly days: DayRange | null;
  /** `--project`; null when not given. */
  readonly project: string | null;
}

/** The filter flags as yargs hands them over. */
export interface FilterArgs {
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly timezone?: string | undefined;
  readonly project?: string | undefined;
}

/** A calendar day as `YYYY-MM-DD` (or ccusage's `YYYYMMDD`), checked to exist (no 02-30); returned as `YYYY-MM-DD`. */
function parseDay(flag: string, text: string): string {
  const match = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text.trim());
  const day = match ? `${match[1]}-${match[2]}-${match[3]}` : '';
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!match || !date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== day) throw new UsageError(`--${flag} must be a day as YYYY-MM-DD, got ${JSON.stringify(text)}`);
  return day;
}

/** The zone named (checked by the runtime's own list), else the local one. */
function parseZone(text: string | undefined): string {
  if (text === undefined) return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: text.trim() }).resolvedOptions().timeZone;
  } catch {
    throw new UsageError(`--timezone must be a time zone name such as UTC or Europe/Paris, got ${JSON.stringify(text)}`);
  }
}

/** The filter flags, checked: a bad day or zone, or --since after --until, is a usage error. */
export function parseFilter(args: FilterArgs): SessionFilter {
  const since = args.since === undefined ? null : parseDay('since', args.since);
  const until = args.until === undefined ? null : parseDay('until', args.until);
  if (since !== null && until !== null && since > until) throw new UsageError(`--since ${since} is after --until ${until}: no day is in between`);
  const project = args.project === undefined ? null : args.project.trim();
  if (project === '') throw new UsageError('--project must name some text or a glob, got ""');
  const days = since === null && until === null ? null : { since, until };
  // The zone matters only with a day or --timezone (dayRule); asking the runtime for the local
  // zone starts ICU's time-zone data, about 11 ms of a small session's whole run.
  const zone = days === null && args.timezone === undefined ? 'UTC' : parseZone(args.timezone);
  return { zone, days, project };
}

/** Does the filter leave some session out? */
export function filters(filter: SessionFilter): boolean {
  return filter.days !== null || filter.project !== null;
}

/**
 * How a command's spend dates its calls: in the filter's zone when `--timezone` or a day
 * is given, else in UTC (the roll-up's day without them), keeping the days asked for.
 */
export function dayRule(filter: SessionFilter, args: FilterArgs): DayRule {
  const zoned = args.timezone !== undefined || filter.days !== null;
  return { zone: zoned ? filter.zone : 'UTC', range: filter.days };
}

/**
 * The text a session's project is matched against: the project the file names (Codex's and
 * pi's cwd, Gemini CLI's project hash, opencode's directory), else the name of the folder the
 * session is stored in (Claude Code's project folder, `-home-me-src-app`).
 */
export function projectName(session: Pick<Session, 'path' | 'project'>): string {
  return session.project ?? basename(dirname(session.path));
}

/** picomatch is loaded when `--project` is matched, not at every command's start-up. */
const require = createRequire(import.meta.url);

/**
 * Does `--project` keep this project? Text: when the project contains it. A glob (picomatch's:
 * `*`, `**`, `?`, `[…]`, braces): when it matches the whole project or its last path segment.
 */
export function projectMatches(project: string, wanted: string): boolean {
  const picomatch = require('picomatch') as typeof Picomatch;
  if (!picomatch.scan(wanted).isGlob) return project.includes(wanted);
  const matches = picomatch(wanted, { dot: true });
  return matches(project) || matches(basename(project));
}

/** Does the session have a call (an assistant message, or an off-context call) on a day in the range? */
function hasCallIn(session: Session<AnyMessage>, range: DayRange, zone: string): boolean {
  const days = new DayReader(zone);
  const started = startDay(session, days);
  for (const message of session.messages) {
    if (message.role !== 'assistant') continue;
    if (inDayRange(days.day(message.timestamp) ?? started, range)) return true;
  }
  return session.offContext.some((call) => inDayRange(days.day(call.timestamp) ?? started, range));
}

/**
 * Does `--project` keep the session? Claude Code names its project folders after the path with
 * every character but letters and digits made `-` (`/home/me/app` → `-home-me-app`), so a
 * path given for such a folder is matched as Claude Code writes it too.
 */
function keepsProject(session: Pick<Session, 'path' | 'project'>, wanted: string): boolean {
  const project = projectName(session);
  if (projectMatches(project, wanted)) return true;
  return session.project === undefined && projectMatches(project, wanted.replace(/[^A-Za-z0-9*?[\]!-]/g, '-'));
}

/**
 * Whether the filter keeps a session, known from its path and sniffed format alone, or null
 * when the session must be read to know: `--project` alone on a Claude Code session, whose
 * project is its folder (its file names none).
 */
export function keepsUnread(input: SessionInput, filter: SessionFilter): boolean | null {
  if (filter.days !== null || filter.project === null || input.sniffed?.format !== 'claude-code') return null;
  return keepsProject({ path: input.path }, filter.project);
}

/** Does the filter keep this session? */
export function keepsSession(session: Session<AnyMessage>, filter: SessionFilter): boolean {
  if (filter.project !== null && !keepsProject(session, filter.project)) return false;
  return filter.days === null || hasCallIn(session, filter.days, filter.zone);
}

export interface SelectOptions {
  readonly format: string;
  readonly filter: SessionFilter;
}

/**
 * Whether the filter keeps a session (runs in a worker thread for many). A session that cannot
 * be read is kept: its command's own read then fails it with its one-line error.
 */
export const selectSessionTask = sessionTask('select', async (input: SessionInput, options: SelectOptions): Promise<boolean> => {
  try {
    const loaded = await loadSession(input, { format: options.format, messages: 'lean' });
    return keepsSession(loaded.session, options.filter);
  } catch {
    return true;
  }
});
