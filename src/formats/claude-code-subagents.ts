/**
 * Claude Code's subagent transcripts: which files beside a session hold its subagents' calls,
 * and which session a transcript belongs to. 2.1.x writes them to
 * `<project>/<sessionId>/subagents/agent-*.jsonl`, 2.0.x to `<project>/agent-*.jsonl` whose
 * lines name the session's `sessionId`; every chat line in them is on a sidechain. Among them
 * `agent-acompact-*` is the call Claude Code made to write a compaction summary.
 *
 * Their calls are the session's spend, not its context: claude-code.ts reads them with the
 * session, and a walk that meets them beside their session leaves them to it (pipeline/inputs.ts)
 * and hands them to its read (formats/companions.ts). This file only finds them.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { SpendCause } from '../session/model.js';
import { asRecord } from './convert.js';
import { peekJsonLines } from './json/jsonl-lines.js';

/** `agent-<hex id>.jsonl`, or `agent-<kind>-<hex id>.jsonl` (`acompact`, `aside_question`). */
const SUBAGENT_FILE = /^agent-(?:[a-z_]+-)?[0-9a-f]{6,}\.jsonl$/;
const COMPACTION_FILE = /^agent-acompact-/;
const SUBAGENTS_FOLDER = 'subagents';
/**
 * Lines and bytes read to learn whether a file beside a session is a 2.0.x transcript, and whose:
 * what a walk sniffs of each file (formats/index.ts), so both take a file for the same thing.
 */
const HEAD_LINES = 20;
const HEAD_BYTES = 256 << 10;

/** Every chat line among a file's first ones is on a sidechain: a subagent's own transcript. */
function looksLikeSubagentTranscript(firstLines: readonly unknown[]): boolean {
  const chat = firstLines.map(asRecord).filter((line) => line?.['type'] === 'user' || line?.['type'] === 'assistant');
  return chat.length > 0 && chat.every((line) => line?.['isSidechain'] === true);
}

/** The `sessionId` the first lines name. */
function sessionIdOf(firstLines: readonly unknown[]): string | null {
  for (const line of firstLines) {
    const id = asRecord(line)?.['sessionId'];
    if (typeof id === 'string' && id !== '') return id;
  }
  return null;
}

/** A subagent transcript, and the session file it belongs to (which may not exist; null: unknown). */
export interface Transcript {
  readonly parent: string | null;
}

/**
 * Whether a file is a subagent transcript, and whose. Any `agent-*.jsonl` in a
 * `<project>/<id>/subagents/` folder is `<project>/<id>.jsonl`'s: its place says so, whatever its
 * lines. One elsewhere is a transcript when every chat line among its first ones is on a
 * sidechain, and belongs to the session their `sessionId` names beside it. The first lines are
 * asked for only then.
 */
export function subagentTranscript(path: string, head: () => readonly unknown[]): Transcript | null {
  if (!SUBAGENT_FILE.test(basename(path))) return null;
  const folder = dirname(path);
  if (basename(folder) === SUBAGENTS_FOLDER) return { parent: `${dirname(folder)}.jsonl` };
  const firstLines = head();
  if (!looksLikeSubagentTranscript(firstLines)) return null;
  const id = sessionIdOf(firstLines);
  return { parent: id === null ? null : join(folder, `${id}.jsonl`) };
}

function listDirectory(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/** The first lines of a file, or none when it cannot be read. */
export function headOf(path: string): readonly unknown[] {
  try {
    return peekJsonLines(path, HEAD_LINES, HEAD_BYTES).values;
  } catch {
    return [];
  }
}

/** What a project folder holds, read once per folder. */
interface ProjectFolder {
  /** Every name in the folder: a session's own folder of transcripts is listed only when its name is here. */
  readonly names: ReadonlySet<string>;
  /** The 2.0.x transcripts by the name of the session file they belong to. */
  readonly bySession: ReadonlyMap<string, readonly string[]>;
}

function readProjectFolder(folder: string): ProjectFolder {
  const names = listDirectory(folder);
  const bySession = new Map<string, string[]>();
  for (const name of names.filter((entry) => SUBAGENT_FILE.test(entry))) {
    const path = join(folder, name);
    const parent = subagentTranscript(path, () => headOf(path))?.parent;
    if (!parent) continue;
    const session = basename(parent);
    const paths = bySession.get(session);
    if (paths) paths.push(path);
    else bySession.set(session, [path]);
  }
  return { names: new Set(names), bySession };
}

/**
 * The project folders one run has looked into, each read once: a folder of many sessions would
 * otherwise have its transcripts' first lines read once per session, and each session's own
 * folder looked for (a failed listing, most sessions having none, was about 3% of `estimate` on
 * real sessions). Made by the walk (formats/companions.ts), which hands each session its
 * transcripts; it lives as long as the walk.
 */
export class ProjectFolders {
  private readonly folders = new Map<string, ProjectFolder>();

  /**
   * The subagent transcripts of the session at `path` (named `<sessionId>.jsonl`), sorted: the
   * files subagentTranscript says belong to it.
   */
  transcriptsOf(path: string): string[] {
    const folder = dirname(path);
    let project = this.folders.get(folder);
    if (!project) this.folders.set(folder, (project = readProjectFolder(folder)));
    const own = basename(path).replace(/\.jsonl$/, '');
    const nested = join(folder, own, SUBAGENTS_FOLDER);
    const files = [
      ...(project.names.has(own) ? listDirectory(nested) : [])
        .filter((name) => SUBAGENT_FILE.test(name))
        .map((name) => join(nested, name)),
      ...(project.bySession.get(basename(path)) ?? []),
    ];
    return files.filter((file) => file !== path).sort();
  }
}

/** The subagent transcripts of one session, its folder read for it alone (a read the walk did not hand them to). */
export function subagentTranscriptsOf(path: string): string[] {
  return new ProjectFolders().transcriptsOf(path);
}

/** Why a transcript's calls are not the session's context. */
export function transcriptCause(path: string): SpendCause {
  return COMPACTION_FILE.test(basename(path)) ? 'compaction' : 'subagent';
}
