/**
 * The files beside a session whose calls are its spend: Claude Code's subagent transcripts
 * (claude-code-subagents.ts) and Codex's review rollouts (codex-reviews.ts). A walk finds them
 * once per folder and hands them to each session's read as data (SessionInput.companions, like
 * the format it sniffed), so no table of folders outlives the walk, and a worker thread reading
 * the session does not look again. A read not handed them finds its own.
 */
import { isStdin } from './json/input-source.js';
import { parseStoreAddress } from './store-address.js';
import { ProjectFolders } from './claude-code-subagents.js';
import { RolloutFolders } from './codex-reviews.js';
import type { Companions } from './reader.js';

/** The folders one walk has looked into: what each holds is read once, however many sessions it holds. */
export class SessionFolders {
  readonly projects = new ProjectFolders();
  readonly rollouts = new RolloutFolders();

  /** What the session at `path` counts beside it; undefined for what is no file in a folder (stdin, a store's session). */
  companionsOf(path: string): Companions | undefined {
    if (isStdin(path) || parseStoreAddress(path) !== null) return undefined;
    return { subagentTranscripts: this.projects.transcriptsOf(path), reviewRollouts: this.rollouts.reviewRolloutsOf(path) };
  }
}
