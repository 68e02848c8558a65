/**
 * Checks that tool calls and tool results pair up, for any format: a result whose call is not
 * earlier in the session (an orphan), a call that never got a result, and a call that reuses the
 * id of a call still waiting for its result (two calls with one id in a message). All are warnings,
 * not errors: the session is still usable, the cut point never starts the kept part at a tool
 * result either way, and views repair both (view-repair.ts). Pure; readers and commands decide
 * what to do with the diagnostics.
 */
import type { AnyMessage, Diagnostic } from './model.js';

export function toolPairingDiagnostics(file: string, messages: readonly AnyMessage[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  /** Calls still waiting for a result, by id, with where they were made. */
  const open = new Map<string, { name: string; line: number; index: number }>();
  const answered = new Set<string>();
  /** How many calls used each id so far: views rename the n-th `<id>@<n>` (view-repair.ts). */
  const uses = new Map<string, number>();
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_request') {
        const earlier = open.get(block.id);
        const use = (uses.get(block.id) ?? 0) + 1;
        uses.set(block.id, use);
        if (earlier) {
          const where = earlier.index === index ? 'in one message' : `before the call on line ${earlier.line} (${earlier.name}) got a result`;
          diagnostics.push({
            file,
            line: message.line,
            message: `tool call id ${JSON.stringify(block.id)} (${block.name}) is used twice ${where}; views answer the first call with a placeholder result and call this one ${JSON.stringify(`${block.id}@${use}`)}`,
          });
        }
        open.set(block.id, { name: block.name, line: message.line, index });
      }
      if (block.type !== 'tool_result') continue;
      const id = block.tool_request_id;
      if (open.delete(id)) answered.add(id);
      else {
        const what = answered.has(id) ? 'a second result for tool call' : 'tool result for';
        const why = answered.has(id) ? '' : ' has no earlier tool call (orphan)';
        diagnostics.push({ file, line: message.line, message: `${what} ${JSON.stringify(id)}${why}; left out of views` });
      }
    }
  });
  const last = messages.length - 1;
  for (const [id, call] of open) {
    // A call in the last message may still be running (a live session): that is normal.
    if (call.index === last) continue;
    diagnostics.push({ file, line: call.line, message: `tool call ${JSON.stringify(id)} (${call.name}) has no result; views add a placeholder result for it` });
  }
  return diagnostics.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}
