/**
 * Loading a session for a command: read it, estimate its messages, and attach its sidecar
 * when one exists and still matches the session.
 */
import { basename } from 'node:path';
import type { CompactionSubject } from '../compaction/compact.js';
import { livePrevious } from '../compaction/compact.js';
import type { CompactionState } from '../compaction/state.js';
import { InputError } from '../errors.js';
import { readSession } from '../formats/index.js';
import type { Diagnostic, Session } from '../session/model.js';
import { loadSidecar, sidecarPath } from '../sidecar/store.js';
import { checkFreshness } from '../sidecar/staleness.js';
import type { TextCounter } from '../tokens/estimate.js';
import { estimateAll, heuristicCounter } from '../tokens/estimate.js';

export interface LoadedSession {
  readonly session: Session;
  readonly tokens: readonly number[];
  /** The subject the compaction core works on (previous = a fresh sidecar). */
  readonly subject: CompactionSubject;
  /** A sidecar that exists but no longer matches the session (it will be replaced by `compact`). */
  readonly staleSidecar: CompactionState | null;
  readonly warnings: readonly Diagnostic[];
}

export interface LoadOptions {
  readonly format: string;
  readonly count?: TextCounter;
  /** Whether to read the sidecar (commands that report the raw session do not). */
  readonly withSidecar: boolean;
  /** `--strict`: a session with any warning fails, its first warning as the error. */
  readonly strict?: boolean;
}

/** Under --strict the first warning becomes the session's one-line error. */
function failOnWarnings(warnings: readonly Diagnostic[]): void {
  const first = warnings[0];
  if (!first) return;
  const more = warnings.length > 1 ? `, and ${warnings.length - 1} more warning${warnings.length > 2 ? 's' : ''}` : '';
  throw new InputError(`${first.message} (--strict${more})`, first.file, first.line);
}

export async function loadSession(path: string, options: LoadOptions): Promise<LoadedSession> {
  const session = await readSession(path, options.format);
  const tokens = estimateAll(session.messages, options.count ?? heuristicCounter);
  const warnings: Diagnostic[] = [...session.warnings];
  let previous: CompactionSubject['previous'] = null;
  let staleSidecar: CompactionState | null = null;
  if (options.withSidecar) {
    const state = await loadSidecar(path);
    if (state) {
      const freshness = checkFreshness(state, session.messages);
      if (freshness.kind === 'fresh') previous = { state, firstKeptIndex: freshness.firstKeptIndex };
      else {
        staleSidecar = state;
        warnings.push({ file: sidecarPath(path), message: `stale sidecar (${freshness.reason}); compacting from scratch` });
      }
    }
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
    subject,
    staleSidecar,
    warnings,
  };
}
