/**
 * `compactor audit`: what each compaction lost. Audits the session's sidecar and the
 * compactions its agent recorded; `--strategy a,b` also replays the session under the policy
 * with each strategy and audits every compaction that makes (src/audit/fidelity.ts).
 */
import type { CommandModule } from 'yargs';
import type { AuditedCompaction, StrategyRetention } from '../audit/compactions.js';
import { auditRecorded, auditReplay, auditSidecar, retentionByStrategy } from '../audit/compactions.js';
import { replayCompactions, replaySession } from '../replay/simulate.js';
import { FACT_KINDS } from '../compaction/facts.js';
import type { MetadataStrategy } from '../compaction/strategy.js';
import { readsOnlyStructure } from '../compaction/strategy.js';
import { UsageError } from '../errors.js';
import { formatPercent, formatTokens, titleLine } from '../report/format.js';
import { renderTable } from '../report/table.js';
import type { StrategyName } from '../strategies/index.js';
import { createStrategy, STRATEGY_NAMES } from '../strategies/index.js';
import { runBatch } from '../pipeline/batch.js';
import type { LoadedSession, SessionInput } from '../read/index.js';
import type { AnyMessage } from '../session/model.js';
import type { SimulatedRun } from '../audit/simulated.js';
import { prefixFacts } from '../audit/simulated.js';
import { loadSession } from '../read/index.js';
import { heldSubject, loadPrevious, sidecarReading } from '../sidecar/previous.js';
import type { CommonArgs, PolicyArgs, SummaryBudgetArgs } from './options.js';
import { runSettings, strategyOptionsFromArgs, wholeNumber, withInputs, withPolicy, withSummaryBudget } from './options.js';
import { sessionWindow } from '../pricing/window.js';
import { runSessionCommand } from '../pipeline/session-command.js';
import { auditInTwoReads } from '../pipeline/audit-session.js';
import { policyFor, policyJson } from '../config/policy.js';

type AuditArgs = CommonArgs &
  PolicyArgs &
  SummaryBudgetArgs & {
    /** Not the strategy setting: the strategies to simulate, a list. */
    strategy?: string | string[];
    'show-missing': number;
  };

/** Width of a missing fact's text in human output (80 columns with its indent and kind). */
const MISSING_TEXT_WIDTH = 64;

/** `--strategy a,b` or `--strategy a --strategy b`. */
function parseStrategies(values: string | readonly string[] | undefined): StrategyName[] {
  const names = (typeof values === 'string' ? [values] : (values ?? []))
    .flatMap((value) => value.split(',')).map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(STRATEGY_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(`--strategy: unknown strategy ${JSON.stringify(name)} (known: ${STRATEGY_NAMES.join(', ')})`);
    }
  }
  return [...new Set(names)] as StrategyName[];
}

function label(audit: AuditedCompaction): string {
  if (audit.source === 'sidecar') return `sidecar ${audit.strategy}`;
  return `${audit.strategy} ${audit.number}`;
}

function compactionJson(audit: AuditedCompaction) {
  const { report } = audit;
  return {
    source: audit.source,
    strategy: audit.strategy,
    number: audit.number,
    first_kept_index: audit.firstKeptIndex,
    first_kept_message_id: audit.firstKeptMessageId,
    end_index: audit.endIndex,
    tokens_before: audit.tokensBefore,
    tokens_after: audit.tokensAfter,
    summary_tokens: audit.summaryTokens,
    retention: report.retention,
    facts: Object.fromEntries(FACT_KINDS.map((kind) => [kind, { ...report.counts[kind] }])),
    missing: report.missing.map((fact) => ({ kind: fact.kind, text: fact.text, message_id: fact.messageId })),
  };
}

function strategyJson(line: StrategyRetention) {
  return {
    strategy: line.strategy,
    compactions: line.compactions,
    retention: line.retention,
    lowest_retention: line.lowest,
    directives_found: line.directivesFound,
    directives_kept: line.directivesKept,
  };
}

const oneLine = (text: string, width: number) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
};

function humanReport(path: string, format: string, messages: number, audits: readonly AuditedCompaction[], lines: readonly StrategyRetention[], showMissing: number): string {
  const out = [titleLine(path, `${format}, ${formatTokens(messages)} messages`)];
  if (audits.length === 0) {
    out.push('  no compactions: no sidecar, none recorded, none simulated under this policy');
    return `${out.join('\n')}\n`;
  }
  const rows = audits.map((audit) => [
    label(audit),
    formatTokens(audit.firstKeptIndex),
    ...FACT_KINDS.map((kind) => `${audit.report.counts[kind].kept}/${audit.report.counts[kind].found}`),
    audit.tokensAfter === null ? '-' : formatTokens(audit.tokensAfter),
    formatPercent(audit.report.retention),
  ]);
  out.push(
    renderTable(
      [
        { header: 'compaction', align: 'left' },
        { header: 'cut' },
        { header: 'files' },
        { header: 'commands' },
        { header: 'errors' },
        { header: 'directives' },
        { header: 'after' },
        { header: 'kept' },
      ],
      rows,
    ),
  );
  for (const line of lines) {
    const directives = line.directivesKept === line.directivesFound ? 'every directive kept' : `${line.directivesKept}/${line.directivesFound} directives kept`;
    out.push(
      line.compactions === 0
        ? `${line.strategy}: no compaction under this policy`
        : `${line.strategy}: ${formatPercent(line.retention)} kept over ${line.compactions} compaction${line.compactions === 1 ? '' : 's'} (lowest ${formatPercent(line.lowest)}), ${directives}`,
    );
  }
  // The latest compaction of each strategy is what the model sees now; --json lists every one's.
  const latest = audits.filter((audit, i) => !audits.slice(i + 1).some((later) => later.source === audit.source && later.strategy === audit.strategy));
  for (const audit of latest) {
    const missing = audit.report.missing;
    if (missing.length === 0 || showMissing === 0) continue;
    out.push(`missing after ${label(audit)}:`);
    for (const fact of missing.slice(0, showMissing)) out.push(`  ${fact.kind.padEnd(10)} ${oneLine(fact.text, MISSING_TEXT_WIDTH)}`);
    if (missing.length > showMissing) out.push(`  … and ${missing.length - showMissing} more (--json lists them all)`);
  }
  return `${out.join('\n')}\n`;
}

