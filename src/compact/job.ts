/**
 * What compacting one session is asked to do, and what it came to, as plain data (no command-line
 * types). The job is built once by a command from its flags and settings, or by the library from
 * its options, and used as it is on this thread and as a worker's payload (it crosses threads by
 * structured clone). The things a run holds that are not data (the built strategy, the token
 * counter, the signal) travel beside it as CompactTools, down into the run and never back up.
 * The outcome has one variant per status, each with its own fields, and the warnings the read
 * found and the compaction events (pipeline/log.ts) as fields of its own. Commands and the library
 * print or return it (render.ts turns it into a line or a JSON record); a worker sends it back
 * whole.
 */
import type { CompactionPolicy } from '../compaction/policy.js';
import type { CompactionState, SummarizerUsage } from '../compaction/state.js';
import type { CompactionStrategy } from '../compaction/strategy.js';
import type { PolicyValues } from '../config/policy.js';
import type { OnError } from '../config/settings.js';
import type { ForkNoGain, ForkResult } from '../fork/index.js';
import type { LogEvent } from '../pipeline/log.js';
import type { ContextWindow, WindowSource } from '../pricing/window.js';
import type { Diagnostic } from '../session/model.js';
import type { LockHolder } from '../sidecar/lock.js';
import type { StrategyName, StrategyOptions } from '../strategies/index.js';
import type { TextCounter } from '../tokens/estimate.js';
import type { TokenizerName } from '../tokens/tokenizers.js';

/**
 * The policy a session is planned with: the settings, taken at each session's own window
 * (pricing/window.ts) unless they name one; or one policy at one window for every session.
 */
export type PolicyChoice =
  | { readonly kind: 'settings'; readonly values: PolicyValues }
  | { readonly kind: 'fixed'; readonly policy: CompactionPolicy; readonly window: ContextWindow };

export interface CompactJob {
  /** A format name, or `auto`. */
  readonly format: string;
  readonly tokenizer: TokenizerName;
  /** `--strict`: any warning fails the session. */
  readonly strict: boolean;
  readonly policy: PolicyChoice;
  /** Decide and report, write nothing. */
  readonly dryRun: boolean;
  /** Mask secrets in what is summarized and stored. */
  readonly redact: boolean;
  /** The relevance filter on the span a strategy summarizes (compaction/relevance.ts); `--no-relevance` switches it off. */
  readonly relevance: boolean;
  readonly strategy: StrategyName;
  /** The offline strategies' options (a summarizer's live client is built into CompactTools.strategy). */
  readonly strategyOptions: StrategyOptions;
  /** What a failed summarizer leaves: the session failed, skipped, or a truncate sidecar. */
  readonly onError: OnError;
}

/** What a run holds beside the job: built once per run, handed down, never called back up. */
export interface CompactTools {
  readonly strategy: CompactionStrategy;
  readonly count: TextCounter | undefined;
  /** Aborted on SIGINT/SIGTERM: the session in flight is abandoned. */
  readonly signal: AbortSignal;
}

/** Offline strategies: no client, so they can run in a worker. */
export type OfflineStrategyName = Exclude<StrategyName, 'summarize'>;

export function isOffline(name: StrategyName): name is OfflineStrategyName {
  return name !== 'summarize';
}

/** What the read and the plan measured, common to every outcome of a session that was read. */
export interface Measured {
  readonly session: string;
  /** The strategy the run was set up with (a fallback's is the state's). */
  readonly strategy: string;
  readonly dryRun: boolean;
  /** The context's tokens as the session stands (with the previous sidecar, if fresh). */
  readonly tokensBefore: number;
  readonly contextWindow: number;
  readonly contextWindowSource: WindowSource;
}

/** What a session's run leaves to be printed with its outcome. */
export interface Carried {
  readonly warnings: readonly Diagnostic[];
  readonly events: readonly LogEvent[];
}

/** A compaction that ran and was not written: what it would have left. */
export interface Tried {
  readonly tokensAfter: number;
  readonly firstKeptMessageId: string;
  /** A refused summary was still paid for. */
  readonly usage: SummarizerUsage | null;
}

export type CompactOutcome = Carried &
  (
    | {
        /** Another compactor process holds the session's sidecar lock; this run left it alone. */
        readonly status: 'locked';
        readonly session: string;
        readonly lock: string;
        /** Null when the lock file cannot be read. */
        readonly holder: LockHolder | null;
      }
    | (Measured & {
        /** Nothing to do now (under the trigger, nothing to cut), or the summarizer failed under --on-error skip. */
        readonly status: 'skipped';
        readonly reason: string;
        /** The summarizer's error that --on-error skip turned into this skip, or null. */
        readonly absorbed: string | null;
      })
    | (Measured & {
        /** The sidecar still covers the session. */
        readonly status: 'up-to-date';
        readonly reason: string;
      })
    | (Measured & {
        /**
         * `no-gain`: the compaction would not shrink the context; `would-thrash`: it would leave
         * the context over the trigger. Neither writes a sidecar, and neither is a failure.
         */
        readonly status: 'no-gain' | 'would-thrash';
        readonly reason: string;
        /** Null when no compaction was run (the plan found no cut that gets under the trigger). */
        readonly tried: Tried | null;
      })
    | (Measured & {
        /** A dry run (or a session read from stdin) that would be compacted: the plan, nothing run. */
        readonly status: 'would-compact';
        readonly firstKeptMessageId: string;
        readonly messagesSummarized: number;
        /**
         * The plan's estimate of the context after: tokensBefore less the messages the cut
         * summarizes. The summary that replaces them is measured only when the compaction runs.
         */
        readonly tokensAfter: number;
      })
    | (Measured & {
        readonly status: 'compacted';
        /** The sidecar's path, written. */
        readonly sidecar: string;
        readonly state: CompactionState;
        readonly redacted: boolean;
        /** The summarizer's error that --on-error truncate answered with this fallback, or null. */
        readonly absorbed: string | null;
      })
    | {
        readonly status: 'failed';
        readonly session: string;
        /** One line, located where it can be (`path:line: message`). */
        readonly error: string;
        /** An error every other session would meet too (a rejected key), or the run was interrupted. */
        readonly stopsRun: boolean;
      }
  );

export type CompactStatus = CompactOutcome['status'];

/** The outcome of each status. */
export type OutcomeOf<S extends CompactStatus> = Extract<CompactOutcome, { readonly status: S }>;

/** What forking a session came to (fork.ts). */
export type ForkOutcome =
  | (Carried & {
      readonly status: 'forked';
      readonly fork: ForkResult;
      /** The compaction the fork applies: written now, or the sidecar already up to date. */
      readonly compaction: OutcomeOf<'compacted' | 'up-to-date'>;
    })
  | (Carried & {
      /** Compacted, but a fork would not make the agent's request smaller: no file written. */
      readonly status: 'no-gain';
      readonly fork: ForkNoGain;
      readonly compaction: OutcomeOf<'compacted' | 'up-to-date'>;
    })
  | (Carried & {
      /** Nothing to fork: the session was not compacted (skipped, no gain, held by another compactor…). */
      readonly status: 'not-forked';
      readonly compaction: Exclude<CompactOutcome, { status: 'compacted' | 'up-to-date' | 'failed' }>;
    })
  | OutcomeOf<'failed'>;
