/**
 * Growth attribution in `--json` output (inspect's record): what each turn added by kind and by
 * tool, the tools whose outputs fill the context, the heaviest outputs and the files read again.
 * Pure; README "inspect --json" names each field.
 */
import type { GrowthReport, TurnGrowth } from './attribution.js';

/** The growth fields of one turn's record (zeros and null for a turn the attribution has not). */
export function turnGrowthJson(turn: TurnGrowth | undefined) {
  const added = turn?.added;
  return {
    added_tokens: turn?.total ?? 0,
    added: added && {
      user_text: added.userText,
      assistant_text: added.assistantText,
      thinking: added.thinking,
      tool_calls: added.toolCalls,
      tool_results: added.toolResults,
      system: added.system,
    },
    tool_results: Object.fromEntries((turn?.toolResults ?? []).map((entry) => [entry.tool, entry.tokens])),
  };
}

/** The session-wide growth fields, lists cut to `top` entries. */
export function growthJson(growth: GrowthReport, top: number) {
  return {
    tools: growth.tools.map((tool) => ({ tool: tool.tool, results: tool.results, tokens: tool.tokens })),
    largest_tool_outputs: growth.outputs.slice(0, top).map((output) => ({
      turn: output.turn,
      message_id: output.messageId,
      tool: output.tool,
      target: output.target,
      tokens: output.tokens,
      calls_after: output.callsAfter,
      resent_tokens: output.carried,
    })),
    repeated_reads: growth.repeatedReads.slice(0, top).map((read) => ({ path: read.path, reads: read.reads, tokens: read.tokens, turns: read.turns })),
  };
}