export const auditCommand: CommandModule<object, AuditArgs> = {
  command: 'audit [inputs..]',
  describe: 'Measure what compactions lost: files, commands, errors and user directives kept',
  builder: (yargs) =>
    withSummaryBudget(withPolicy(withInputs(yargs, 'audit')))
      .option('strategy', {
        describe: `also simulate these strategies (comma-separated: ${STRATEGY_NAMES.join(', ')}) under the policy`,
        type: 'string',
      })
      .option('show-missing', { describe: 'missing facts listed for the latest compaction of each strategy', type: 'number', default: 5 }),
  handler: async (args) => {
    const settings = await runSettings(args, 'audit');
    // Validated here rather than in a yargs coerce, which would turn the UsageError into exit 1.
    const strategies = parseStrategies(args.strategy).map((name) => createStrategy(name, strategyOptionsFromArgs(args)));
    const showMissing = wholeNumber('show-missing', args['show-missing'], 0);
    // The policy at the window the session ran with, as every command takes it.
    const policyOf = async (loaded: LoadedSession<AnyMessage>) =>
      policyFor(settings.policy, (await sessionWindow(loaded.session, { flag: settings.policy.context_limit ?? undefined })).tokens);
    // Strategies that read no text (or none asked for) replay on the lean read's slim messages, as `replay` does.
    const leanStrategies: readonly MetadataStrategy[] | null = strategies.every(readsOnlyStructure) ? strategies : null;
    const names = strategies.map((strategy) => strategy.name);
    // The strategies replayed on the lean read, for an audit in two reads.
    const replays = async (loaded: LoadedSession<AnyMessage>, sessionName: string, lean: readonly MetadataStrategy[]) => {
      const { messages } = loaded.session;
      const policy = await policyOf(loaded);
      const runs: SimulatedRun[] = [];
      for (const strategy of lean) {
        const compactions = await replayCompactions({ read: 'lean', sessionName, messages, tokens: loaded.tokens, policy, strategy });
        runs.push({ strategy: strategy.name, compactions });
      }
      return runs;
    };
    const auditOne = async (input: SessionInput) => {
      // What is audited is taken as the session is read again (no full messages held).
      const streamed = leanStrategies
        ? await auditInTwoReads(input, args.format, undefined, leanStrategies.length === 0 ? null : (loaded, sessionName) => replays(loaded, sessionName, leanStrategies))
        : null;
      if (streamed) {
        const { loaded, audits, warnings } = streamed;
        const policy = await policyOf(loaded);
        return { loaded, policy, audits, lines: retentionByStrategy(audits, names), warnings };
      }
      const state = await loadPrevious(input.path);
      const loaded = await loadSession(input, { format: args.format, sidecar: sidecarReading(state) });
      const { subject, warnings } = heldSubject(input.path, loaded, state);
      const { messages } = loaded.session;
      const policy = await policyOf(loaded);
      const audits: AuditedCompaction[] = [];
      const previous = subject.previous;
      if (previous) audits.push(auditSidecar(messages, previous.state, previous.firstKeptIndex));
      audits.push(...auditRecorded(loaded.session));
      // Every strategy's compactions take a prefix of the same facts.
      const facts = strategies.length > 0 ? prefixFacts(messages) : null;
      for (const strategy of strategies) {
        const result = await replaySession({ sessionName: subject.sessionName, messages, tokens: loaded.tokens, policy, strategy });
        audits.push(...auditReplay(messages, result, strategy.name, facts));
      }
      return { loaded, policy, audits, lines: retentionByStrategy(audits, names), warnings };
    };

    await runSessionCommand<Awaited<ReturnType<typeof auditOne>>>(args, { progress: true }, (output) => ({
      run: (paths, emit) => runBatch(paths, auditOne, emit),
      print: (path, { loaded, policy, audits, lines }) => {
        const record = {
          session: path,
          format: loaded.session.format,
          messages: loaded.session.messages.length,
          ...(strategies.length > 0 ? { policy: policyJson(policy) } : {}),
          compactions: audits.map(compactionJson),
          strategies: lines.map(strategyJson),
        };
        output.record(record, () =>
          humanReport(path, loaded.session.format, loaded.session.messages.length, audits, lines, showMissing),
        );
      },
    }));
  },
};
