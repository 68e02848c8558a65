/**
 * The human tables of growth attribution (`inspect`): what each turn added by kind, the tools
 * whose outputs fill the context, the heaviest outputs and the files read more than once.
 * Every table fits 80 columns; long paths and commands are shortened.
 */
import type { GrowthReport } from './attribution.js';
import { fitPath, formatPercent, formatTokens } from '../report/format.js';
import { renderTable } from '../report/table.js';

/** Shortens a command or path to `width` columns, on one line. */
function fitTarget(target: string, width: number): string {
  return fitPath(target.replace(/\s+/g, ' ').trim(), width);
}

/** Turns a per-turn text table lists without --all (the JSON record has every turn). */
export const TURN_ROWS = 100;

/** The line under a table cut to its first rows. */
export function moreTurnsLine(hidden: number): string[] {
  return hidden > 0 ? [`  … ${formatTokens(hidden)} more turn${hidden === 1 ? '' : 's'} (--all shows every row)`] : [];
}

function turnsTable(report: GrowthReport, all: boolean): string {
  const shown = all ? report.turns : report.turns.slice(0, TURN_ROWS);
  const rows = shown.map((turn) => {
    const top = turn.toolResults[0];
    const share = top && turn.total > 0 ? `${fitTarget(top.tool, 12)} ${Math.round((top.tokens / turn.total) * 100)}%` : '';
    return [
      String(turn.turn),
      formatTokens(turn.total),
      formatTokens(turn.added.userText + turn.added.system),
      formatTokens(turn.added.assistantText),
      formatTokens(turn.added.thinking),
      formatTokens(turn.added.toolCalls),
      formatTokens(turn.added.toolResults),
      share,
    ];
  });
  const table = renderTable(
    [
      { header: 'turn' },
      { header: 'added' },
      { header: 'user' },
      { header: 'assistant' },
      { header: 'thinking' },
      { header: 'calls' },
      { header: 'results' },
      { header: 'largest', align: 'left' },
    ],
    rows,
  );
  return [table, ...moreTurnsLine(report.turns.length - shown.length)].join('\n');
}

function toolsTable(report: GrowthReport): string {
  const all = report.tools.reduce((sum, tool) => sum + tool.tokens, 0);
  const rows = report.tools.map((tool) => [fitTarget(tool.tool, 30), formatTokens(tool.results), formatTokens(tool.tokens), formatPercent(all > 0 ? tool.tokens / all : 0)]);
  return renderTable([{ header: 'tool', align: 'left' }, { header: 'results' }, { header: 'tokens' }, { header: 'share' }], rows);
}

function outputsTable(report: GrowthReport, top: number): string {
  const rows = report.outputs
    .slice(0, top)
    .map((output) => [String(output.turn), fitTarget(output.tool, 12), formatTokens(output.tokens), formatTokens(output.carried), fitTarget(output.target, 34)]);
  return renderTable(
    [{ header: 'turn' }, { header: 'tool', align: 'left' }, { header: 'tokens' }, { header: 're-sent' }, { header: 'path / command', align: 'left' }],
    rows,
  );
}

function readsTable(report: GrowthReport, top: number): string {
  const rows = report.repeatedReads
    .slice(0, top)
    .map((read) => [fitTarget(read.path, 44), formatTokens(read.reads), formatTokens(read.tokens), fitTarget(read.turns.join(','), 12)]);
  return renderTable([{ header: 'file', align: 'left' }, { header: 'reads' }, { header: 'tokens' }, { header: 'turns', align: 'left' }], rows);
}

/** `all`: every turn (--all); otherwise the first TURN_ROWS. */
export function renderGrowth(report: GrowthReport, top: number, all = false): string {
  const sections = [`what each turn added (estimated tokens; largest: the tool that added most)\n${turnsTable(report, all)}`];
  if (report.tools.length > 0) sections.push(`tool results by tool\n${toolsTable(report)}`);
  if (report.outputs.length > 0) {
    sections.push(`largest tool outputs (re-sent = tokens x the later calls that carried them)\n${outputsTable(report, top)}`);
  }
  sections.push(
    report.repeatedReads.length > 0 ? `files read more than once\n${readsTable(report, top)}` : 'files read more than once: none',
  );
  return sections.join('\n\n');
}
